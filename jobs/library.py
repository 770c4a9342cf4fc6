"""Library actors: ingest one document; delete a document's vectors and file; requeue lost jobs."""

from __future__ import annotations

import logging

import dramatiq

from bayes_app.db import session_scope, sessions
from bayes_app.library import fairness, ingest, storage
from bayes_app.search import runtime
from bayes_app.settings import get_settings

log = logging.getLogger("bayes.jobs.library")
INGEST_RETRIES = 4


def ocr_options() -> ingest.OcrOptions | None:
    """OCR for pages without a text layer, unless BAYES_OCR=0."""
    settings = get_settings()
    if not settings.ocr:
        return None
    return ingest.OcrOptions(page_timeout_s=settings.ocr_page_timeout_s, max_pixels=settings.ocr_max_pixels)


def fair_claim(document_id: str, *_rest: object, large_bytes: int) -> fairness.Claim | None:
    """Whose ingestion this message is, and whether its file is large (FairShare's option)."""
    with session_scope() as db:
        return fairness.claim_of(db, document_id, large_bytes)


def enqueue_ingest(document_id: str, generation: int) -> None:
    """Send the ingest message (middleware.IngestEnqueued remembers that it was sent)."""
    ingest_document.send(document_id, generation)


@dramatiq.actor(
    queue_name="ingest",
    max_retries=INGEST_RETRIES,
    min_backoff=2_000,
    max_backoff=60_000,
    time_limit=2 * 3600 * 1000,
    throws=(ingest.IngestError,),
    on_retry_exhausted="ingest_retries_exhausted",
    fair_share=fair_claim,
    ingestion=True,  # middleware.IngestEnqueued and IngestCrashGuard
)
def ingest_document(document_id: str, generation: int) -> None:
    """Parse, chunk, embed and index one document version (idempotent; safe to redeliver).
    A version whose earlier attempts killed their worker BAYES_INGEST_MAX_CRASHES times never
    gets here (middleware.IngestCrashGuard marks it failed). A paper that became indexed joins
    its owner's batch of new papers for the living maps (usecases.living)."""
    result = ingest.ingest_document(
        sessions,
        document_id,
        generation,
        files_root=storage.default_store(),
        index=runtime.index(),
        embedder=runtime.embedder(),
        max_pages=get_settings().max_pages,
        ocr_options=ocr_options(),
    )
    if result.status == "indexed":  # a redelivery notes it again: an update covers each paper once
        from bayes_app.usecases import living

        living.note_indexed(document_id)


@dramatiq.actor(queue_name="ingest", max_retries=10, min_backoff=1_000, max_backoff=60_000, time_limit=60_000)
def ingest_retries_exhausted(message: dict, _retry_info: dict) -> None:
    """Dramatiq's `on_retry_exhausted` for ingest_document: transient errors used up the
    retries, so the document is marked failed (an IngestError is recorded by ingestion itself
    and never retried)."""
    document_id, generation = message["args"][:2]
    ingest.mark_failed(
        sessions,
        document_id,
        generation,
        "internal",
        "Indexing failed repeatedly because of a server problem "
        f"({_error_name(message.get('options', {}).get('traceback'))}). Try re-indexing later.",
    )


def _error_name(traceback: str | None) -> str:
    """The exception's class name from the last line of a formatted traceback."""
    last = (traceback or "").strip().splitlines()[-1:] or ["error"]
    return last[0].split(":", 1)[0].rsplit(".", 1)[-1].strip() or "error"


@dramatiq.actor(
    queue_name="ingest",
    max_retries=3,
    min_backoff=5_000,
    max_backoff=120_000,
    time_limit=2 * 3600 * 1000,
    priority=50,
    fair_share=fair_claim,
)
def restructure_document(document_id: str, generation: int) -> None:
    """Re-analyse an indexed document made before the current structure rules, in place
    (it stays searchable; unchanged passages keep their ids and vectors)."""
    ingest.restructure_document(
        sessions,
        document_id,
        generation,
        files_root=storage.default_store(),
        index=runtime.index(),
        embedder=runtime.embedder(),
        ocr_options=ocr_options(),
    )


@dramatiq.actor(queue_name="ingest", max_retries=10, min_backoff=1_000, max_backoff=60_000, time_limit=10 * 60 * 1000)
def purge_document(document_id: str, file_sha256: str | None) -> None:
    """Remove a deleted document's vectors, and its file when no document uses it any more."""
    runtime.index().delete_document(document_id)
    if file_sha256:
        from bayes_app.library import uploads

        uploads.release(file_sha256)


@dramatiq.actor(queue_name="ingest", max_retries=10, min_backoff=1_000, max_backoff=60_000, time_limit=60_000)
def sync_document_collections(document_id: str) -> None:
    """Copy a document's collection membership into its vectors' payload (for filtering)."""
    from bayes_app.library.documents import collection_ids_of

    with session_scope() as db:
        ids = collection_ids_of(db, document_id)
    runtime.index().set_collections(document_id, ids)
