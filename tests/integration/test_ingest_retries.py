"""Ingestion that keeps failing for a server-side reason: Dramatiq retries it, and when the
retries are used up its `on_retry_exhausted` actor marks the document failed with the
error's name (a real Dramatiq worker on a StubBroker, a real database)."""

from __future__ import annotations

import dramatiq
from dramatiq.brokers.stub import StubBroker


def test_exhausted_retries_mark_the_document_failed(db_url, configure) -> None:
    configure(DATABASE_URL=db_url)
    import jobs.library as jl
    from bayes_app.accounts import service
    from bayes_app.db import session_scope
    from bayes_app.models import DocStatus, Document

    with session_scope() as db:
        user = service.register(db, "retries@example.com", "a-long-enough-pass-42")
        doc = Document(owner_id=user.id, filename="a.pdf", file_sha256="0" * 64, ingest_generation=2)
        db.add(doc)
        db.flush()
        doc_id = doc.id

    broker = StubBroker()
    broker.emit_after("process_boot")
    attempts: list[int] = []

    def ingest_document(document_id: str, generation: int) -> None:
        attempts.append(generation)
        raise ConnectionRefusedError("the index is away")

    # The production actor's retry options, on this broker; the real exhausted handler.
    options = {k: v for k, v in jl.ingest_document.options.items() if k not in ("max_retries", "min_backoff",
                                                                                "max_backoff")}
    assert options["on_retry_exhausted"] == "ingest_retries_exhausted"
    dramatiq.actor(ingest_document, broker=broker, actor_name="ingest_document", queue_name="ingest",
                   max_retries=2, min_backoff=10, max_backoff=20, **options)
    dramatiq.actor(jl.ingest_retries_exhausted.fn, broker=broker, actor_name="ingest_retries_exhausted",
                   queue_name="ingest")
    worker = dramatiq.Worker(broker, worker_timeout=50)
    worker.start()
    try:
        broker.get_actor("ingest_document").send(doc_id, 2)
        broker.join("ingest", fail_fast=False, timeout=30_000)
        worker.join()
    finally:
        worker.stop()

    assert attempts == [2, 2, 2]  # the first try and two retries
    with session_scope() as db:
        row = db.get(Document, doc_id)
        assert row.status == DocStatus.FAILED and row.error_code == "internal"
        assert "(ConnectionRefusedError)" in row.error_message
