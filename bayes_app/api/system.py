"""Health and identity routes."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bayes_app.api import responses as R
from bayes_app.api.routing import op
from bayes_app.api.deps import require_user
from bayes_app.health import check_health


async def health(_request: Request) -> Response:
    report = await run_in_threadpool(check_health)
    return JSONResponse(report, status_code=200 if report["status"] == "ok" else 503,
                        headers={"Cache-Control": "no-store"})


async def me(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(user.to_json())


routes = [
    op("GET", "/health", health, "Health of the database, Redis, workers, index and processes (503 when degraded)", R.Health, public=True,
       also={503: R.Health}),
    op("GET", "/me", me, "The signed-in user", R.UserOut),
]
