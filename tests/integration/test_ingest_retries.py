"""Ingestion that keeps failing for a server-side reason: Dramatiq retries it, and when the
retries are used up its `on_retry_exhausted` actor marks the document failed with the
error's name (a real Dramatiq worker on Dramatiq's Redis broker over the test redis-server, a
real database)."""

from __future__ import annotations

import time
import uuid

import dramatiq
from dramatiq.brokers.redis import RedisBroker


def test_exhausted_retries_mark_the_document_failed(db_url, configure, redis_server) -> None:
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

    broker = RedisBroker(url=redis_server.url_db(10), namespace=f"retries-{uuid.uuid4().hex[:8]}")
    attempts: list[int] = []

    def ingest_document(_document_id: str, generation: int) -> None:
        attempts.append(generation)
        raise ConnectionRefusedError("the index is away")

    # The production actor's retry options, on this broker; the real exhausted handler.
    # (Options of our own middleware, e.g. fair_share, are not this bare broker's.)
    options = {
        k: v
        for k, v in jl.ingest_document.options.items()
        if k in broker.actor_options and k not in ("max_retries", "min_backoff", "max_backoff")
    }
    assert options["on_retry_exhausted"] == "ingest_retries_exhausted"
    dramatiq.actor(
        ingest_document,
        broker=broker,
        actor_name="ingest_document",
        queue_name="ingest",
        max_retries=2,
        min_backoff=10,
        max_backoff=20,
        **options,
    )
    dramatiq.actor(
        jl.ingest_retries_exhausted.fn, broker=broker, actor_name="ingest_retries_exhausted", queue_name="ingest"
    )
    worker = dramatiq.Worker(broker, worker_timeout=50)
    worker.start()
    try:
        broker.get_actor("ingest_document").send(doc_id, 2)
        deadline = time.monotonic() + 30
        while True:  # the exhausted handler's write is what ends the wait
            with session_scope() as db:
                if db.get(Document, doc_id).status == DocStatus.FAILED:
                    break
            assert time.monotonic() < deadline, f"not marked failed after {attempts}"
            time.sleep(0.05)
    finally:
        worker.stop()
        broker.close()

    assert attempts == [2, 2, 2]  # the first try and two retries
    with session_scope() as db:
        row = db.get(Document, doc_id)
        assert row.status == DocStatus.FAILED
        assert row.error_code == "internal"
        assert "(ConnectionRefusedError)" in row.error_message
