"""What an ingestion run (:mod:`bayes_app.library.ingest`) writes: the new passages' vectors
into the index, embedded in batches, and the document's rows (page texts, chunks, references,
the document's own fields)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from sqlmodel import Session, col, delete

from bayes_app.library import chunking, structure
from bayes_app.models import Chunk, DocStatus, Document, DocumentReference, PageText
from bayes_app.search import sparse
from bayes_app.search.embeddings import Embedder
from bayes_app.search.points import CrossPoint, IndexPoint, Vector

if TYPE_CHECKING:
    from bayes_app.library.ingest import Job, Parsed, Plan

EMBED_BATCH = 64
# One embedding at a time per process: the model already uses every core.
_EMBED_LOCK = threading.Lock()


def embed_new(job: Job, plan: Plan) -> None:
    """Dense and sparse vectors of the new passages."""
    done = 0
    vectors: dict[str, Vector] = {}  # content hash → vector: repeated passages embed once
    for start in range(0, len(plan.to_embed), EMBED_BATCH):
        batch = plan.to_embed[start : start + EMBED_BATCH]
        texts = [chunking.embedding_text(c.text) for _, c in batch]
        fresh = {c.content_hash: t for (_, c), t in zip(batch, texts) if c.content_hash not in vectors}
        if fresh:
            with _EMBED_LOCK:
                dense = job.embedder.embed_passages(list(fresh.values()))
            vectors.update(zip(fresh.keys(), dense))
        points = [
            IndexPoint(
                id=cid,
                dense=vectors[c.content_hash],
                sparse=sparse.document_vector(texts[i]),
                owner_id=job.owner_id,
                document_id=job.document_id,
                collection_ids=plan.collection_ids,
                page=c.page,
                chunk_index=c.index,
                role=c.role,
            )
            for i, (cid, c) in enumerate(batch)
        ]
        job.index.upsert_chunks(points)
        done += len(batch)
        job.report(DocStatus.EMBEDDING, done, len(plan.to_embed))


def embed_cross(job: Job, plan: Plan, cross_embedder: Embedder) -> None:
    """Multilingual vectors of the passages not in English (the cross-language leg)."""
    cross_vectors: dict[str, Vector] = {}
    for start in range(0, len(plan.cross), EMBED_BATCH):
        batch = plan.cross[start : start + EMBED_BATCH]
        fresh = {c.content_hash: plan.text_of[cid] for cid, c in batch if c.content_hash not in cross_vectors}
        if fresh:
            with _EMBED_LOCK:
                dense = cross_embedder.embed_passages(list(fresh.values()))
            cross_vectors.update(zip(fresh.keys(), dense))
        job.index.upsert_cross(
            [
                CrossPoint(
                    id=cid,
                    dense=cross_vectors[c.content_hash],
                    lang=plan.lang_of[cid],
                    owner_id=job.owner_id,
                    document_id=job.document_id,
                    collection_ids=plan.collection_ids,
                    page=c.page,
                    chunk_index=c.index,
                    role=c.role,
                )
                for cid, c in batch
            ]
        )
        job.report(DocStatus.EMBEDDING, len(plan.to_embed), len(plan.to_embed))


def replace_rows(db: Session, job: Job, parsed: Parsed, plan: Plan) -> None:
    """The document's page texts, chunks and references, replaced."""
    document_id = job.document_id
    db.exec(delete(Chunk).where(col(Chunk.document_id) == document_id))
    db.exec(delete(PageText).where(col(PageText.document_id) == document_id))
    db.exec(delete(DocumentReference).where(col(DocumentReference.document_id) == document_id))
    db.add_all(
        [
            PageText(
                document_id=document_id,
                page=p.number,
                text=p.text,
                spans=[s.to_json() for s in page_spans],
                ocr_words=[w.to_json() for w in parsed.ocr_words.get(p.number, ())],
            )
            for p, page_spans in zip(parsed.pages, plan.spans)
        ]
    )
    db.add_all(
        [
            Chunk(
                id=cid,
                document_id=document_id,
                owner_id=job.owner_id,
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
            for cid, c in zip(plan.ids, plan.chunks)
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
            for k, r in enumerate(plan.refs)
        ]
    )


def finish_document(doc: Document, parsed: Parsed, plan: Plan) -> None:
    """The document row: its metadata (unless edited by hand), counts, languages, indexed."""
    meta = parsed.meta
    if meta is not None:
        doc.title = meta.title or doc.title or Path(doc.filename).stem
        doc.authors = meta.authors or doc.authors
        doc.year = meta.year  # the printed year or none (never the file's date)
        doc.doi = meta.doi or doc.doi
    elif not doc.title:
        doc.title = Path(doc.filename).stem
    doc.status = DocStatus.INDEXED
    doc.page_count, doc.chunk_count = len(parsed.pages), len(plan.chunks)
    doc.structure_version, doc.reference_count = structure.VERSION, len(plan.refs)
    doc.language = plan.language
    doc.ocr_pages = len(parsed.ocr_words)
    doc.ocr_lang = parsed.ocr_lang if parsed.ocr_words else ""
