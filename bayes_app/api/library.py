"""Library routes: documents (upload, list, edit, delete, file), collections, search."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse

from bayes_app.api import schemas
from bayes_app.api.deps import read_model, require_user
from bayes_app.api import responses as R
from bayes_app.api import responses_zotero as RZ
from bayes_app.api.routing import op

MULTIPART = ("multipart/form-data",)
PARTIAL = {"description": "The requested byte range (416 when it cannot be satisfied)",
           "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}}}
from bayes_app.api.errors import ApiError, not_found
from bayes_app.app import library as app_lib
from bayes_app.app import zotero as app_zotero
from bayes_app.library import storage
from bayes_app.library.structure import ROLES
from bayes_app.settings import get_settings


def _limit() -> int:
    return get_settings().max_upload_mb * 1024 * 1024


def _bounded(request: Request, limit: int, error: ApiError) -> Request:
    """The same request, but reading its body stops with `error` once `limit` bytes arrived
    (a chunked upload without Content-Length is never spooled past the limit)."""
    received = 0

    async def receive():
        nonlocal received
        message = await request.receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise error
        return message

    return Request(request.scope, receive)


async def _upload_field(request: Request) -> tuple[UploadFile, dict]:
    ctype = request.headers.get("content-type", "")
    if not ctype.startswith("multipart/form-data"):
        raise ApiError(415, "unsupported_media_type", "Send the PDF as multipart/form-data, field 'file'.")
    too_large = ApiError(413, "too_large", f"The file is larger than the {get_settings().max_upload_mb} MB "
                         "upload limit (BAYES_MAX_UPLOAD_MB).")
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > _limit() + 64 * 1024:
        raise too_large
    try:
        form = await _bounded(request, _limit() + 64 * 1024, too_large).form(max_files=1, max_fields=10)
    except ApiError:
        raise
    except Exception:  # noqa: BLE001 - malformed multipart bodies
        raise ApiError(400, "bad_request", "Malformed multipart body.") from None
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise ApiError(400, "missing_fields", "Missing file field 'file'.")
    return upload, {k: v for k, v in form.items() if isinstance(v, str)}


async def upload_document(request: Request) -> Response:
    user = await require_user(request)
    upload, fields = await _upload_field(request)
    collection_ids = [c for c in fields.get("collection_id", "").split(",") if c]
    acc = await run_in_threadpool(app_lib.upload, user.id, upload.file, upload.filename or "upload.pdf",
                                  collection_ids)
    view = await run_in_threadpool(app_lib.document, user.id, acc.document_id)
    body = view.to_json() | {"duplicate": not acc.created}
    return JSONResponse(body, status_code=202 if acc.created else 200)


async def replace_file(request: Request) -> Response:
    user = await require_user(request)
    doc_id = request.path_params["document_id"]
    await run_in_threadpool(app_lib.owned, user.id, doc_id)  # 404 before reading the body
    upload, _ = await _upload_field(request)
    changed = await run_in_threadpool(app_lib.replace_file, user.id, doc_id, upload.file,
                                      upload.filename or "upload.pdf")
    view = await run_in_threadpool(app_lib.document, user.id, doc_id)
    return JSONResponse(view.to_json(), status_code=202 if changed else 200)


async def reindex(request: Request) -> Response:
    user = await require_user(request)
    doc_id = request.path_params["document_id"]
    await run_in_threadpool(app_lib.reindex, user.id, doc_id)
    return JSONResponse((await run_in_threadpool(app_lib.document, user.id, doc_id)).to_json(),
                        status_code=202)


async def list_documents(request: Request) -> Response:
    user = await require_user(request)
    views = await run_in_threadpool(app_lib.documents, user.id,
                                    request.query_params.get("collection_id") or None)
    return JSONResponse({"documents": [v.to_json() for v in views]})


async def get_document(request: Request) -> Response:
    user = await require_user(request)
    view = await run_in_threadpool(app_lib.document, user.id, request.path_params["document_id"])
    return JSONResponse(view.to_json())


async def patch_document(request: Request) -> Response:
    user = await require_user(request)
    changes = (await read_model(request, schemas.DocumentPatch)).given()
    doc_id = request.path_params["document_id"]
    await run_in_threadpool(app_lib.update_metadata, user.id, doc_id, changes)
    return JSONResponse((await run_in_threadpool(app_lib.document, user.id, doc_id)).to_json())


async def delete_document(request: Request) -> Response:
    user = await require_user(request)
    await run_in_threadpool(app_lib.delete_document, user.id, request.path_params["document_id"])
    return Response(status_code=204)


async def document_file(request: Request) -> Response:
    """The PDF bytes, for the owner only (Bearer token or the browser's session cookie)."""
    user = await require_user(request, allow_cookie=True)
    doc = await run_in_threadpool(app_lib.owned, user.id, request.path_params["document_id"])
    safe = "".join(ch for ch in doc.filename if ch.isalnum() or ch in "._- ")[:100] or "document.pdf"
    headers = {"Content-Disposition": f'inline; filename="{safe}"', "Cache-Control": "private, max-age=300",
               "X-Content-Type-Options": "nosniff"}
    store = storage.default_store()
    if isinstance(store, storage.LocalStore):
        path = store.path(doc.file_sha256)
        if not path.exists():
            raise not_found("file")
        return FileResponse(path, media_type="application/pdf", headers=headers)
    return await _stream_object(store, doc.file_sha256, request.headers.get("range"), headers)


async def _stream_object(store: storage.FileStore, sha: str, range_header: str | None,
                         headers: dict[str, str]) -> Response:
    """Stream a stored object chunk by chunk (never whole in memory); one byte range honoured."""
    try:
        size = await run_in_threadpool(store.size, sha)
    except storage.StorageUnavailable:
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
async def list_collections(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse({"collections": await run_in_threadpool(app_lib.collections, user.id)})


async def create_collection(request: Request) -> Response:
    user = await require_user(request)
    data = await read_model(request, schemas.CollectionBody)
    c = await run_in_threadpool(app_lib.create_collection, user.id, data.name)
    return JSONResponse({"id": c.id, "name": c.name}, status_code=201)


async def patch_collection(request: Request) -> Response:
    user = await require_user(request)
    data = await read_model(request, schemas.CollectionBody)
    c = await run_in_threadpool(app_lib.rename_collection, user.id, request.path_params["collection_id"],
                                data.name)
    return JSONResponse({"id": c.id, "name": c.name})


async def delete_collection(request: Request) -> Response:
    user = await require_user(request)
    await run_in_threadpool(app_lib.delete_collection, user.id, request.path_params["collection_id"])
    return Response(status_code=204)


# ---- search -----------------------------------------------------------------------------------
async def search(request: Request) -> Response:
    user = await require_user(request)
    q = request.query_params.get("q", "").strip()
    if not q:
        raise ApiError(400, "missing_fields", "Missing query parameter 'q'.")
    try:
        k = int(request.query_params.get("k", "10"))
    except ValueError:
        raise ApiError(400, "invalid", "k must be a whole number.") from None
    doc_ids = request.query_params.getlist("document_id") or None
    col_ids = request.query_params.getlist("collection_id") or None
    include = [r for v in request.query_params.getlist("include_roles") for r in v.split(",") if r]
    unknown = sorted(set(include) - set(ROLES))
    if unknown:
        raise ApiError(400, "invalid", f"Unknown role(s): {', '.join(unknown)}. "
                                       f"Roles are: {', '.join(ROLES)}.")
    all_roles = request.query_params.get("all_roles", "").lower() in ("1", "true", "yes")
    if request.query_params.get("highlights", "").lower() in ("1", "true", "yes"):  # "my highlights"
        return JSONResponse(await run_in_threadpool(app_zotero.search_highlights, user.id, q, k, doc_ids, col_ids))
    hits = await run_in_threadpool(app_lib.search, user.id, q, k, doc_ids, col_ids, include, all_roles)
    return JSONResponse([h.to_json() for h in hits])


async def document_annotations(request: Request) -> Response:
    """The document's Zotero annotations as last synced (none for documents not from Zotero)."""
    user = await require_user(request)
    anns = await run_in_threadpool(app_zotero.annotations, user.id, request.path_params["document_id"])
    return JSONResponse({"annotations": anns})


async def document_references(request: Request) -> Response:
    """The document's reference list, parsed into authors, year, title, venue and DOI."""
    user = await require_user(request)
    doc_id = request.path_params["document_id"]
    refs = await run_in_threadpool(app_lib.references, user.id, doc_id)
    return JSONResponse({"document_id": doc_id, "count": len(refs), "references": refs})


routes = [
    op("POST", "/documents", upload_document, "Upload a PDF (multipart `file`); it is indexed in the background (200: the same file was already there)", R.UploadedDocument, status=202,
       body=schemas.DocumentUpload, body_media=MULTIPART, also={200: R.UploadedDocument}),
    op("GET", "/documents", list_documents, "List the library's documents", R.DocumentList, query=schemas.DocumentsQuery),
    op("GET", "/documents/{document_id}", get_document, "One document with its indexing progress", R.DocumentOut),
    op("PATCH", "/documents/{document_id}", patch_document, "Edit a document's metadata or collections", R.DocumentOut, body=schemas.DocumentPatch),
    op("DELETE", "/documents/{document_id}", delete_document, "Delete a document (its vectors and file are purged)", status=204),
    op("GET", "/documents/{document_id}/file", document_file, "The document's PDF (one byte range honoured)", media="application/pdf",
       query=schemas.FileQuery, also={206: PARTIAL}),
    op("PUT", "/documents/{document_id}/file", replace_file, "Replace a document's PDF (multipart `file`); it is re-indexed (200: the same file)", R.DocumentOut, status=202,
       body=schemas.FileUpload, body_media=MULTIPART, also={200: R.DocumentOut}),
    op("POST", "/documents/{document_id}/reindex", reindex, "Index a document again", R.DocumentOut, status=202),
    op("GET", "/documents/{document_id}/annotations", document_annotations,
       "The document's synced Zotero annotations (type, text, comment, colour, page, rectangles)", RZ.AnnotationList),
    op("GET", "/documents/{document_id}/references", document_references, "The document's parsed reference list", R.ReferenceList),
    op("GET", "/collections", list_collections, "List collections", R.CollectionList),
    op("POST", "/collections", create_collection, "Create a collection", R.CollectionOut, status=201, body=schemas.CollectionBody),
    op("PATCH", "/collections/{collection_id}", patch_collection, "Rename a collection", R.CollectionOut, body=schemas.CollectionBody),
    op("DELETE", "/collections/{collection_id}", delete_collection, "Delete a collection (its documents stay)", status=204),
    op("GET", "/search", search, "Search the library's passages", list[R.SearchHit], query=schemas.SearchQuery),
]
