"""Library routes: documents (upload, list, edit, delete, file), collections, search."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from bayes_app.api import schemas
from bayes_app.api.deps import read_model, require_user
from bayes_app.api.errors import ApiError, not_found
from bayes_app.db import session_scope
from bayes_app.library import documents as lib
from bayes_app.library import storage, uploads
from bayes_app.library.structure import ROLES
from bayes_app.search import runtime
from bayes_app.settings import get_settings


def _call(fn: Callable[..., Any], *args) -> Any:
    """Run a library operation in a transaction, mapping its errors to API errors."""
    try:
        with session_scope() as db:
            return fn(db, *args)
    except lib.NotFound as err:
        raise not_found(err.what) from None
    except lib.LibraryError as err:
        raise ApiError(err.status, err.code, err.message) from None


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


def store_upload(fileobj, filename: str) -> storage.StoredFile:
    try:
        return uploads.store_checked(fileobj, filename)
    except uploads.UploadRejected as err:
        raise ApiError(err.status, err.code, err.message) from None


def enqueue_ingest(document_id: str, generation: int) -> None:
    from jobs.library import enqueue_ingest as send

    send(document_id, generation)


async def upload_document(request: Request) -> Response:
    user = await require_user(request)
    upload, fields = await _upload_field(request)
    collection_ids = [c for c in fields.get("collection_id", "").split(",") if c]
    try:
        acc = await run_in_threadpool(uploads.accept, user.id, upload.file,
                                      upload.filename or "upload.pdf", collection_ids)
    except uploads.UploadRejected as err:
        raise ApiError(err.status, err.code, err.message) from None
    if acc.created:
        await run_in_threadpool(enqueue_ingest, acc.document_id, acc.generation)
    view = await run_in_threadpool(_call, lib.view, user.id, acc.document_id)
    body = view.to_json() | {"duplicate": not acc.created}
    return JSONResponse(body, status_code=202 if acc.created else 200)


async def replace_file(request: Request) -> Response:
    user = await require_user(request)
    doc_id = request.path_params["document_id"]
    await run_in_threadpool(_call, lib.get_owned, user.id, doc_id)  # 404 before reading the body
    upload, _ = await _upload_field(request)
    stored = await run_in_threadpool(store_upload, upload.file, upload.filename or "upload.pdf")

    def work(db):
        doc, old = lib.replace_file(db, user.id, doc_id, stored)
        return doc.ingest_generation, old

    gen, old = await run_in_threadpool(_call, work)
    if old is not None:
        await run_in_threadpool(enqueue_ingest, doc_id, gen)
    view = await run_in_threadpool(_call, lib.view, user.id, doc_id)
    return JSONResponse(view.to_json(), status_code=202 if old else 200)


async def reindex(request: Request) -> Response:
    user = await require_user(request)
    doc_id = request.path_params["document_id"]

    def work(db):
        doc = lib.get_owned(db, user.id, doc_id)
        lib.queue_ingest(doc)
        db.add(doc)
        return doc.ingest_generation

    gen = await run_in_threadpool(_call, work)
    await run_in_threadpool(enqueue_ingest, doc_id, gen)
    return JSONResponse((await run_in_threadpool(_call, lib.view, user.id, doc_id)).to_json(),
                        status_code=202)


async def list_documents(request: Request) -> Response:
    user = await require_user(request)
    views = await run_in_threadpool(_call, lib.list_documents, user.id,
                                    request.query_params.get("collection_id") or None)
    return JSONResponse({"documents": [v.to_json() for v in views]})


async def get_document(request: Request) -> Response:
    user = await require_user(request)
    view = await run_in_threadpool(_call, lib.view, user.id, request.path_params["document_id"])
    return JSONResponse(view.to_json())


async def patch_document(request: Request) -> Response:
    user = await require_user(request)
    changes = (await read_model(request, schemas.DocumentPatch)).given()
    doc_id = request.path_params["document_id"]
    await run_in_threadpool(_call, lib.update_metadata, user.id, doc_id, changes)
    if "collection_ids" in changes:
        from jobs.library import sync_document_collections

        await run_in_threadpool(sync_document_collections.send, doc_id)
    return JSONResponse((await run_in_threadpool(_call, lib.view, user.id, doc_id)).to_json())


async def delete_document(request: Request) -> Response:
    user = await require_user(request)
    doc_id = request.path_params["document_id"]
    sha, still_used = await run_in_threadpool(_call, lib.delete_document, user.id, doc_id)
    from jobs.library import purge_document

    await run_in_threadpool(purge_document.send, doc_id, None if still_used else sha)
    return Response(status_code=204)


async def document_file(request: Request) -> Response:
    """The PDF bytes, for the owner only (Bearer token or the browser's session cookie)."""
    user = await require_user(request, allow_cookie=True)
    doc = await run_in_threadpool(_call, lib.get_owned, user.id, request.path_params["document_id"])
    path = storage.path_for(get_settings().files_path, doc.file_sha256)
    if not path.exists():
        raise not_found("file")
    safe = "".join(ch for ch in doc.filename if ch.isalnum() or ch in "._- ")[:100] or "document.pdf"
    return FileResponse(path, media_type="application/pdf", headers={
        "Content-Disposition": f'inline; filename="{safe}"', "Cache-Control": "private, max-age=300",
        "X-Content-Type-Options": "nosniff"})


# ---- collections ----------------------------------------------------------------------------
async def list_collections(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse({"collections": await run_in_threadpool(_call, lib.list_collections, user.id)})


async def create_collection(request: Request) -> Response:
    user = await require_user(request)
    data = await read_model(request, schemas.CollectionBody)
    c = await run_in_threadpool(_call, lib.create_collection, user.id, data.name)
    return JSONResponse({"id": c.id, "name": c.name}, status_code=201)


async def patch_collection(request: Request) -> Response:
    user = await require_user(request)
    data = await read_model(request, schemas.CollectionBody)
    c = await run_in_threadpool(_call, lib.rename_collection, user.id,
                                request.path_params["collection_id"], data.name)
    return JSONResponse({"id": c.id, "name": c.name})


async def delete_collection(request: Request) -> Response:
    user = await require_user(request)
    doc_ids = await run_in_threadpool(_call, lib.delete_collection, user.id,
                                      request.path_params["collection_id"])
    from jobs.library import sync_document_collections

    for d in doc_ids:
        await run_in_threadpool(sync_document_collections.send, d)
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

    def work(db):
        for d in doc_ids or []:
            lib.get_owned(db, user.id, d)
        for c in col_ids or []:
            lib.get_collection(db, user.id, c)
        return runtime.search_library(db, user.id, q, k, doc_ids, col_ids, include, all_roles)

    hits = await run_in_threadpool(_call, work)
    return JSONResponse([h.to_json() for h in hits])


async def document_references(request: Request) -> Response:
    """The document's reference list, parsed into authors, year, title, venue and DOI."""
    user = await require_user(request)
    doc_id = request.path_params["document_id"]
    refs = await run_in_threadpool(_call, lib.list_references, user.id, doc_id)
    return JSONResponse({"document_id": doc_id, "count": len(refs), "references": refs})


routes = [
    Route("/documents", upload_document, methods=["POST"]),
    Route("/documents", list_documents, methods=["GET"]),
    Route("/documents/{document_id}", get_document, methods=["GET"]),
    Route("/documents/{document_id}", patch_document, methods=["PATCH"]),
    Route("/documents/{document_id}", delete_document, methods=["DELETE"]),
    Route("/documents/{document_id}/file", document_file, methods=["GET"]),
    Route("/documents/{document_id}/file", replace_file, methods=["PUT"]),
    Route("/documents/{document_id}/reindex", reindex, methods=["POST"]),
    Route("/documents/{document_id}/references", document_references, methods=["GET"]),
    Route("/collections", list_collections, methods=["GET"]),
    Route("/collections", create_collection, methods=["POST"]),
    Route("/collections/{collection_id}", patch_collection, methods=["PATCH"]),
    Route("/collections/{collection_id}", delete_collection, methods=["DELETE"]),
    Route("/search", search, methods=["GET"]),
]
