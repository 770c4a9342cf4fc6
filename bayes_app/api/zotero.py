"""Zotero routes: connect a library, list them (status, progress, problems), sync now, disconnect.

The API key goes in once (POST) and never comes back out; another user's library is a 404.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bayes_app.api import schemas
from bayes_app.api.deps import read_model, require_user
from bayes_app.api.errors import ApiError
from bayes_app.app import zotero as app_zotero


async def connect(request: Request) -> Response:
    user = await require_user(request)
    data = (await read_model(request, schemas.ZoteroConnect)).given()
    body = await run_in_threadpool(app_zotero.connect, user.id, user.is_admin, data)
    return JSONResponse(body, status_code=201)


async def list_libraries(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse({"libraries": await run_in_threadpool(app_zotero.libraries, user.id)})


async def get_library(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(await run_in_threadpool(app_zotero.library, user.id, request.path_params["library_id"]))


async def sync_now(request: Request) -> Response:
    user = await require_user(request)
    body = await run_in_threadpool(app_zotero.sync_now, user.id, request.path_params["library_id"])
    return JSONResponse(body, status_code=202)


async def disconnect(request: Request) -> Response:
    user = await require_user(request)
    keep_raw = request.query_params.get("keep_documents", "true").strip().lower()
    if keep_raw not in ("true", "false", "1", "0", "yes", "no"):
        raise ApiError(400, "invalid", "keep_documents must be true or false.")
    keep = keep_raw in ("true", "1", "yes")
    await run_in_threadpool(app_zotero.disconnect, user.id, request.path_params["library_id"], keep)
    return Response(status_code=204)


routes = [
    Route("/zotero/libraries", connect, methods=["POST"]),
    Route("/zotero/libraries", list_libraries, methods=["GET"]),
    Route("/zotero/libraries/{library_id}", get_library, methods=["GET"]),
    Route("/zotero/libraries/{library_id}", disconnect, methods=["DELETE"]),
    Route("/zotero/libraries/{library_id}/sync", sync_now, methods=["POST"]),
]
