"""Library routes: documents (upload, list, edit, delete, file), collections, search."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response, StreamingResponse

from bayes_app.api import schemas
from bayes_app.api.deps import MULTIPART, CookieUser, CurrentUser, StrictJSONRoute, media, read_by_hand, upload_limit
from bayes_app.api.errors import ApiError, not_found
from bayes_app.usecases import library as app_lib
from bayes_app.usecases import schemas as R
from bayes_app.usecases import zotero as app_zotero
from bayes_app.usecases.schemas import zotero as RZ

router = APIRouter(route_class=StrictJSONRoute)
D = "/documents/{document_id}"
PARTIAL = {
    "description": "The requested byte range (416 when it cannot be satisfied)",
    "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}},
}


async def _upload_field(request: Request) -> tuple[UploadFile, dict[str, str]]:
    """The multipart body's `file` and its text fields, read on the event loop (a dependency of
    the plain `def` upload routes, which FastAPI runs in its threadpool)."""
    ctype = request.headers.get("content-type", "")
    if not ctype.startswith("multipart/form-data"):
        raise ApiError(415, "unsupported_media_type", "Send the PDF as multipart/form-data, field 'file'.")
    try:  # within the route's max_body_size (upload_limit)
        form = await request.form(max_files=1, max_fields=10)
    except HTTPException:
        raise  # 413: past the upload limit
    except Exception:  # noqa: BLE001 - malformed multipart bodies
        raise ApiError(400, "bad_request", "Malformed multipart body.") from None
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise ApiError(400, "missing_fields", "Missing file field 'file'.")
    return upload, {k: v for k, v in form.items() if isinstance(v, str)}


Upload = Annotated[tuple[UploadFile, dict[str, str]], Depends(_upload_field)]


def _owned_document(user: CurrentUser, document_id: str) -> None:
    """404 for a document that is not the caller's, before its upload body is read."""
    app_lib.owned(user.id, document_id)


@router.post(
    "/documents",
    status_code=202,
    max_body_size=upload_limit(),
    response_model=R.UploadedDocument,
    openapi_extra=read_by_hand(schemas.DocumentUpload, MULTIPART),
    responses={200: {"model": R.UploadedDocument, "description": "The same file was already there"}},
    summary="Upload a PDF (multipart `file`); it is indexed in the background (200: the same file was already there)",
)
def upload_document(response: Response, user: CurrentUser, posted: Upload) -> Any:
    upload, fields = posted
    collection_ids = [c for c in fields.get("collection_id", "").split(",") if c]
    acc = app_lib.upload(
        user.id, upload.file, upload.filename or "upload.pdf", collection_ids, fields.get("ocr_language", "")
    )
    view = app_lib.document(user.id, acc.document_id)
    response.status_code = 202 if acc.created else 200
    return R.UploadedDocument(**view.model_dump(), duplicate=not acc.created)


@router.put(
    D + "/file",
    status_code=202,
    max_body_size=upload_limit(),
    response_model=R.DocumentOut,
    openapi_extra=read_by_hand(schemas.FileUpload, MULTIPART),
    responses={200: {"model": R.DocumentOut, "description": "The same file"}},
    summary="Replace a document's PDF (multipart `file`); it is re-indexed (200: the same file)",
)
def replace_file(
    response: Response,
    user: CurrentUser,
    document_id: str,
    _owned: Annotated[None, Depends(_owned_document)],  # before `posted`: 404 before the body is read
    posted: Upload,
) -> Any:
    upload, _ = posted
    changed = app_lib.replace_file(user.id, document_id, upload.file, upload.filename or "upload.pdf")
    response.status_code = 202 if changed else 200
    return app_lib.document(user.id, document_id)


@router.post(D + "/reindex", status_code=202, response_model=R.DocumentOut, summary="Index a document again")
def reindex(user: CurrentUser, document_id: str) -> Any:
    app_lib.reindex(user.id, document_id)
    return app_lib.document(user.id, document_id)


@router.get("/documents", response_model=R.DocumentList, summary="List the library's documents")
def list_documents(
    user: CurrentUser,
    collection_id: Annotated[str | None, Query(description="Only the documents in this collection.")] = None,
) -> Any:
    views = app_lib.documents(user.id, collection_id or None)
    return R.DocumentList(documents=views)


@router.get(D, response_model=R.DocumentOut, summary="One document with its indexing progress")
def get_document(user: CurrentUser, document_id: str) -> Any:
    return app_lib.document(user.id, document_id)


@router.patch(D, response_model=R.DocumentOut, summary="Edit a document's metadata or collections")
def patch_document(user: CurrentUser, document_id: str, body: schemas.DocumentPatch) -> Any:
    app_lib.update_metadata(user.id, document_id, body.given())
    return app_lib.document(user.id, document_id)


@router.delete(
    D, status_code=204, response_class=Response, summary="Delete a document (its vectors and file are purged)"
)
def delete_document(user: CurrentUser, document_id: str) -> Response:
    app_lib.delete_document(user.id, document_id)
    return Response(status_code=204)


@router.get(
    D + "/file",
    response_class=Response,
    responses={200: media("application/pdf"), 206: PARTIAL},
    summary="The document's PDF (one byte range honoured)",
)
def document_file(
    user: CookieUser,
    document_id: str,
    range: Annotated[str | None, Header(alias="Range", description="One byte range, such as bytes=0-1023.")] = None,
) -> Response:
    """The PDF bytes (Bearer token or the browser's session cookie), for the owner, and for a
    member of a map that cites it or of a collection shared with them that holds it."""
    doc = app_lib.readable(user.id, document_id)
    safe = "".join(ch for ch in doc.filename if ch.isalnum() or ch in "._- ")[:100] or "document.pdf"
    headers = {
        "Content-Disposition": f'inline; filename="{safe}"',
        "Cache-Control": "private, max-age=300",
        "X-Content-Type-Options": "nosniff",
    }
    store = app_lib.file_store()
    if isinstance(store, app_lib.LocalStore):
        path = store.path(doc.file_sha256)
        if not path.exists():
            raise not_found("file")
        return FileResponse(path, media_type="application/pdf", headers=headers)
    return _stream_object(store, doc.file_sha256, range, headers)


