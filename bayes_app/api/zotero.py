"""Zotero routes: connect a library, list them (status, progress, problems), sync now, disconnect.

The API key goes in once (POST) and never comes back out; another user's library is a 404.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.responses import Response

from bayes_app.api import schemas
from bayes_app.api.deps import CurrentUser, StrictJSONRoute
from bayes_app.usecases import schemas as R
from bayes_app.usecases import zotero as app_zotero

router = APIRouter(route_class=StrictJSONRoute)
P = "/zotero/libraries/{library_id}"


@router.post(
    "/zotero/libraries",
    status_code=201,
    response_model=R.ZoteroLibraryOut,
    summary="Connect a Zotero library (API key; the key is stored encrypted) and sync it",
)
def connect(user: CurrentUser, body: schemas.ZoteroConnect) -> Any:
    return app_zotero.connect(user.id, user.is_admin, body.given())


@router.get("/zotero/libraries", response_model=R.ZoteroLibraryList, summary="List connected Zotero libraries")
def list_libraries(user: CurrentUser) -> Any:
    return {"libraries": app_zotero.libraries(user.id)}


@router.get(P, response_model=R.ZoteroLibraryOut, summary="One Zotero library with its sync state and problems")
def get_library(user: CurrentUser, library_id: str) -> Any:
    return app_zotero.library(user.id, library_id)


@router.post(P + "/sync", status_code=202, response_model=R.ZoteroLibraryOut, summary="Sync a Zotero library now")
def sync_now(user: CurrentUser, library_id: str) -> Any:
    return app_zotero.sync_now(user.id, library_id)


@router.delete(
    P,
    status_code=204,
    response_class=Response,
    summary="Disconnect a Zotero library (its documents stay unless keep_documents=false)",
)
def disconnect(
    user: CurrentUser,
    library_id: str,
    keep_documents: Annotated[bool, Query(description="false: delete the library's documents too.")] = True,
) -> Response:
    app_zotero.disconnect(user.id, library_id, keep_documents)
    return Response(status_code=204)
