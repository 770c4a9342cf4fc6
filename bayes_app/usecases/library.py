"""Library use cases: documents and collections, each in one transaction; what changes the
index is written first and then handed to the queue (ingest, purge, collection sync).

Refusals are the domain's (`documents.NotFound`, `LibraryError`, `UploadRejected`)."""

from __future__ import annotations

from typing import Any, BinaryIO

from bayes_app.db import session_scope
from bayes_app.library import documents as lib
from bayes_app.library import ocr, storage, uploads
from bayes_app.library.documents import DocumentView
from bayes_app.library.highlight import locate_pages
from bayes_app.library.storage import FileStore, LocalStore, StorageUnavailable
from bayes_app.library.structure import ROLES
from bayes_app.models import DocStatus
from bayes_app.search import runtime
from bayes_app.search.crosslang import language_name
from bayes_app.sharing import collections as shared_cols
from bayes_app.sharing import documents as shared_docs
from bayes_app.usecases import queue
from bayes_app.usecases.schemas.common import ErrorDetail
from bayes_app.usecases.schemas.library import (
    CollectionRef,
    CollectionRow,
    DocumentFile,
    DocumentOut,
    Progress,
    Reference,
    SearchHit,
)

# for the front doors: the document view, the search's passage roles and the file store's kinds
__all__ = ["ROLES", "DocumentFile", "DocumentOut", "FileStore", "LocalStore", "StorageUnavailable"]


# ---- reads ----------------------------------------------------------------------------------
UNREAD = "pages_unread"  # the error code of an indexed document some pages of which OCR could not read


def document_out(v: DocumentView) -> DocumentOut:
    """What the pages and the API show about a document."""
    total = v.progress_total or 0
    return DocumentOut(
        id=v.id,
        filename=v.filename,
        title=v.title,
        authors=v.authors,
        year=v.year,
        doi=v.doi,
        status=v.status,
        progress=Progress(
            done=v.progress_done, total=total, fraction=round(v.progress_done / total, 3) if total else None
        ),
        page_count=v.page_count,
        chunk_count=v.chunk_count,
        error=(
            ErrorDetail(code=v.error_code or "", message=v.error_message or "")
            if v.status == DocStatus.FAILED
            else None
        ),
        # indexed without some pages (OCR could not read them): which, and why
        unread_pages=(v.error_message or "")
        if v.status == DocStatus.INDEXED and v.error_code == "pages_unread"
        else "",
        collection_ids=v.collection_ids,
        file_size=v.file_size,
        reference_count=v.reference_count,
        language=v.language,
        language_name=language_name(v.language),
        ocr_pages=v.ocr_pages,
        queue_position=v.queue_position,
        ocr_language=v.ocr_lang,
        ocr_language_choice=v.ocr_lang_choice or "auto",
        created_at=v.created_at.isoformat() if v.created_at else None,
    )


def documents(user_id: str, collection_id: str | None = None) -> list[DocumentOut]:
    """The user's documents (of one collection when given; NotFound when it is not theirs)."""
    with session_scope() as db:
        return [document_out(v) for v in lib.list_documents(db, user_id, collection_id)]


def document(user_id: str, document_id: str) -> DocumentOut:
    with session_scope() as db:
        return document_out(lib.view(db, user_id, document_id))


def owned(user_id: str, document_id: str) -> None:
    """NotFound unless the document is the user's."""
    with session_scope() as db:
        lib.get_owned(db, user_id, document_id)


def readable(user_id: str, document_id: str) -> DocumentFile:
    """The document to open (viewer, highlight, file): the user's own, one a map shared with
    them cites, or one in a collection shared with them; NotFound otherwise."""
    with session_scope() as db:
        doc = shared_docs.readable(db, user_id, document_id)
        if doc is None:
            raise lib.NotFound("document")
        return DocumentFile(id=doc.id, title=doc.title, filename=doc.filename, file_sha256=doc.file_sha256)


def highlight(
    user_id: str, document_id: str, page: int, quote: str
) -> tuple[int, dict[int, list[dict[str, str]]], str]:
    """Where a quote stands in a document the user may open: (page to show, highlight boxes
    per page, note for the reader); NotFound when they may not open it."""
    doc = readable(user_id, document_id)
    return locate_pages(doc.id, doc.file_sha256, page, quote)


def file_store() -> FileStore:
    """Where the PDFs are stored (a local directory or an object store)."""
    return storage.default_store()


def references(user_id: str, document_id: str) -> list[Reference]:
    """The document's parsed reference list, in order."""
    with session_scope() as db:
        return [Reference.model_validate(r) for r in lib.list_references(db, user_id, document_id)]


