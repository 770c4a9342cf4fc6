"""Documents and collections of one owner: create, list, edit, delete.

Every function takes the owner's id and treats another owner's object as missing
(`NotFound`), so callers cannot leak other users' documents by id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, BinaryIO

from sqlalchemy import func
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, delete, select

from bayes_app import errors
from bayes_app.library import citation_graph, fairness, pdf
from bayes_app.library.storage import StoredFile
from bayes_app.models import (
    Chunk,
    Collection,
    DocStatus,
    Document,
    DocumentCollection,
    DocumentReference,
    PageText,
    utcnow,
)
from bayes_app.settings import get_settings


class NotFound(errors.NotFound):
    def __init__(self, what: str = "document"):
        super().__init__(what)


class LibraryError(errors.DomainError):
    """A user-facing library error with a stable code."""


def check_upload_head(head: bytes, filename: str) -> None:
    """Reject what is certainly not a PDF before storing it: empty, or not starting with
    `%PDF-` (after an optional BOM and whitespace: HTML/SVG polyglots are refused)."""
    if not head:
        raise LibraryError("empty", f"{filename}: the file is empty (0 bytes).")
    if not pdf.has_pdf_header(head):
        raise LibraryError("not_pdf", f"{filename}: this is not a PDF file (a PDF starts with %PDF-).", 415)


def check_pdf(source: bytes | BinaryIO, filename: str) -> None:
    """:func:`check_upload_head`, then pdfium must open the file (a seekable stream is left where
    it was). A password-protected PDF passes: ingestion tells the user how to fix it."""
    if isinstance(source, bytes):
        head = source[:1024]
    else:
        position = source.tell()
        head = source.read(1024)
        source.seek(position)
    check_upload_head(head, filename)
    try:
        pdf.check_opens(source)
    except pdf.PdfError as err:
        if err.code != "encrypted":
            raise LibraryError(err.code, f"{filename}: {err.message}", 415 if err.code == "not_pdf" else 400) from None


@dataclass
class DocumentView:
    """What the UI and API show about a document."""

    id: str
    filename: str
    title: str
    authors: list[str]
    year: int | None
    doi: str | None
    status: str
    progress_done: int
    progress_total: int
    page_count: int
    chunk_count: int
    error_code: str | None
    error_message: str | None
    collection_ids: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    file_size: int = 0
    reference_count: int = 0
    language: str = ""  # ISO 639-1, "" = not detected (yet)
    ocr_pages: int = 0  # pages whose text came from OCR
    ocr_lang: str = ""  # the Tesseract languages OCR used ("deu+eng"; "" = none)
    ocr_lang_choice: str = ""  # chosen at upload ("" = follow the detected language)
    queue_position: int | None = None  # while queued: its place in the queue (1 = next)


def _view(doc: Document, collection_ids: list[str], queue_position: int | None = None) -> DocumentView:
    return DocumentView(
        queue_position=queue_position,
        id=doc.id,
        filename=doc.filename,
        title=doc.title or doc.filename,
        authors=list(doc.authors or []),
        year=doc.year,
        doi=doc.doi,
        status=doc.status,
        progress_done=doc.progress_done,
        progress_total=doc.progress_total,
        page_count=doc.page_count,
        chunk_count=doc.chunk_count,
        error_code=doc.error_code,
        error_message=doc.error_message,
        collection_ids=collection_ids,
        created_at=doc.created_at,
        file_size=doc.file_size,
        reference_count=doc.reference_count,
        language=doc.language or "",
        ocr_pages=doc.ocr_pages,
        ocr_lang=doc.ocr_lang or "",
        ocr_lang_choice=doc.ocr_lang_choice or "",
    )


def _collections_of(db: Session, doc_ids: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {d: [] for d in doc_ids}
    if doc_ids:
        for link in db.exec(select(DocumentCollection).where(col(DocumentCollection.document_id).in_(doc_ids))):
            out[link.document_id].append(link.collection_id)
    return out


def get_owned(db: Session, owner_id: str, document_id: str) -> Document:
    doc = db.get(Document, document_id)
    if doc is None or doc.owner_id != owner_id:
        raise NotFound("document")
    return doc


def view(db: Session, owner_id: str, document_id: str) -> DocumentView:
    doc = get_owned(db, owner_id, document_id)
    return _view(doc, _collections_of(db, [doc.id])[doc.id])


def list_documents(db: Session, owner_id: str, collection_id: str | None = None) -> list[DocumentView]:
    q = select(Document).where(Document.owner_id == owner_id)
    if collection_id:
        get_collection(db, owner_id, collection_id)
        q = q.join(DocumentCollection, col(DocumentCollection.document_id) == Document.id).where(
            DocumentCollection.collection_id == collection_id
        )
    docs = list(db.exec(q.order_by(col(Document.created_at).desc())))
    cols = _collections_of(db, [d.id for d in docs])
    places = (
        fairness.queue_positions(db, owner_id, get_settings().ingest_per_user)
        if any(d.status == DocStatus.QUEUED for d in docs)
        else {}
    )
    return [_view(d, cols[d.id], places.get(d.id)) for d in docs]


EMPTY_LIBRARY = "Your library is empty — add papers on the Library page first."
NOTHING_RELEVANT = (
    "Nothing in your library addresses this question. Try other words, widen the scope, or add papers on the topic."
)


def indexed_count(db: Session, owner_id: str) -> int:
    """How many of the owner's documents are indexed (searchable)."""
    return int(
        db.exec(
            select(func.count())
            .select_from(Document)
            .where(Document.owner_id == owner_id, Document.status == DocStatus.INDEXED)
        ).one()
    )


