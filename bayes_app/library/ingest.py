"""The ingestion pipeline: PDF → page texts → chunks → dense + sparse vectors → index.

Idempotent and restartable: chunk ids are derived from the document and the chunk's
text (so unchanged text keeps its id and is never re-embedded), vectors are upserted by
chunk id, and the chunk rows are replaced in one transaction at the end. A run killed
at any point and started again ends in the same state, with no duplicate chunks or points.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlmodel import Session, col, select

from bayes_app.library import chunking, citation_graph, ingest_output, ocr, pdf, references, storage, structure
from bayes_app.library.documents import collection_ids_of
from bayes_app.library.pdf.metadata import title_from_layout
from bayes_app.library.scanned import OcrOptions, recognise_pages
from bayes_app.models import Chunk, DocStatus, Document, utcnow
from bayes_app.search import crosslang
from bayes_app.search.embeddings import Embedder, get_embedder

if TYPE_CHECKING:
    from bayes_app.search.index import IndexClient

log = logging.getLogger("bayes.ingest")

PROGRESS_EVERY_S = 0.4
_NAMESPACE = uuid.UUID("6f1c2a0e-5b7d-4d7e-9a61-2f1a0c6b9e11")


class IngestError(Exception):
    """A permanent, user-facing failure (bad PDF); retrying will not help."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class IngestResult:
    document_id: str
    status: str
    pages: int = 0
    chunks: int = 0
    embedded: int = 0
    removed: int = 0


def chunk_id(document_id: str, content_hash: str, occurrence: int) -> str:
    """Stable id for a chunk: same document + same text (+ nth repeat) → same id."""
    return uuid.uuid5(_NAMESPACE, f"{document_id}:{content_hash}:{occurrence}").hex


class _Progress:
    """Writes status/progress to the document row, throttled, in its own short transaction."""

    def __init__(self, session_factory: Callable[[], Session], document_id: str, generation: int):
        self._sf, self._id, self._gen = session_factory, document_id, generation
        self._last = 0.0

    def set(self, status: str, done: int, total: int, *, force: bool = False, **fields) -> bool:
        """Record progress; returns False when the document is gone or superseded."""
        now = time.monotonic()
        if not force and now - self._last < PROGRESS_EVERY_S:
            return True
        self._last = now
        with self._sf() as db:
            doc = db.get(Document, self._id)
            if doc is None or doc.ingest_generation != self._gen:
                return False
            doc.status, doc.progress_done, doc.progress_total = status, done, total
            for k, v in fields.items():
                setattr(doc, k, v)
            doc.updated_at = utcnow()
            db.add(doc)
            db.commit()
        return True


def _text_budget() -> pdf.TextBudget:
    from bayes_app.settings import get_settings

    settings = get_settings()
    return pdf.TextBudget(settings.max_page_chars, settings.max_document_chars)


class Superseded(Exception):
    """The document was deleted or re-queued while this job ran."""


def ingest_document(
    session_factory: Callable[[], Session],
    document_id: str,
    generation: int,
    *,
    files_root: Path | storage.FileStore,
    index: IndexClient,
    embedder: Embedder,
    max_pages: int | None = None,
    cross_embedder: Embedder | None = None,
    ocr_options: OcrOptions | None = None,
) -> IngestResult:
    """Ingest one document version (pages without a text layer are read by OCR when
    ``ocr_options`` is given). Raises IngestError for bad PDFs (after marking the
    document failed); other exceptions are transient and the caller may retry.

    Passages not in English also get a multilingual vector (``cross_embedder``, default the
    cross-language model) in the index's cross-language collection, when it has one."""
    with session_factory() as db:
        doc = db.get(Document, document_id)
        if doc is None or doc.ingest_generation != generation:
            return IngestResult(document_id, "superseded")
        if doc.status == DocStatus.INDEXED:
            return IngestResult(document_id, DocStatus.INDEXED, doc.page_count, doc.chunk_count)
        owner_id, sha, edited = doc.owner_id, doc.file_sha256, doc.metadata_edited
    progress = _Progress(session_factory, document_id, generation)
    job = Job(
        session_factory,
        document_id,
        generation,
        owner_id,
        sha,
        edited,
        store=storage.as_store(files_root),
        index=index,
        embedder=embedder,
        progress=progress,
        max_pages=max_pages,
        cross_embedder=cross_embedder,
        ocr_options=ocr_options,
    )
    try:
        return _run(job)
    except pdf.PdfError as err:
        progress.set(DocStatus.FAILED, 0, 0, force=True, error_code=err.code, error_message=err.message)
        raise IngestError(err.code, err.message) from None
    except Superseded:
        return IngestResult(document_id, "superseded")


