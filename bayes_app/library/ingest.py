"""The ingestion pipeline: PDF → page texts → chunks → dense + sparse vectors → index.

Idempotent and restartable: chunk ids are derived from the document and the chunk's
text (so unchanged text keeps its id and is never re-embedded), vectors are upserted by
chunk id, and the chunk rows are replaced in one transaction at the end. A run killed
at any point and started again ends in the same state, with no duplicate chunks or points.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlmodel import Session, col, delete, select

from bayes_app.library import chunking, citation_graph, ocr, pdf, references, storage, structure
from bayes_app.library.documents import collection_ids_of
from bayes_app.library.pdf.metadata import title_from_layout
from bayes_app.library.scanned import OcrOptions, recognise_pages
from bayes_app.models import Chunk, DocStatus, Document, DocumentReference, PageText, utcnow
from bayes_app.search import crosslang, sparse
from bayes_app.search.embeddings import Embedder, get_embedder
from bayes_app.search.points import CrossPoint, IndexPoint, Vector

if TYPE_CHECKING:
    from bayes_app.search.index import IndexClient

log = logging.getLogger("bayes.ingest")

EMBED_BATCH = 64
PROGRESS_EVERY_S = 0.4
_NAMESPACE = uuid.UUID("6f1c2a0e-5b7d-4d7e-9a61-2f1a0c6b9e11")
# One embedding at a time per process: the model already uses every core.
_EMBED_LOCK = threading.Lock()


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
    try:
        return _run(
            session_factory,
            document_id,
            generation,
            owner_id,
            sha,
            edited,
            files_root,
            index,
            embedder,
            progress,
            max_pages,
            cross_embedder,
            ocr_options,
        )
    except pdf.PdfError as err:
        progress.set(DocStatus.FAILED, 0, 0, force=True, error_code=err.code, error_message=err.message)
        raise IngestError(err.code, err.message) from None
    except Superseded:
        return IngestResult(document_id, "superseded")


def _run(
    session_factory,
    document_id,
    generation,
    owner_id,
    sha,
    edited,
    files_root,
    index,
    embedder,
    progress: _Progress | None,
    max_pages: int | None = None,
    cross_embedder: Embedder | None = None,
    ocr_options: OcrOptions | None = None,
) -> IngestResult:
    """Parse, classify, chunk, embed what is new, swap the chunk rows. ``progress`` None is the
    background re-analysis of an indexed document: its status stays ``indexed`` throughout."""
    store = storage.as_store(files_root)
    if not store.exists(sha):
        raise pdf.PdfError("missing_file", "The stored file is missing; upload it again.")

    def report(status: str, done: int, total: int, *, force: bool = False, **fields) -> None:
        if progress is not None and not progress.set(status, done, total, force=force, **fields):
            raise Superseded

    # 1. parse, page by page, with line geometry for the structure analysis; pages without a
    #    usable text layer are read by OCR (their word boxes kept for highlighting)
    pages: list[pdf.PageLayout] = []
    ocr_words: dict[int, tuple[ocr.OcrWord, ...]] = {}
    ocr_lang = ""
    unread: list[str] = []  # pages OCR could not read, each with its reason
    if ocr_options is not None and not ocr_options.lang:
        with session_factory() as db:
            choice = getattr(db.get(Document, document_id), "ocr_lang_choice", "")
        if choice:  # the language chosen at upload
            ocr_options = dataclasses.replace(ocr_options, lang=choice)
    # pdfium needs a file: the local store's own, or a temp copy of the object
    with store.local_file(sha) as path, pdf.pdf_document(path, max_pages=max_pages) as document:
        total_pages = len(document)
        report(DocStatus.PARSING, 0, total_pages, force=True, page_count=total_pages)
        for page in pdf.iter_layouts(document, budget=_text_budget(), require_text=ocr_options is None):
            pages.append(page)
            report(DocStatus.PARSING, len(pages), total_pages)
        if ocr_options is not None:
            ocr_lang = recognise_pages(document, pages, ocr_words, ocr_options, report, unread)
        meta = None if edited or progress is None else pdf.extract_metadata(document, pages[0].text if pages else "")
        if meta is not None and not meta.title and 1 in ocr_words:  # a scan: its printed title, read by OCR
            meta = dataclasses.replace(meta, title=title_from_layout(pages[0]))

    # 2. roles, reference list, chunks; ids are stable for unchanged text
    spans = structure.analyze(pages)
    refs = references.parse_references(pages, spans)
    chunks = list(chunking.iter_structured_chunks(pages, spans))
    seen: Counter[str] = Counter()
    ids = []
    for c in chunks:
        ids.append(chunk_id(document_id, c.content_hash, seen[c.content_hash]))
        seen[c.content_hash] += 1

    embed_texts = [chunking.embedding_text(c.text) for c in chunks]
    language, chunk_langs = crosslang.passage_languages(embed_texts)

    with session_factory() as db:
        existing = dict(db.exec(select(Chunk.id, Chunk.role).where(Chunk.document_id == document_id)).all())
        collection_ids = collection_ids_of(db, document_id)
        doc = db.get(Document, document_id)
        old_version = doc.structure_version if doc is not None else 0
        # Indexed before languages were detected: kept passages have no multilingual vector yet.
        undetected = doc is not None and not doc.language
    to_embed = [(cid, c) for cid, c in zip(ids, chunks) if cid not in existing]
    lang_of = dict(zip(ids, chunk_langs))
    text_of = dict(zip(ids, embed_texts))
    cross = [
        (cid, c)
        for cid, c in zip(ids, chunks)
        if crosslang.needs_cross_vector(lang_of[cid]) and (cid not in existing or undetected)
    ]
    if not index.cross_collection:
        cross = []
    if cross and cross_embedder is None:
        cross_embedder = get_embedder(crosslang.CROSS_MODEL)
    removed = set(existing) - set(ids)
    # Kept passages keep their vectors; only their role payload may need refreshing.
    relabel: dict[str, list[str]] = {}
    for cid, c in zip(ids, chunks):
        if cid in existing and (existing[cid] != c.role or old_version < 1):
            relabel.setdefault(c.role, []).append(cid)

    # 3. embed + index only new/changed chunks (upserts by id: safe to repeat)
    report(DocStatus.EMBEDDING, 0, len(to_embed), force=True)
    done = 0
    vectors: dict[str, Vector] = {}  # content hash → vector: repeated passages embed once
    for start in range(0, len(to_embed), EMBED_BATCH):
        batch = to_embed[start : start + EMBED_BATCH]
        texts = [chunking.embedding_text(c.text) for _, c in batch]
        fresh = {c.content_hash: t for (_, c), t in zip(batch, texts) if c.content_hash not in vectors}
        if fresh:
            with _EMBED_LOCK:
                dense = embedder.embed_passages(list(fresh.values()))
            vectors.update(zip(fresh.keys(), dense))
        points = [
            IndexPoint(
                id=cid,
                dense=vectors[c.content_hash],
                sparse=sparse.document_vector(texts[i]),
                owner_id=owner_id,
                document_id=document_id,
                collection_ids=collection_ids,
                page=c.page,
                chunk_index=c.index,
                role=c.role,
            )
            for i, (cid, c) in enumerate(batch)
        ]
        index.upsert_chunks(points)
        done += len(batch)
        report(DocStatus.EMBEDDING, done, len(to_embed))
    # multilingual vectors of the passages not in English (the cross-language leg)
    cross_vectors: dict[str, Vector] = {}
    for start in range(0, len(cross), EMBED_BATCH):
        batch = cross[start : start + EMBED_BATCH]
        fresh = {c.content_hash: text_of[cid] for cid, c in batch if c.content_hash not in cross_vectors}
        if fresh:
            assert cross_embedder is not None  # set above when there are passages not in English
            with _EMBED_LOCK:
                dense = cross_embedder.embed_passages(list(fresh.values()))
            cross_vectors.update(zip(fresh.keys(), dense))
        index.upsert_cross(
            [
                CrossPoint(
                    id=cid,
                    dense=cross_vectors[c.content_hash],
                    lang=lang_of[cid],
                    owner_id=owner_id,
                    document_id=document_id,
                    collection_ids=collection_ids,
                    page=c.page,
                    chunk_index=c.index,
                    role=c.role,
                )
                for cid, c in batch
            ]
        )
        report(DocStatus.EMBEDDING, done, len(to_embed))
    for role, cids in relabel.items():
        index.set_roles(cids, role)

    # 4. commit chunks, page texts, references and the final status in one transaction
    with session_factory() as db:
        doc = db.get(Document, document_id)
        if doc is None or doc.ingest_generation != generation or (progress is None and doc.status != DocStatus.INDEXED):
            # Vectors of passages that never got a row would linger in the index.
            committed = set(db.exec(select(Chunk.id).where(Chunk.document_id == document_id)))
            stray = [cid for cid, _ in [*to_embed, *cross] if cid not in committed]
            if stray and doc is not None and doc.status == DocStatus.INDEXED:
                index.delete_chunks(stray)
            raise Superseded
        if removed:
            index.delete_chunks(sorted(removed))
        db.exec(delete(Chunk).where(Chunk.document_id == document_id))
        db.exec(delete(PageText).where(PageText.document_id == document_id))
        db.exec(delete(DocumentReference).where(DocumentReference.document_id == document_id))
        db.add_all(
            [
                PageText(
                    document_id=document_id,
                    page=p.number,
                    text=p.text,
                    spans=[s.to_json() for s in page_spans],
                    ocr_words=[w.to_json() for w in ocr_words.get(p.number, ())],
                )
                for p, page_spans in zip(pages, spans)
            ]
        )
        db.add_all(
            [
                Chunk(
                    id=cid,
                    document_id=document_id,
                    owner_id=owner_id,
                    chunk_index=c.index,
                    page=c.page,
                    char_start=c.char_start,
                    char_end=c.char_end,
                    text=c.text,
                    content_hash=c.content_hash,
                    token_count=c.token_count,
                    role=c.role,
                    section=c.section,
                )
                for cid, c in zip(ids, chunks)
            ]
        )
        db.add_all(
            [
                DocumentReference(
                    document_id=document_id,
                    position=k,
                    page=r.page,
                    raw=r.raw[:5000],
                    authors=r.authors,
                    year=r.year,
                    title=r.title,
                    venue=r.venue,
                    doi=(r.doi or "")[:300] or None,
                )
                for k, r in enumerate(refs)
            ]
        )
        if meta is not None:
            doc.title = meta.title or doc.title or Path(doc.filename).stem
            doc.authors = meta.authors or doc.authors
            doc.year = meta.year  # the printed year or none (never the file's date)
            doc.doi = meta.doi or doc.doi
        elif not doc.title:
            doc.title = Path(doc.filename).stem
        doc.status = DocStatus.INDEXED
        doc.page_count, doc.chunk_count = len(pages), len(chunks)
        doc.structure_version, doc.reference_count = structure.VERSION, len(refs)
        doc.language = language
        doc.ocr_pages = len(ocr_words)
        doc.ocr_lang = ocr_lang if ocr_words else ""
        db.add(doc)
        citation_graph.update_document(db, owner_id, document_id)
        if progress is not None:
            doc.progress_done = doc.progress_total = len(to_embed)
        # indexed without the pages that could not be read: the reasons are shown with it
        doc.error_code, doc.error_message = ("pages_unread", " ".join(unread)) if unread else (None, None)
        doc.updated_at = utcnow()
        db.add(doc)
        db.commit()
    log.info(
        "indexed %s: %d pages, %d chunks (%d embedded, %d removed, %d relabelled), %d references",
        document_id,
        len(pages),
        len(chunks),
        len(to_embed),
        len(removed),
        sum(map(len, relabel.values())),
        len(refs),
    )
    return IngestResult(document_id, DocStatus.INDEXED, len(pages), len(chunks), len(to_embed), len(removed))


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
    try:
        return _run(
            session_factory,
            document_id,
            generation,
            owner_id,
            sha,
            True,
            files_root,
            index,
            embedder,
            None,
            ocr_options=ocr_options,
        )
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
