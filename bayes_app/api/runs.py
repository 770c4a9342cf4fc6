"""Run routes: start, status, event stream (SSE / NDJSON), cancel."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query
from fastapi.sse import KEEPALIVE_COMMENT, EventSourceResponse, format_sse_event
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from bayes_app.api import schemas
from bayes_app.api.deps import CookieUser, CurrentUser, StrictJSONRoute, media
from bayes_app.api.errors import ApiError
from bayes_app.usecases import runs as app_runs
from bayes_app.usecases import schemas as R
from bayes_app.usecases.schemas.runs import RunOut, RunRequest

KEEPALIVE_EVERY = 15  # idle seconds between SSE comments
IDLE_CHECKS_EVERY = 3  # empty 1 s reads between DB checks for a settled run without `done`
router = APIRouter(route_class=StrictJSONRoute)


@router.post(
    "/runs",
    status_code=202,
    response_model=R.RunStarted,
    summary="Start a run: an Ask question (kind ask) or a map run",
)
def create_run(user: CurrentUser, body: schemas.RunCreate) -> Any:
    return app_runs.start(user.id, RunRequest.model_validate(body))


@router.get("/runs/{run_id}", response_model=R.RunOut, summary="A run with its status, outcome, credits and usage")
def get_run(user: CurrentUser, run_id: str) -> Any:
    return app_runs.view_owned(user.id, run_id)


def _cancel(user_id: str, op_id: str) -> RunOut:
    app_runs.stop_owned(user_id, op_id)
    return app_runs.view_owned(user_id, op_id)


@router.post(
    "/runs/{run_id}/cancel",
    status_code=202,
    response_model=R.RunOut,
    summary="Stop a run (it settles within a fraction of a second)",
)
def cancel_run(user: CurrentUser, run_id: str) -> Any:
    return _cancel(user.id, run_id)


async def _run_events(request: Request, op_id: str, cursor: str | None) -> AsyncIterator[dict[str, Any] | None]:
    """Stream entries after `cursor` until `done` (or the client leaves); None after each
    idle second (for keep-alives)."""
    follower = app_runs.follower(op_id, cursor)
    idle = 0
    try:
        async for batch in follower.until_done():
            if not batch:
                if await request.is_disconnected():
                    return
                idle += 1
                yield None
                if idle % IDLE_CHECKS_EVERY == 0:  # settled but its `done` is gone (expired)
                    # a database read from inside the stream's async generator: off the loop
                    done = await run_in_threadpool(app_runs.settled_done, op_id)
                    if done is not None:
                        yield {"id": None, **done}
                        return
                continue
            idle = 0
            for ev in batch:
                yield ev.to_json()
                if ev.type == "done":
                    return
    finally:
        await follower.aclose()


Cursor = Annotated[str | None, Query(description="Resume after this event id (as the Last-Event-ID header).")]


def _owned_run(user: CookieUser, run_id: str) -> None:
    """404 for others' runs (a plain dependency: FastAPI runs it in its threadpool)."""
    app_runs.view_owned(user.id, run_id)


@router.get(
    "/runs/{run_id}/events",
    response_class=Response,
    responses={200: media("text/event-stream", "application/x-ndjson")},
    summary="The run's events from a cursor (Last-Event-ID), as server-sent events (or NDJSON with format=ndjson)",
)
async def run_events(
    request: Request,
    run_id: str,
    _owned: Annotated[None, Depends(_owned_run)],
    format: Annotated[
        Literal["sse", "ndjson"], Query(description="ndjson: one JSON event per line instead of server-sent events.")
    ] = "sse",
    last_event_id: Cursor = None,
    after: Annotated[str | None, Query(description="The same as last_event_id.")] = None,
    last_event_id_header: Annotated[
        str | None,
        Header(alias="Last-Event-ID", description="Resume after this event id (browsers send it when reconnecting)."),
    ] = None,
) -> Response:
    op_id = run_id
    raw = last_event_id_header or last_event_id or after
    cursor = app_runs.valid_cursor(raw)
    if raw and cursor is None:
        raise ApiError(400, "bad_cursor", "Last-Event-ID must be a stream entry id such as 1700000000000-0.")
    if format == "ndjson":

        async def ndjson() -> AsyncIterator[str]:
            async for ev in _run_events(request, op_id, cursor):
                if ev is not None:
                    yield json.dumps(ev, ensure_ascii=False) + "\n"

        return StreamingResponse(
            ndjson(),
            media_type="application/x-ndjson",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def sse() -> AsyncIterator[bytes]:  # FastAPI's SSE encoder and keep-alive comment
        yield format_sse_event(retry=1000)
        idle = 0
        async for ev in _run_events(request, op_id, cursor):
            if ev is None:
                idle += 1
                if idle % KEEPALIVE_EVERY == 0:
                    yield KEEPALIVE_COMMENT
                continue
            payload = json.dumps({"type": ev["type"], "data": ev["data"]}, ensure_ascii=False)
            yield format_sse_event(data_str=payload, id=ev.get("id") or None)

    return EventSourceResponse(sse(), headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