@dataclass
class Job:
    """What one run ingests and with what: the document version, its file, the index and models.
    ``progress`` None is the background re-analysis of an indexed document."""

    session_factory: Callable[[], Session]
    document_id: str
    generation: int
    owner_id: str
    sha: str
    edited: bool
    store: storage.FileStore
    index: IndexClient
    embedder: Embedder
    progress: _Progress | None
    max_pages: int | None = None
    cross_embedder: Embedder | None = None
    ocr_options: OcrOptions | None = None

    def report(self, status: str, done: int, total: int, *, force: bool = False, **fields) -> None:
        if self.progress is not None and not self.progress.set(status, done, total, force=force, **fields):
            raise Superseded


@dataclass
class Parsed:
    """The pages as read (OCR'd words by page number), and the file's metadata (None: keep the row's)."""

    pages: list[pdf.PageLayout]
    ocr_words: dict[int, tuple[ocr.OcrWord, ...]]
    ocr_lang: str
    unread: list[str]  # pages OCR could not read, each with its reason
    meta: pdf.PdfMetadata | None


@dataclass
class Plan:
    """The document's passages and references, and what the index needs done about them."""

    spans: list[list[structure.Span]]
    refs: list[references.Reference]
    chunks: list[chunking.Chunk]
    ids: list[str]
    language: str
    lang_of: dict[str, str]
    text_of: dict[str, str]
    collection_ids: list[str]
    to_embed: list[tuple[str, chunking.Chunk]]  # new passages: dense + sparse vectors
    cross: list[tuple[str, chunking.Chunk]]  # passages not in English that need a multilingual vector
    removed: set[str]
    relabel: dict[str, list[str]]  # role → kept passages whose role payload changes


def _run(job: Job) -> IngestResult:
    """Parse, classify, chunk, embed what is new, swap the chunk rows. With ``job.progress``
    None (the background re-analysis of an indexed document) its status stays ``indexed``."""
    if not job.store.exists(job.sha):
        raise pdf.PdfError("missing_file", "The stored file is missing; upload it again.")
    parsed = _parse(job)
    plan = _plan(job, parsed.pages)
    _embed(job, plan)
    _commit(job, parsed, plan)
    log.info(
        "indexed %s: %d pages, %d chunks (%d embedded, %d removed, %d relabelled), %d references",
        job.document_id,
        len(parsed.pages),
        len(plan.chunks),
        len(plan.to_embed),
        len(plan.removed),
        sum(map(len, plan.relabel.values())),
        len(plan.refs),
    )
    return IngestResult(
        job.document_id, DocStatus.INDEXED, len(parsed.pages), len(plan.chunks), len(plan.to_embed), len(plan.removed)
    )


def _ocr_options(job: Job) -> OcrOptions | None:
    """The job's OCR options, in the language chosen at upload when they name none."""
    options = job.ocr_options
    if options is not None and not options.lang:
        with job.session_factory() as db:
            choice = getattr(db.get(Document, job.document_id), "ocr_lang_choice", "")
        if choice:
            options = dataclasses.replace(options, lang=choice)
    return options


