"""Issue 36.6: one account cannot stall ingestion for everyone. A real Dramatiq worker (8
threads, Dramatiq's Redis broker over the test redis-server, the FairShare middleware and the
production actor's `fair_share` option) reads one user's eight 300-page scans with real
ingestion (pdfium, Tesseract, the embedder, the index server); another user's 1-page PDF sent
after them is indexed within 30 s, the scans' owner never has more than BAYES_INGEST_PER_USER
documents in progress, and the waiting scans show their place in the queue."""

from __future__ import annotations

import io
import threading
import time
import uuid

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from sqlmodel import Session

from bayes_app.db import get_engine, session_scope
from bayes_app.models import DocStatus, Document
from tests.support import scans
from tests.support.ingest_env import ingest_env
from tests.support.tiny_pdf import text_pdf

ACTIVE = (DocStatus.PARSING, DocStatus.RECOGNISING, DocStatus.EMBEDDING)


def test_a_small_pdf_is_indexed_while_another_users_scans_are_read(tmp_path, redis_server, monkeypatch):
    monkeypatch.setenv("REDIS_URL", redis_server.url_db(12))
    scan = scans.long_scan_pdf(300)
    with ingest_env(tmp_path, f"heavy{uuid.uuid4().hex[:6]}@example.com") as env:
        from bayes_app.accounts import service
        from bayes_app.library import documents, uploads
        from bayes_app.settings import get_settings

        assert get_settings().ingest_per_user == 2
        assert scan[:4] == b"%PDF"
        with session_scope(env["db_url"]) as s:
            light = service.register(s, f"light{uuid.uuid4().hex[:6]}@example.com", "tangerine-sky-43").id
        broker = _fair_broker(redis_server.url_db(12), env)
        send = broker.get_actor("ingest_document").send
        from jobs.middleware import _warm_up

        _warm_up()  # as a worker does at boot (jobs.middleware.RunControl)
        worker = dramatiq.Worker(broker, worker_threads=8, worker_timeout=100)
        worker.start()
        heavy_ids: list[str] = []
        most_active = 0
        stop = threading.Event()

        def watch() -> None:  # the scans' owner never has more than two documents in progress
            nonlocal most_active
            while not stop.is_set():
                with session_scope(env["db_url"]) as s:
                    active = [s.get(Document, d).status in ACTIVE for d in heavy_ids]
                most_active = max(most_active, sum(active))
                time.sleep(0.2)

        watcher = threading.Thread(target=watch, daemon=True)
        try:
            for k in range(8):
                acc = uploads.accept(env["owner"], io.BytesIO(scan + f"%{k}\n".encode()), f"scan{k}.pdf")
                heavy_ids.append(acc.document_id)
                send(acc.document_id, acc.generation)
            watcher.start()
            time.sleep(2)  # the scans are taken first
            small = uploads.accept(
                light,
                io.BytesIO(text_pdf("Fair queues", ["Small documents are not stuck behind large ones."] * 5)),
                "s.pdf",
            )
            sent = time.monotonic()
            send(small.document_id, small.generation)
            status, reading, seen = _until_done(env["db_url"], small.document_id, heavy_ids, sent)
            waited = time.monotonic() - sent
            assert status == DocStatus.INDEXED
            assert waited < 30
            assert any(st in ACTIVE for st in reading)  # ...while the scans were being read
            _assert_queue_positions(env["db_url"], env["owner"])
        finally:
            stop.set()
            with session_scope(env["db_url"]) as s:  # the scans are superseded: their threads stop
                for d in heavy_ids:
                    doc = s.get(Document, d)
                    documents.queue_ingest(doc)
                    s.add(doc)
            worker.stop(timeout=60_000)
            broker.close()
        assert 1 <= most_active <= 2, most_active
        print(f"\n1-page PDF indexed in {waited:.1f} s ({seen}) while 8 × 300-page scans were queued or read")


def _fair_broker(redis_url: str, env: dict) -> RedisBroker:
    """A broker with the fair share middleware and an ingest actor doing the production actor's work."""
    import jobs.library as jl
    from bayes_app.library import ingest, storage
    from jobs.middleware import FairShare

    broker = RedisBroker(url=redis_url, namespace=f"fair-{uuid.uuid4().hex[:8]}")
    broker.add_middleware(FairShare())

    def ingest_document(document_id: str, generation: int) -> None:  # the production actor's work
        ingest.ingest_document(
            lambda: Session(get_engine(env["db_url"])),
            document_id,
            generation,
            files_root=storage.default_store(),
            index=env["index"],
            embedder=env["embedder"],
            ocr_options=ingest.OcrOptions(),
        )

    assert jl.ingest_document.options["fair_share"] is jl.fair_claim
    dramatiq.actor(
        ingest_document,
        broker=broker,
        actor_name="ingest_document",
        queue_name="ingest",
        max_retries=0,
        fair_share=jl.ingest_document.options["fair_share"],
    )
    return broker


def _until_done(db_url: str, doc_id: str, heavy_ids: list[str], sent: float) -> tuple[str, list[str], dict]:
    """(the small document's final status, the scans' statuses then, when each status was first seen)."""
    seen: dict[str, float] = {}  # the small document's status → when it was first seen
    while True:
        with session_scope(db_url) as s:
            status = s.get(Document, doc_id).status
            reading = [s.get(Document, d).status for d in heavy_ids]
        seen.setdefault(status, round(time.monotonic() - sent, 1))
        if status in (DocStatus.INDEXED, DocStatus.FAILED):
            return status, reading, seen
        assert time.monotonic() - sent < 30, f"the 1-page PDF still {status} after 30 s: {seen}"
        time.sleep(0.2)


def _assert_queue_positions(db_url: str, owner: str) -> None:
    """The scans still queued show their places 1, 2, 3, …; the others none."""
    from bayes_app.library import documents

    with session_scope(db_url) as s:
        views = {v.id: v for v in documents.list_documents(s, owner)}
    waiting = sorted(v.queue_position for v in views.values() if v.status == DocStatus.QUEUED)
    assert len(waiting) >= 5
    assert waiting == list(range(1, len(waiting) + 1))
    assert all(v.queue_position is None for v in views.values() if v.status != DocStatus.QUEUED)