def _stream_object(store: app_lib.FileStore, sha: str, range_header: str | None, headers: dict[str, str]) -> Response:
    """Stream a stored object chunk by chunk (never whole in memory); one byte range honoured."""
    try:
        size = store.size(sha)
    except app_lib.StorageUnavailable:
        raise ApiError(503, "storage_unavailable", "The file store is unavailable; try again.") from None
    if size is None:
        raise not_found("file")
    start, end, status = 0, size - 1, 200
    if range_header and size:
        span = _byte_range(range_header, size)
        if span is None:
            return Response(status_code=416, headers={"Content-Range": f"bytes */{size}"})
        (start, end), status = span, 206
        headers = headers | {"Content-Range": f"bytes {start}-{end}/{size}"}
    headers = headers | {"Content-Length": str(end - start + 1 if size else 0), "Accept-Ranges": "bytes"}
    chunks = store.iter_bytes(sha, start, end if status == 206 else None) if size else iter(())
    return StreamingResponse(chunks, status_code=status, media_type="application/pdf", headers=headers)


def _byte_range(header: str, size: int) -> tuple[int, int] | None:
    """`bytes=a-b`, `bytes=a-` or `bytes=-n` → inclusive (start, end); None if unsatisfiable.
    Several ranges are answered with the first only (clients accept this)."""
    unit, _, spec = header.partition("=")
    first = spec.split(",")[0].strip()
    a, _, b = first.partition("-")
    if unit.strip().lower() != "bytes" or not (a.isdigit() or b.isdigit()):
        return None
    if not a:
        start, end = max(0, size - int(b)), size - 1
    else:
        start, end = int(a), min(int(b), size - 1) if b.isdigit() else size - 1
    return (start, end) if start <= end < size else None


# ---- collections ----------------------------------------------------------------------------
@router.get("/collections", response_model=R.CollectionList, summary="List collections")
def list_collections(user: CurrentUser) -> Any:
    return R.CollectionList(collections=app_lib.collections(user.id))


@router.post("/collections", status_code=201, response_model=R.CollectionOut, summary="Create a collection")
def create_collection(user: CurrentUser, body: schemas.CollectionBody) -> Any:
    return app_lib.create_collection(user.id, body.name)


@router.patch("/collections/{collection_id}", response_model=R.CollectionOut, summary="Rename a collection")
def patch_collection(user: CurrentUser, collection_id: str, body: schemas.CollectionBody) -> Any:
    return app_lib.rename_collection(user.id, collection_id, body.name)


@router.delete(
    "/collections/{collection_id}",
    status_code=204,
    response_class=Response,
    summary="Delete a collection (its documents stay)",
)
def delete_collection(user: CurrentUser, collection_id: str) -> Response:
    app_lib.delete_collection(user.id, collection_id)
    return Response(status_code=204)


# ---- search -----------------------------------------------------------------------------------


@router.get("/search", response_model=list[R.SearchHit], summary="Search the library's passages")
def search(
    user: CurrentUser,
    q: Annotated[str, Query(description="The question or keywords.")],
    k: Annotated[int, Query(description="How many passages to return.")] = 10,
    document_id: Annotated[list[str] | None, Query(description="Only these documents (repeat the parameter).")] = None,
    collection_id: Annotated[
        list[str] | None, Query(description="Only these collections (repeat the parameter).")
    ] = None,
    include_roles: Annotated[
        list[str] | None,
        Query(
            description=(
                "Bring back regions left out by default (references, running heads, title blocks): "
                "role names, repeated or comma-separated."
            )
        ),
    ] = None,
    all_roles: Annotated[bool, Query(description="Search every region of the pages.")] = False,
    highlights: Annotated[
        bool, Query(description='Only passages the user highlighted in Zotero ("my highlights").')
    ] = False,
) -> Any:
    if not q.strip():
        raise ApiError(400, "missing_fields", "Missing query parameter 'q'.")
    include = [r for v in include_roles or [] for r in v.split(",") if r]
    unknown = sorted(set(include) - set(app_lib.ROLES))
    if unknown:
        raise ApiError(400, "invalid", f"Unknown role(s): {', '.join(unknown)}. Roles are: {', '.join(app_lib.ROLES)}.")
    if highlights:  # "my highlights": only passages the user highlighted in Zotero
        return app_zotero.search_highlights(user.id, q.strip(), k, document_id or None, collection_id or None)
    return app_lib.search(user.id, q.strip(), k, document_id or None, collection_id or None, include, all_roles)


@router.get(
    D + "/annotations",
    response_model=RZ.AnnotationList,
    summary="The document's synced Zotero annotations (type, text, comment, colour, page, rectangles)",
)
def document_annotations(user: CurrentUser, document_id: str) -> Any:
    """The document's Zotero annotations as last synced (none for documents not from Zotero)."""
    return RZ.AnnotationList(annotations=app_zotero.document_annotations(user.id, document_id))


@router.get(D + "/references", response_model=R.ReferenceList, summary="The document's parsed reference list")
def document_references(user: CurrentUser, document_id: str) -> Any:
    """The document's reference list, parsed into authors, year, title, venue and DOI."""
    refs = app_lib.references(user.id, document_id)
    return R.ReferenceList(document_id=document_id, count=len(refs), references=refs)