def stored_bytes(db: Session, owner_id: str) -> int:
    """How many bytes of files the owner's documents take (each document counted once)."""
    return int(
        db.exec(select(func.coalesce(func.sum(Document.file_size), 0)).where(Document.owner_id == owner_id)).one()
    )


def _quota_exceeded(filename: str, quota_bytes: int) -> LibraryError:
    return LibraryError(
        "quota_exceeded",
        f"{filename}: this would exceed your storage quota of "
        f"{quota_bytes / 2**20:,.0f} MB; delete documents you no longer need, or ask "
        "an administrator to raise BAYES_USER_QUOTA_MB.",
        413,
    )


def add_upload(
    db: Session,
    owner_id: str,
    filename: str,
    stored: StoredFile,
    collection_ids: list[str] | None = None,
    quota_bytes: int | None = None,
    ocr_lang_choice: str = "",
) -> tuple[Document, bool]:
    """A new queued document for this file, or the owner's existing one (same content).

    Returns (document, created). The caller enqueues ingestion after committing. Raises
    LibraryError 413 when the file would take the owner past `quota_bytes`.
    """
    existing = db.exec(
        select(Document).where(Document.owner_id == owner_id, Document.file_sha256 == stored.sha256)
    ).first()
    if existing is not None:
        return existing, False
    if quota_bytes is not None and stored_bytes(db, owner_id) + stored.size > quota_bytes:
        raise _quota_exceeded(filename, quota_bytes)
    for cid in collection_ids or []:
        get_collection(db, owner_id, cid)
    doc = Document(
        owner_id=owner_id,
        filename=(filename or "upload.pdf")[:500],
        file_sha256=stored.sha256,
        file_size=stored.size,
        title="",
        ingest_generation=1,
        ocr_lang_choice=ocr_lang_choice,
    )
    db.add(doc)
    try:
        db.flush()
    except IntegrityError:  # the same file raced in twice
        db.rollback()
        again = db.exec(
            select(Document).where(Document.owner_id == owner_id, Document.file_sha256 == stored.sha256)
        ).one()
        return again, False
    for cid in collection_ids or []:
        db.add(DocumentCollection(document_id=doc.id, collection_id=cid))
    return doc, True


def replace_file(
    db: Session, owner_id: str, document_id: str, stored: StoredFile, quota_bytes: int | None = None
) -> tuple[Document, str | None]:
    """Point a document at a new version of its file and queue re-ingestion.

    Returns (document, old_sha256 or None if unchanged). Raises LibraryError 413 when the new
    version would take the owner past `quota_bytes` (the old version's size no longer counts)."""
    doc = get_owned(db, owner_id, document_id)
    if doc.file_sha256 == stored.sha256:
        return doc, None
    clash = db.exec(
        select(Document).where(Document.owner_id == owner_id, Document.file_sha256 == stored.sha256)
    ).first()
    if clash is not None:
        raise LibraryError("duplicate", "This file is already in your library as another document.", 409)
    if quota_bytes is not None and stored_bytes(db, owner_id) - doc.file_size + stored.size > quota_bytes:
        raise _quota_exceeded(doc.filename, quota_bytes)
    old = doc.file_sha256
    doc.file_sha256, doc.file_size = stored.sha256, stored.size
    queue_ingest(doc)
    db.add(doc)
    return doc, old