def collections(user_id: str) -> list[CollectionRow]:
    """The user's collections with how many documents each holds."""
    with session_scope() as db:
        return [CollectionRow.model_validate(c) for c in lib.list_collections(db, user_id)]


def search(
    user_id: str,
    query: str,
    k: int,
    document_ids: list[str] | None = None,
    collection_ids: list[str] | None = None,
    include_roles: list[str] | None = None,
    all_roles: bool = False,
) -> list[SearchHit]:
    """Search the user's library, or collections shared with them (NotFound for a named
    document or collection neither theirs nor shared with them), best first."""
    with session_scope() as db:
        library = shared_cols.scope_owner(db, user_id, collection_ids)
        for d in document_ids or []:
            lib.get_owned(db, library, d)
        return runtime.search_library(
            db, library, query, k, document_ids, collection_ids, include_roles, all_roles, keep_headings=False
        )


# ---- write, then enqueue ------------------------------------------------------------------
def upload(
    user_id: str, fileobj: BinaryIO, filename: str, collection_ids: list[str] | None = None, ocr_language: str = ""
) -> uploads.Accepted:
    """Store and record an upload, then queue its ingestion (not for the user's duplicate).
    ``ocr_language``: a Tesseract language for scanned pages ("" / "auto": the detected one)."""
    acc = uploads.accept(user_id, fileobj, filename, collection_ids, ocr_language)
    if acc.created:
        queue.get().ingest(acc.document_id, acc.generation)
    return acc


def ocr_languages() -> list[tuple[str, str]]:
    """The OCR languages an upload may choose: (Tesseract code, name), as installed."""
    return [(code, ocr.lang_label(code)) for code in ocr.ocr_languages()]


def ocr_language_name(lang: str) -> str:
    """ "German" for the Tesseract languages "deu+eng" a document was read with ("" for none)."""
    return ocr.lang_label(lang)


def add_demo_papers(user_id: str) -> list[uploads.Accepted]:
    """Add the bundled open-access papers to the user's library and queue the new ones."""
    from bayes_app.library import demo

    accepted = demo.add_demo_papers(user_id)
    for acc in accepted:
        if acc.created:
            queue.get().ingest(acc.document_id, acc.generation)
    return accepted


def replace_file(user_id: str, document_id: str, fileobj: BinaryIO, filename: str) -> bool:
    """Put a new file under the document (size limit, PDF check, quota; the old file is removed
    when nothing else uses it); True when it changed (and was queued for ingestion)."""
    replaced = uploads.replace(user_id, document_id, fileobj, filename)
    if replaced.changed:
        queue.get().ingest(document_id, replaced.generation)
    return replaced.changed


def reindex(user_id: str, document_id: str) -> None:
    """Index the document again from its file."""
    with session_scope() as db:
        doc = lib.get_owned(db, user_id, document_id)
        lib.queue_ingest(doc)
        db.add(doc)
        generation = doc.ingest_generation
    queue.get().ingest(document_id, generation)


def update_metadata(user_id: str, document_id: str, changes: dict[str, Any]) -> None:
    """Edit title, authors, year, DOI, collections; a collection change is then copied into
    the document's vectors."""
    with session_scope() as db:
        lib.update_metadata(db, user_id, document_id, changes)
    if "collection_ids" in changes:
        queue.get().sync_collections(document_id)


def delete_document(user_id: str, document_id: str) -> None:
    """Delete the document, then purge its vectors (and its file unless another document uses it)."""
    with session_scope() as db:
        sha, still_used = lib.delete_document(db, user_id, document_id)
    queue.get().purge(document_id, None if still_used else sha)


def create_collection(user_id: str, name: str) -> CollectionRef:
    """A new collection of the user's."""
    with session_scope() as db:
        c = lib.create_collection(db, user_id, name)
        return CollectionRef(id=c.id, name=c.name)


def rename_collection(user_id: str, collection_id: str, name: str) -> CollectionRef:
    """Rename the user's collection (NotFound unless it is theirs)."""
    with session_scope() as db:
        c = lib.rename_collection(db, user_id, collection_id, name)
        return CollectionRef(id=c.id, name=c.name)


def delete_collection(user_id: str, collection_id: str) -> None:
    """Delete the collection (its documents stay), then update its documents' vectors."""
    with session_scope() as db:
        doc_ids = lib.delete_collection(db, user_id, collection_id)
    for document_id in doc_ids:
        queue.get().sync_collections(document_id)
