"""Issue 24.3: a text bomb (a few KB of PDF whose pages share one compressed content stream of
hundreds of thousands of characters) fails with a clear message at the first page over the
bound, and a real worker process's peak memory while ingesting it stays bounded."""

from __future__ import annotations

import io
import os
import signal
from pathlib import Path

import dramatiq
import psutil
import pytest
from dramatiq.brokers.redis import RedisBroker

from bayes_app.db import migrate, session_scope
from bayes_app.models import DocStatus, Document
from tests.support.bomb_pdf import text_bomb_pdf
from tests.support.procs import free_port, stack_env, start_index, start_worker, wait_for
from tests.support.tiny_pdf import text_pdf

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files

MB = 1 << 20


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def test_text_bombs_fail_early_with_bounded_worker_memory(tmp_path, redis_server, configure):
    from bayes_app.accounts import service
    from bayes_app.library import uploads

    db_url = f"sqlite:///{tmp_path / 'bomb.db'}"
    migrate(db_url)
    redis_url = redis_server.url_db(12)
    index_port = free_port()
    index = start_index(tmp_path / "index", index_port, tmp_path / "index.log")
    settings = {
        "BAYES_DATA_DIR": str(tmp_path),
        "DATABASE_URL": db_url,
        "REDIS_URL": redis_url,
        "QDRANT_URL": f"http://127.0.0.1:{index_port}",
        "BAYES_MAX_DOCUMENT_CHARS": "1000000",
    }
    configure(**settings)
    worker = start_worker(stack_env(tmp_path, 1, **settings), tmp_path / "worker.log")
    broker = RedisBroker(url=redis_url, namespace="bayes-tasks")
    try:
        with session_scope(db_url) as s:
            owner = service.register(s, "bomb@example.com", "tangerine-sky-42").id

        def ingest(data: bytes, name: str) -> Document:
            acc = uploads.accept(owner, io.BytesIO(data), name)
            broker.enqueue(
                dramatiq.Message(
                    queue_name="ingest",
                    actor_name="ingest_document",
                    args=(acc.document_id, acc.generation),
                    kwargs={},
                    options={},
                )
            )

            def done():
                with session_scope(db_url) as s:
                    d = s.get(Document, acc.document_id)
                    return d if d.status in (DocStatus.INDEXED, DocStatus.FAILED) else None

            return wait_for(done, 120, 0.2, what=f"{name} to be indexed or failed")

        # warm up: the embedding model and the index client are loaded by a normal document
        assert ingest(text_pdf("A normal paper", ["with ordinary text"] * 20), "ok.pdf").status == DocStatus.INDEXED
        child = psutil.Process(worker.pid).children()[0].pid
        Path(f"/proc/{child}/clear_refs").write_text("5")  # restart the peak (VmHWM) from now
        before = _status_kb(child, "VmRSS")

        bomb = text_bomb_pdf(pages=40, chars=600_000)  # 24 M characters in a few KB
        assert len(bomb) < 20_000
        doc = ingest(bomb, "bomb.pdf")
        assert doc.status == DocStatus.FAILED
        assert doc.error_code == "too_much_text"
        assert doc.error_message.startswith("Page 1 holds more text than 200,000 characters")

        # pages under the page bound, but too many of them: the document's bound, while reading
        many = ingest(text_bomb_pdf(pages=40, chars=150_000, word=9), "many.pdf")
        assert many.status == DocStatus.FAILED
        assert many.error_code == "too_much_text"
        assert "more text than 1,000,000 characters" in many.error_message
        assert "reached on page 7" in many.error_message

        growth = _status_kb(child, "VmHWM") - before
        print(f"\nworker peak growth while ingesting the bombs: {growth / MB:.0f} MB")
        assert growth < 400 * MB, f"the worker grew by {growth / MB:.0f} MB"
    finally:
        for p in (worker, index):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
