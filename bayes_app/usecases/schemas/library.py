"""What the library use cases return: documents, references, collections, search hits.

Built by the use cases inside their sessions (no ORM row leaves one) and used as is by the
HTTP API as `response_model`s (FastAPI documents and validates the JSON against them) and by
the pages' states. Ids are strings; times are ISO 8601 strings; credits are integer
micro-credits. Fields a client may ignore are still listed, so the document is complete."""

from __future__ import annotations

from pydantic import BaseModel

from bayes_app.search.hybrid import SearchHit as SearchHit  # the domain's record, as it is
from bayes_app.usecases.schemas.common import ErrorDetail


class Progress(BaseModel):
    done: int
    total: int
    fraction: float | None


class DocumentOut(BaseModel):
    id: str
    filename: str
    title: str
    authors: list[str]
    year: int | None
    doi: str | None
    status: str  # queued | processing | indexed | failed
    progress: Progress
    page_count: int
    chunk_count: int
    error: ErrorDetail | None
    collection_ids: list[str]
    file_size: int
    reference_count: int
    language: str  # ISO 639-1 ("" until detected)
    language_name: str
    ocr_pages: int = 0  # pages whose text came from OCR (text recognition)
    queue_position: int | None = None  # while queued: its place in the ingestion queue (1 = next)
    unread_pages: str = ""  # indexed without these pages: "Page 3 was not read: …" ("" = all read)
    ocr_language: str = ""  # the Tesseract languages OCR used ("deu+eng"; "" = no OCR)
    ocr_language_choice: str = "auto"  # chosen at upload ("auto" = the detected language)
    created_at: str | None


class DocumentFile(BaseModel):
    """A document to open (the viewer, the file download): the user's own or one shared with them."""

    id: str
    title: str
    filename: str
    file_sha256: str


class UploadedDocument(DocumentOut):
    duplicate: bool  # the same file was already in the library (nothing new was stored)


class DocumentList(BaseModel):
    documents: list[DocumentOut]


class Reference(BaseModel):
    position: int
    page: int | None
    authors: list[str]
    year: int | None
    title: str | None
    venue: str | None
    doi: str | None
    raw: str


class ReferenceList(BaseModel):
    document_id: str
    count: int
    references: list[Reference]


class CollectionRef(BaseModel):
    """A collection as a create or rename answers it (the HTTP API's `CollectionOut` too)."""

    id: str
    name: str


CollectionOut = CollectionRef


class CollectionRow(CollectionOut):
    document_count: int
    created_at: str


class CollectionList(BaseModel):
    collections: list[CollectionRow]