def queue_ingest(doc: Document) -> None:
    """Mark a document queued for (re-)ingestion; stale jobs see a newer generation and stop."""
    doc.status = DocStatus.QUEUED
    doc.progress_done = doc.progress_total = 0
    doc.error_code = doc.error_message = None
    doc.ingest_generation += 1
    doc.updated_at = utcnow()


def update_metadata(db: Session, owner_id: str, document_id: str, changes: dict) -> Document:
    """Edit title / authors / year / doi and the document's collections."""
    doc = get_owned(db, owner_id, document_id)
    if "title" in changes:
        doc.title = _checked_title(changes["title"])
    if "authors" in changes:
        doc.authors = _checked_authors(changes["authors"])
    if "year" in changes:
        doc.year = _checked_year(changes["year"])
    if "doi" in changes:
        if changes["doi"] is not None and not isinstance(changes["doi"], str):
            raise LibraryError("invalid", "The DOI must be text.")
        doi = (changes["doi"] or "").strip()
        doc.doi = doi[:300] or None
    if {"title", "authors", "year", "doi"} & set(changes):
        doc.metadata_edited = True
    if {"title", "year", "doi"} & set(changes):
        db.add(doc)
        citation_graph.update_document(db, owner_id, doc.id)
    if "collection_ids" in changes:
        ids = changes["collection_ids"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise LibraryError("invalid", "collection_ids must be a list of ids.")
        set_document_collections(db, owner_id, doc.id, ids)
    doc.updated_at = utcnow()
    db.add(doc)
    return doc


def _checked_title(title: Any) -> str:
    if not isinstance(title, str):
        raise LibraryError("invalid", "The title must be text.")
    title = title.strip()
    if not title:
        raise LibraryError("invalid", "The title cannot be empty.")
    return title[:1000]


def _checked_authors(authors: Any) -> list[str]:
    """A list of names, or one string of names separated by commas or semicolons."""
    if isinstance(authors, str):
        authors = [a.strip() for a in authors.replace(";", ",").split(",")]
    if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
        raise LibraryError("invalid", "Authors must be a list of names.")
    return [a.strip()[:200] for a in authors if a.strip()][:100]


def _checked_year(year: Any) -> int | None:
    if year in (None, ""):
        return None
    if isinstance(year, bool) or not isinstance(year, (int, str)):
        raise LibraryError("invalid", "The year must be a whole number.")
    try:
        year = int(year)
    except (TypeError, ValueError, OverflowError):
        raise LibraryError("invalid", "The year must be a number.") from None
    if not 1000 <= year <= 2999:
        raise LibraryError("invalid", "The year must be between 1000 and 2999.")
    return year


def set_document_collections(db: Session, owner_id: str, document_id: str, collection_ids: list[str]) -> None:
    get_owned(db, owner_id, document_id)
    for cid in collection_ids:
        get_collection(db, owner_id, cid)
    db.exec(delete(DocumentCollection).where(col(DocumentCollection.document_id) == document_id))
    for cid in dict.fromkeys(collection_ids):
        db.add(DocumentCollection(document_id=document_id, collection_id=cid))


# Called inside the deleting transaction as fn(db, document_id, reason) before the row goes:
# reason is "deleted" (the user deleted it) or "source_removed" (deleted or trashed in Zotero).
# Mindmaps register here to mark their citations of the document "source removed".
RemovalHook = Callable[[Session, str, str], None]
_removal_hooks: list[RemovalHook] = []


def on_document_removed(hook: RemovalHook) -> RemovalHook:
    """Register a hook run whenever a document is removed (usable as a decorator)."""
    if hook not in _removal_hooks:
        _removal_hooks.append(hook)
    return hook


def delete_document(db: Session, owner_id: str, document_id: str, reason: str = "deleted") -> tuple[str, bool]:
    """Delete a document, its chunks, page texts and links.

    Returns (file_sha256, file_still_used) so the caller can remove the file and vectors."""
    doc = get_owned(db, owner_id, document_id)
    sha = doc.file_sha256
    for hook in _removal_hooks:
        hook(db, doc.id, reason)
    db.exec(delete(Chunk).where(col(Chunk.document_id) == doc.id))
    db.exec(delete(PageText).where(col(PageText.document_id) == doc.id))
    citation_graph.forget_document(db, doc.id)
    db.exec(delete(DocumentReference).where(col(DocumentReference.document_id) == doc.id))
    db.exec(delete(DocumentCollection).where(col(DocumentCollection.document_id) == doc.id))
    db.delete(doc)
    db.flush()
    still_used = db.exec(select(func.count()).select_from(Document).where(Document.file_sha256 == sha)).one() > 0
    return sha, still_used


def referenced_files(db: Session) -> set[str]:
    """The hashes of every stored file some document (of any owner) refers to."""
    return set(db.exec(select(Document.file_sha256).distinct()))


def file_in_use(db: Session, sha256: str) -> bool:
    return db.exec(select(Document.id).where(Document.file_sha256 == sha256)).first() is not None


def list_references(db: Session, owner_id: str, document_id: str) -> list[dict]:
    """The parsed reference list of one of the owner's documents, in order."""
    get_owned(db, owner_id, document_id)
    rows = db.exec(
        select(DocumentReference)
        .where(DocumentReference.document_id == document_id)
        .order_by(col(DocumentReference.position))
    )
    return [
        {
            "position": r.position,
            "page": r.page,
            "authors": list(r.authors or []),
            "year": r.year,
            "title": r.title,
            "venue": r.venue,
            "doi": r.doi,
            "raw": r.raw,
        }
        for r in rows
    ]


# ---- collections ---------------------------------------------------------------------------
def get_collection(db: Session, owner_id: str, collection_id: str) -> Collection:
    c = db.get(Collection, collection_id)
    if c is None or c.owner_id != owner_id:
        raise NotFound("collection")
    return c


def _clean_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise LibraryError("invalid", "A collection needs a name.")
    if len(name) > 300:
        raise LibraryError("invalid", "Collection names are at most 300 characters.")
    return name


def create_collection(db: Session, owner_id: str, name: str) -> Collection:
    name = _clean_name(name)
    if db.exec(select(Collection).where(Collection.owner_id == owner_id, Collection.name == name)).first():
        raise LibraryError("duplicate", f"You already have a collection named “{name}”.", 409)
    c = Collection(owner_id=owner_id, name=name)
    db.add(c)
    db.flush()
    return c


def rename_collection(db: Session, owner_id: str, collection_id: str, name: str) -> Collection:
    c = get_collection(db, owner_id, collection_id)
    name = _clean_name(name)
    other = db.exec(select(Collection).where(Collection.owner_id == owner_id, Collection.name == name)).first()
    if other is not None and other.id != c.id:
        raise LibraryError("duplicate", f"You already have a collection named “{name}”.", 409)
    c.name = name
    db.add(c)
    return c


def delete_collection(db: Session, owner_id: str, collection_id: str) -> list[str]:
    """Delete a collection (its documents stay). Returns the ids of documents that were in it."""
    c = get_collection(db, owner_id, collection_id)
    doc_ids = list(db.exec(select(DocumentCollection.document_id).where(DocumentCollection.collection_id == c.id)))
    db.exec(delete(DocumentCollection).where(col(DocumentCollection.collection_id) == c.id))
    db.delete(c)
    return doc_ids


def list_collections(db: Session, owner_id: str) -> list[dict]:
    rows = db.exec(
        select(Collection, func.count(col(DocumentCollection.document_id)))
        .join(DocumentCollection, col(DocumentCollection.collection_id) == Collection.id, isouter=True)
        .where(Collection.owner_id == owner_id)
        .group_by(Collection.id)
        .order_by(Collection.name)
    )
    return [{"id": c.id, "name": c.name, "document_count": n, "created_at": c.created_at.isoformat()} for c, n in rows]


def collection_ids_of(db: Session, document_id: str) -> list[str]:
    return list(db.exec(select(DocumentCollection.collection_id).where(DocumentCollection.document_id == document_id)))