def _parse(job: Job) -> Parsed:
    """1. parse, page by page, with line geometry for the structure analysis; pages without a
    usable text layer are read by OCR (their word boxes kept for highlighting)."""
    ocr_options = _ocr_options(job)
    pages: list[pdf.PageLayout] = []
    ocr_words: dict[int, tuple[ocr.OcrWord, ...]] = {}
    ocr_lang = ""
    unread: list[str] = []
    # pdfium needs a file: the local store's own, or a temp copy of the object
    with job.store.local_file(job.sha) as path, pdf.pdf_document(path, max_pages=job.max_pages) as document:
        total_pages = len(document)
        job.report(DocStatus.PARSING, 0, total_pages, force=True, page_count=total_pages)
        for page in pdf.iter_layouts(document, budget=_text_budget(), require_text=ocr_options is None):
            pages.append(page)
            job.report(DocStatus.PARSING, len(pages), total_pages)
        if ocr_options is not None:
            ocr_lang = recognise_pages(document, pages, ocr_words, ocr_options, job.report, unread)
        meta = (
            None
            if job.edited or job.progress is None
            else pdf.extract_metadata(document, pages[0].text if pages else "")
        )
        if meta is not None and not meta.title and 1 in ocr_words:  # a scan: its printed title, read by OCR
            meta = dataclasses.replace(meta, title=title_from_layout(pages[0]))
    return Parsed(pages, ocr_words, ocr_lang, unread, meta)


def _chunk_ids(document_id: str, chunks: list[chunking.Chunk]) -> list[str]:
    """Stable ids: the nth passage with the same text keeps the nth id."""
    seen: Counter[str] = Counter()
    ids = []
    for c in chunks:
        ids.append(chunk_id(document_id, c.content_hash, seen[c.content_hash]))
        seen[c.content_hash] += 1
    return ids


def _plan(job: Job, pages: list[pdf.PageLayout]) -> Plan:
    """2. roles, reference list, chunks; ids are stable for unchanged text."""
    spans = structure.analyze(pages)
    refs = references.parse_references(pages, spans)
    chunks = list(chunking.iter_structured_chunks(pages, spans))
    ids = _chunk_ids(job.document_id, chunks)
    embed_texts = [chunking.embedding_text(c.text) for c in chunks]
    language, chunk_langs = crosslang.passage_languages(embed_texts)

    with job.session_factory() as db:
        existing = dict(db.exec(select(Chunk.id, Chunk.role).where(Chunk.document_id == job.document_id)).all())
        collection_ids = collection_ids_of(db, job.document_id)
        doc = db.get(Document, job.document_id)
        old_version = doc.structure_version if doc is not None else 0
        # Indexed before languages were detected: kept passages have no multilingual vector yet.
        undetected = doc is not None and not doc.language
    lang_of = dict(zip(ids, chunk_langs))
    cross = [
        (cid, c)
        for cid, c in zip(ids, chunks)
        if crosslang.needs_cross_vector(lang_of[cid]) and (cid not in existing or undetected)
    ]
    # Kept passages keep their vectors; only their role payload may need refreshing.
    relabel: dict[str, list[str]] = {}
    for cid, c in zip(ids, chunks):
        if cid in existing and (existing[cid] != c.role or old_version < 1):
            relabel.setdefault(c.role, []).append(cid)
    return Plan(
        spans=spans,
        refs=refs,
        chunks=chunks,
        ids=ids,
        language=language,
        lang_of=lang_of,
        text_of=dict(zip(ids, embed_texts)),
        collection_ids=collection_ids,
        to_embed=[(cid, c) for cid, c in zip(ids, chunks) if cid not in existing],
        cross=cross if job.index.cross_collection else [],
        removed=set(existing) - set(ids),
        relabel=relabel,
    )


def _embed(job: Job, plan: Plan) -> None:
    """3. embed + index only new/changed chunks (upserts by id: safe to repeat)."""
    cross_embedder = job.cross_embedder
    if plan.cross and cross_embedder is None:
        cross_embedder = get_embedder(crosslang.CROSS_MODEL)
    job.report(DocStatus.EMBEDDING, 0, len(plan.to_embed), force=True)
    ingest_output.embed_new(job, plan)
    if cross_embedder is not None:
        ingest_output.embed_cross(job, plan, cross_embedder)
    for role, cids in plan.relabel.items():
        job.index.set_roles(cids, role)


