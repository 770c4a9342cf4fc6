"""Zotero routes: connect a library, list them (status, progress, problems), sync now, disconnect.

The API key goes in once (POST) and never comes back out; another user's library is a 404.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bayes_app.api import schemas
from bayes_app.api.deps import read_model, require_user
from bayes_app.api import responses as R
from bayes_app.api.routing import op
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
    op("POST", "/zotero/libraries", connect, "Connect a Zotero library (API key; the key is stored encrypted) and sync it", R.ZoteroLibraryOut, status=201, body=schemas.ZoteroConnect),
    op("GET", "/zotero/libraries", list_libraries, "List connected Zotero libraries", R.ZoteroLibraryList),
    op("GET", "/zotero/libraries/{library_id}", get_library, "One Zotero library with its sync state and problems", R.ZoteroLibraryOut),
    op("DELETE", "/zotero/libraries/{library_id}", disconnect, "Disconnect a Zotero library (its documents stay unless keep_documents=false)", status=204,
       query=schemas.DisconnectQuery),
    op("POST", "/zotero/libraries/{library_id}/sync", sync_now, "Sync a Zotero library now", R.ZoteroLibraryOut, status=202),
]
