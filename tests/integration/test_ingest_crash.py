"""kill -9 of the worker in the middle of an ingestion: after a restart the document ends
indexed, with exactly one chunk row and one vector per chunk (no duplicates)."""

from __future__ import annotations

import os
import signal
import time

import dramatiq
import pytest
from dramatiq.brokers.redis import RedisBroker
from sqlmodel import select

from bayes_app.db import migrate, session_scope
from bayes_app.models import Chunk, DocStatus, Document
from tests.support import pdfs
from tests.support.procs import free_port, stack_env, start_index, start_worker, wait_for

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files


def test_kill_9_mid_ingestion_then_restart(tmp_path, redis_server, configure):
    from bayes_app.accounts import service
    from bayes_app.library import uploads
    from bayes_app.search.embeddings import resolve_name
    from bayes_app.search.index import IndexClient
    from bayes_app.search.runtime import collection_name

    db_url = f"sqlite:///{tmp_path / 'crash.db'}"
    migrate(db_url)
    redis_url = redis_server.url_db(5)
    index_port = free_port()
    index = start_index(tmp_path / "index", index_port, tmp_path / "index.log")
    index_url = f"http://127.0.0.1:{index_port}"
    settings = {
        "BAYES_DATA_DIR": str(tmp_path),
        "DATABASE_URL": db_url,
        "REDIS_URL": redis_url,
        "QDRANT_URL": index_url,
    }
    configure(**settings)
    env = stack_env(tmp_path, 1, **settings)
    worker = start_worker(env, tmp_path / "worker1.log")
    worker2 = None
    try:
        with session_scope(db_url) as s:
            owner = service.register(s, "crash@example.com", "tangerine-sky-42").id
        with open(pdfs.REVIEW, "rb") as fh:
            acc = uploads.accept(owner, fh, "review.pdf")
        broker = RedisBroker(url=redis_url, namespace="bayes-tasks")
        broker.enqueue(
            dramatiq.Message(
                queue_name="ingest",
                actor_name="ingest_document",
                args=(acc.document_id, acc.generation),
                kwargs={},
                options={},
            )
        )

        def embedding_under_way():
            with session_scope(db_url) as s:
                d = s.get(Document, acc.document_id)
                return d.status == DocStatus.EMBEDDING and d.progress_done > 0

        wait_for(embedding_under_way, 120, 0.02, what="ingestion to be mid-embedding")
        os.killpg(worker.pid, signal.SIGKILL)  # the worker and its forked process, no cleanup
        worker.wait(10)
        with session_scope(db_url) as s:
            assert s.get(Document, acc.document_id).status != DocStatus.INDEXED

        worker2 = start_worker(env, tmp_path / "worker2.log")
        t0 = time.monotonic()

        def indexed():
            with session_scope(db_url) as s:
                return s.get(Document, acc.document_id).status == DocStatus.INDEXED

        wait_for(indexed, 180, 0.5, what="the restarted worker to finish the document")
        print(f"indexed {time.monotonic() - t0:.1f}s after the restart")

        with session_scope(db_url) as s:
            doc = s.get(Document, acc.document_id)
            ids = list(s.exec(select(Chunk.id).where(Chunk.document_id == acc.document_id)))
        assert doc.chunk_count == len(ids) == len(set(ids)) > 100
        client = IndexClient(index_url, collection_name(resolve_name()))
        assert client.count(document_id=acc.document_id) == len(ids)
    finally:
        for p in (worker, worker2, index):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