def _commit(job: Job, parsed: Parsed, plan: Plan) -> None:
    """4. commit chunks, page texts, references and the final status in one transaction."""
    with job.session_factory() as db:
        doc = db.get(Document, job.document_id)
        if (
            doc is None
            or doc.ingest_generation != job.generation
            or (job.progress is None and doc.status != DocStatus.INDEXED)
        ):
            _drop_stray_vectors(db, job, plan, doc)
            raise Superseded
        if plan.removed:
            job.index.delete_chunks(sorted(plan.removed))
        ingest_output.replace_rows(db, job, parsed, plan)
        ingest_output.finish_document(doc, parsed, plan)
        db.add(doc)
        citation_graph.update_document(db, job.owner_id, job.document_id)
        if job.progress is not None:
            doc.progress_done = doc.progress_total = len(plan.to_embed)
        # indexed without the pages that could not be read: the reasons are shown with it
        doc.error_code, doc.error_message = ("pages_unread", " ".join(parsed.unread)) if parsed.unread else (None, None)
        doc.updated_at = utcnow()
        db.add(doc)
        db.commit()


def _drop_stray_vectors(db: Session, job: Job, plan: Plan, doc: Document | None) -> None:
    """Superseded: vectors of passages that never got a row would linger in the index."""
    committed = set(db.exec(select(Chunk.id).where(Chunk.document_id == job.document_id)))
    stray = [cid for cid, _ in [*plan.to_embed, *plan.cross] if cid not in committed]
    if stray and doc is not None and doc.status == DocStatus.INDEXED:
        job.index.delete_chunks(stray)


def restructure_document(
    session_factory: Callable[[], Session],
    document_id: str,
    generation: int,
    *,
    files_root: Path | storage.FileStore,
    index: IndexClient,
    embedder: Embedder,
    ocr_options: OcrOptions | None = None,
) -> IngestResult:
    """Re-analyse an indexed document made by an older :data:`structure.VERSION`, in the
    background: it stays searchable, passages whose text did not change keep their ids and
    vectors (only their role is updated), new passages are embedded, and the rows are swapped
    in one transaction. A re-ingest requested meanwhile wins (this run then does nothing)."""
    with session_factory() as db:
        doc = db.get(Document, document_id)
        if (
            doc is None
            or doc.ingest_generation != generation
            or doc.status != DocStatus.INDEXED
            or doc.structure_version >= structure.VERSION
        ):
            return IngestResult(document_id, "skipped")
        owner_id, sha = doc.owner_id, doc.file_sha256
    job = Job(
        session_factory,
        document_id,
        generation,
        owner_id,
        sha,
        edited=True,
        store=storage.as_store(files_root),
        index=index,
        embedder=embedder,
        progress=None,
        ocr_options=ocr_options,
    )
    try:
        return _run(job)
    except (pdf.PdfError, Superseded):
        return IngestResult(document_id, "skipped")


def outdated_structure(db: Session, limit: int = 20) -> list[tuple[str, int]]:
    """Indexed documents analysed by an older structure version (oldest first)."""
    rows = db.exec(
        select(Document.id, Document.ingest_generation)
        .where(
            Document.status == DocStatus.INDEXED,
            Document.structure_version < structure.VERSION,
        )
        .order_by(col(Document.updated_at))
        .limit(limit)
    )
    return [(d, g) for d, g in rows]


def mark_failed(
    session_factory: Callable[[], Session], document_id: str, generation: int, code: str, message: str
) -> None:
    """Give up on a document after transient errors exhausted the retries."""
    with session_factory() as db:
        doc = db.get(Document, document_id)
        if doc is not None and doc.ingest_generation == generation and doc.status != DocStatus.INDEXED:
            doc.status, doc.error_code, doc.error_message = DocStatus.FAILED, code, message
            doc.updated_at = utcnow()
            db.add(doc)
            db.commit()


def stale_documents(db: Session, older_than_s: float) -> list[tuple[str, int]]:
    """Documents being parsed/embedded with no progress for a while: their worker died.
    (Queued ones are still in the broker's queue and need nothing.)"""
    cutoff = utcnow().timestamp() - older_than_s
    rows = db.exec(select(Document).where(col(Document.status).in_((DocStatus.PARSING, DocStatus.EMBEDDING))))
    return [(d.id, d.ingest_generation) for d in rows if d.updated_at.timestamp() < cutoff]


def never_sent(db: Session, was_sent: Callable[[str, int], bool]) -> list[tuple[str, int]]:
    """Queued documents whose ingest message was never sent (created while Redis was down)."""
    rows = db.exec(select(Document).where(Document.status == DocStatus.QUEUED))
    return [(d.id, d.ingest_generation) for d in rows if not was_sent(d.id, d.ingest_generation)]
