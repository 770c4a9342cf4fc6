"""The library aggregate: collections, documents and their chunks."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from bayes_app.models.base import UTCDateTime, new_id, utcnow


class DocStatus:
    QUEUED = "queued"
    PARSING = "parsing"
    RECOGNISING = "recognising"  # OCR of pages without a text layer
    EMBEDDING = "embedding"
    INDEXED = "indexed"
    FAILED = "failed"
    ACTIVE = (QUEUED, PARSING, RECOGNISING, EMBEDDING)


class Collection(SQLModel, table=True):
    __tablename__ = "collections"
    __table_args__ = (UniqueConstraint("owner_id", "name", name="uq_collection_owner_name"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="users.id", index=True, max_length=32, ondelete="CASCADE")
    name: str = Field(max_length=300)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class Document(SQLModel, table=True):
    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("owner_id", "file_sha256", name="uq_document_owner_file"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="users.id", index=True, max_length=32, ondelete="CASCADE")
    filename: str = Field(max_length=500)
    file_sha256: str = Field(max_length=64, index=True)
    file_size: int = 0
    title: str = Field(default="", max_length=1000)
    authors: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    year: int | None = None
    doi: str | None = Field(default=None, max_length=300)
    metadata_edited: bool = False  # the user's edits win over re-extracted metadata
    status: str = Field(default=DocStatus.QUEUED, max_length=20, index=True)
    progress_done: int = 0
    progress_total: int = 0
    page_count: int = 0
    chunk_count: int = 0
    error_code: str | None = Field(default=None, max_length=50)
    error_message: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    ingest_generation: int = 0  # bumped per (re-)ingest request; stale jobs stop
    # library.structure.VERSION the chunks were classified with; older ones are re-analysed
    # in the background (0 = ingested before roles existed).
    structure_version: int = Field(default=0, index=True)
    reference_count: int = 0
    # library.citation_graph.VERSION this document's citation links were made with (0 = never);
    # older ones are re-linked in the background.
    citations_version: int = Field(default=0, index=True)
    ocr_pages: int = 0  # pages whose text came from OCR (library.ocr)
    ocr_lang: str = Field(default="", max_length=40)  # the Tesseract languages OCR used ("deu+eng")
    # the Tesseract language chosen at upload for OCR ("" = follow the detected language)
    ocr_lang_choice: str = Field(default="", max_length=20)
    # ISO 639-1 code of the language most of the text is in ("" = not detected / not yet
    # ingested); non-English documents turn on the cross-language search leg.
    language: str = Field(default="", max_length=8, index=True)
    source: str = Field(default="upload", max_length=20)
    # Set for documents synced from Zotero (the PDF attachment and its parent item).
    zotero_library_id: str | None = Field(default=None, max_length=32, index=True)
    zotero_item_key: str | None = Field(default=None, max_length=16)
    zotero_attachment_key: str | None = Field(default=None, max_length=16)
    zotero_version: int | None = None
    zotero_md5: str | None = Field(default=None, max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class DocumentCollection(SQLModel, table=True):
    __tablename__ = "document_collections"

    document_id: str = Field(foreign_key="documents.id", primary_key=True, max_length=32, ondelete="CASCADE")
    collection_id: str = Field(
        foreign_key="collections.id", primary_key=True, max_length=32, ondelete="CASCADE", index=True
    )


class Chunk(SQLModel, table=True):
    """A passage of one page: `text == page_text[char_start:char_end]`. The id is stable for
    unchanged text (see library.ingest.chunk_id), so it doubles as the vector point id."""

    __tablename__ = "chunks"

    id: str = Field(primary_key=True, max_length=32)
    document_id: str = Field(foreign_key="documents.id", index=True, max_length=32, ondelete="CASCADE")
    owner_id: str = Field(index=True, max_length=32)
    chunk_index: int
    page: int
    char_start: int
    char_end: int
    text: str = Field(sa_column=Column(Text, nullable=False))
    content_hash: str = Field(max_length=64)
    token_count: int = 0
    role: str = Field(default="body", max_length=20)  # library.structure.Role
    section: str = Field(default="", max_length=500)  # heading path, "4 Methodology › 4.3 Selector"


class PageText(SQLModel, table=True):
    """The raw text of each page as extracted, so quotes can be located and highlighted later."""

    __tablename__ = "page_texts"

    document_id: str = Field(foreign_key="documents.id", primary_key=True, max_length=32, ondelete="CASCADE")
    page: int = Field(primary_key=True)
    text: str = Field(sa_column=Column(Text, nullable=False))
    # Role spans of this page: [[start, end, role, section], ...] (library.structure.Span).
    spans: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False, server_default="[]"))
    # Pages read by OCR: [[start, end, x0, top, x1, bottom], ...] per word (ocr.OcrWord), the
    # boxes as fractions of the displayed page; empty for text-layer pages.
    ocr_words: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False, server_default="[]"))


class DocumentReference(SQLModel, table=True):
    """One entry of a document's reference list, parsed (library.references)."""

    __tablename__ = "document_references"

    document_id: str = Field(foreign_key="documents.id", primary_key=True, max_length=32, ondelete="CASCADE")
    position: int = Field(primary_key=True)  # 0-based order in the list
    page: int = 0
    raw: str = Field(sa_column=Column(Text, nullable=False))
    authors: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    year: int | None = None
    title: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    venue: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    doi: str | None = Field(default=None, max_length=300)


class DocumentCitation(SQLModel, table=True):
    """A reference of one library document that names another library document (the
    citation graph, library.citation_graph). Rebuilt per document as documents arrive,
    change metadata or leave."""

    __tablename__ = "document_citations"

    citing_id: str = Field(foreign_key="documents.id", primary_key=True, max_length=32, ondelete="CASCADE")
    position: int = Field(primary_key=True)  # the reference's position in the citing list
    cited_id: str = Field(foreign_key="documents.id", index=True, max_length=32, ondelete="CASCADE")
    owner_id: str = Field(index=True, max_length=32)
    how: str = Field(max_length=10)  # citation_match.Match.how: doi | title | fuzzy
    score: float = 100.0
