"""Zotero routes: connect a library, list them (status, progress, problems), sync now, disconnect.

The API key goes in once (POST) and never comes back out; another user's library is a 404.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bayes_app.api import schemas
from bayes_app.api.deps import read_model, require_user
from bayes_app.api.errors import ApiError, not_found
from bayes_app.db import session_scope
from bayes_app.library import documents as lib
from bayes_app.settings import get_settings
from bayes_app.zotero import service as zs


def _call(fn: Callable[..., Any], *args, **kw) -> Any:
    try:
        with session_scope() as db:
            return fn(db, *args, **kw)
    except lib.NotFound as err:
        raise not_found(err.what) from None
    except zs.ZoteroError as err:
        raise ApiError(err.status, err.code, err.message) from None


def _enqueue_sync(library_id: str) -> None:
    from jobs.zotero import sync_zotero_library

    sync_zotero_library.send(library_id)


async def connect(request: Request) -> Response:
    user = await require_user(request)
    data = (await read_model(request, schemas.ZoteroConnect)).given()
    settings = get_settings()
    try:
        req = zs.ConnectRequest.parse(data)
        await run_in_threadpool(lambda: zs.check_local_allowed(
            req, is_admin=user.is_admin, enabled=settings.zotero_local, local_url=settings.zotero_local_url))
    except zs.ZoteroError as err:
        raise ApiError(err.status, err.code, err.message) from None

    def work(db):
        row = zs.connect(db, user.id, req, web_api_url=get_settings().zotero_api_url)
        return row.id

    library_id = await run_in_threadpool(_call, work)
    await run_in_threadpool(_enqueue_sync, library_id)
    body = await run_in_threadpool(_call, lambda db: zs.view(db, zs.get_owned(db, user.id, library_id)))
    return JSONResponse(body, status_code=201)


async def list_libraries(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse({"libraries": await run_in_threadpool(_call, zs.list_libraries, user.id)})


async def get_library(request: Request) -> Response:
    user = await require_user(request)
    lid = request.path_params["library_id"]
    return JSONResponse(await run_in_threadpool(_call, lambda db: zs.view(db, zs.get_owned(db, user.id, lid))))


async def sync_now(request: Request) -> Response:
    user = await require_user(request)
    lid = request.path_params["library_id"]
    await run_in_threadpool(_call, zs.request_sync, user.id, lid)
    await run_in_threadpool(_enqueue_sync, lid)
    body = await run_in_threadpool(_call, lambda db: zs.view(db, zs.get_owned(db, user.id, lid), False))
    return JSONResponse(body, status_code=202)


async def disconnect(request: Request) -> Response:
    user = await require_user(request)
    keep_raw = request.query_params.get("keep_documents", "true").strip().lower()
    if keep_raw not in ("true", "false", "1", "0", "yes", "no"):
        raise ApiError(400, "invalid", "keep_documents must be true or false.")
    keep = keep_raw in ("true", "1", "yes")
    purges = await run_in_threadpool(_call, zs.disconnect, user.id, request.path_params["library_id"], keep)
    if purges:
        from jobs.library import purge_document

        for doc_id, sha in purges:
            await run_in_threadpool(purge_document.send, doc_id, sha)
    return Response(status_code=204)


routes = [
    Route("/zotero/libraries", connect, methods=["POST"]),
    Route("/zotero/libraries", list_libraries, methods=["GET"]),
    Route("/zotero/libraries/{library_id}", get_library, methods=["GET"]),
    Route("/zotero/libraries/{library_id}", disconnect, methods=["DELETE"]),
    Route("/zotero/libraries/{library_id}/sync", sync_now, methods=["POST"]),
]
