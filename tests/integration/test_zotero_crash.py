"""kill -9 of the worker in the middle of a Zotero sync: the redelivered sync resumes from the
last committed version, keeps what was already fetched, and ends with exactly one document
per PDF attachment (no duplicates, none lost)."""

from __future__ import annotations

import os
import signal

import dramatiq
import pytest
from dramatiq.brokers.redis import RedisBroker
from sqlmodel import func, select

from bayes_app.accounts import service as accounts
from bayes_app.db import migrate, session_scope
from bayes_app.models import Document, ZoteroItem, ZoteroLibrary
from tests.support.fake_zotero import generate
from tests.support.procs import free_port, stack_env, start_index, start_worker, wait_for
from tests.support.zotero_sync import SECRET, connect_web, new_ids

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files

N_ITEMS, N_PDFS = 400, 150


def test_kill_9_mid_sync_then_resume(tmp_path, redis_server, fake_zotero, configure):
    db_url = f"sqlite:///{tmp_path / 'zcrash.db'}"
    migrate(db_url)
    redis_url = redis_server.url_db(7)
    index_port = free_port()
    index = start_index(tmp_path / "index", index_port, tmp_path / "index.log")
    settings = {
        "BAYES_DATA_DIR": str(tmp_path),
        "DATABASE_URL": db_url,
        "REDIS_URL": redis_url,
        "QDRANT_URL": f"http://127.0.0.1:{index_port}",
        "BAYES_SECRET_KEY": SECRET,
        "ZOTERO_API_URL": fake_zotero.base,
        "BAYES_ZOTERO_LEASE_S": "3",
    }
    configure(**settings)
    env = stack_env(tmp_path, 1, **settings)
    uid, key = new_ids()
    zlib = fake_zotero.add_user(uid, key)
    atts = generate(zlib, N_ITEMS, N_PDFS)
    with session_scope(db_url) as s:
        owner = accounts.register(s, f"crash{uid}@example.com", "tangerine-sky-42").id
    lib_id = connect_web(db_url, owner, fake_zotero, key)
    fake_zotero.latency_s = 0.01  # a realistic pace, so the kill lands mid-way
    worker = start_worker(env, tmp_path / "worker1.log")
    worker2 = None
    try:
        broker = RedisBroker(url=redis_url, namespace="bayes-tasks")
        broker.enqueue(
            dramatiq.Message(
                queue_name="zotero", actor_name="sync_zotero_library", args=(lib_id,), kwargs={}, options={}
            )
        )

        before = _killed_mid_way(worker, db_url, owner, lib_id)
        fake_zotero.reset_counters()

        worker2 = start_worker(env, tmp_path / "worker2.log")  # the message is redelivered

        def finished():
            with session_scope(db_url) as s:
                row = s.get(ZoteroLibrary, lib_id)
                return row if row.version == zlib.version and row.status == "idle" else None

        row = wait_for(finished, 180, 0.5, what="the redelivered sync to finish")
        _assert_one_document_per_pdf(db_url, owner, lib_id, atts, before)
        # the resumed sync fetched no item metadata again and downloaded only the missing files
        # (plus at most the one batch in flight when the worker died)
        assert fake_zotero.count("itemKey=") == 0
        file_gets = fake_zotero.count("/file")
        assert N_PDFS - len(before) <= file_gets <= N_PDFS - len(before) + 40
        print(
            f"\nkilled after {len(before)} documents; resume downloaded {file_gets} files; "
            f"last result {row.last_result}"
        )
    finally:
        fake_zotero.latency_s = 0.0
        for p in (worker, worker2, index):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)


def _killed_mid_way(worker, db_url: str, owner: str, lib_id: str) -> dict[str, str]:
    """kill -9 of the worker once some documents are committed; the documents it committed
    (attachment key → document id), checked: the library's version unchanged, its lease held,
    every item fetched."""

    def some_documents_committed():
        with session_scope(db_url) as s:
            n = s.exec(select(func.count()).select_from(Document).where(Document.owner_id == owner)).one()
            return n if 40 <= n < N_PDFS else None

    wait_for(some_documents_committed, 120, 0.02, what="the sync to be mid-way through the files")
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(10)
    with session_scope(db_url) as s:
        row = s.get(ZoteroLibrary, lib_id)
        assert row.version == 0
        assert row.lease_token is not None  # died holding the lease
        before = {d.zotero_attachment_key: d.id for d in s.exec(select(Document).where(Document.owner_id == owner))}
        fetched = s.exec(select(func.count()).select_from(ZoteroItem).where(ZoteroItem.library_id == lib_id)).one()
    assert 40 <= len(before) < N_PDFS
    assert fetched == N_ITEMS + N_PDFS
    return before


def _assert_one_document_per_pdf(db_url: str, owner: str, lib_id: str, atts: list[str], before: dict[str, str]) -> None:
    """One document per PDF attachment, nothing left dirty; those committed before the kill are
    the same documents (not re-created)."""
    with session_scope(db_url) as s:
        docs = list(s.exec(select(Document).where(Document.owner_id == owner)))
        dirty = s.exec(
            select(func.count())
            .select_from(ZoteroItem)
            .where(ZoteroItem.library_id == lib_id, ZoteroItem.dirty == True)
        ).one()
    keys = [d.zotero_attachment_key for d in docs]
    assert len(docs) == N_PDFS
    assert sorted(keys) == sorted(atts)
    assert dirty == 0
    assert all({d.zotero_attachment_key: d.id for d in docs}[k] == i for k, i in before.items())


def test_redis_restart_mid_sync(tmp_path, fake_zotero, configure):
    """Redis goes away in the middle of a sync: the sync (which needs only Zotero and the
    database) still completes, and once Redis is back every document gets indexed (the
    ingestion reaper re-sends what could not be enqueued)."""
    from tests.support.procs import RedisServer

    n_pdfs = 120  # three reconcile batches: Redis goes away after the first
    redis = RedisServer(tmp_path / "redis").start()
    db_url = f"sqlite:///{tmp_path / 'zredis.db'}"
    migrate(db_url)
    index_port = free_port()
    index = start_index(tmp_path / "index", index_port, tmp_path / "index.log")
    settings = {
        "BAYES_DATA_DIR": str(tmp_path),
        "DATABASE_URL": db_url,
        "REDIS_URL": redis.url,
        "QDRANT_URL": f"http://127.0.0.1:{index_port}",
        "BAYES_SECRET_KEY": SECRET,
        "ZOTERO_API_URL": fake_zotero.base,
        "BAYES_ZOTERO_LEASE_S": "3",
    }
    configure(**settings)
    env = stack_env(tmp_path, 1, **settings)
    uid, key = new_ids()
    zlib = fake_zotero.add_user(uid, key)
    generate(zlib, 200, n_pdfs)
    with session_scope(db_url) as s:
        owner = accounts.register(s, f"redis{uid}@example.com", "tangerine-sky-42").id
    lib_id = connect_web(db_url, owner, fake_zotero, key)
    fake_zotero.latency_s = 0.03
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        RedisBroker(url=redis.url, namespace="bayes-tasks").enqueue(
            dramatiq.Message(
                queue_name="zotero", actor_name="sync_zotero_library", args=(lib_id,), kwargs={}, options={}
            )
        )

        def started_files():
            with session_scope(db_url) as s:
                n = s.exec(select(func.count()).select_from(Document).where(Document.owner_id == owner)).one()
                return 0 < n < n_pdfs

        wait_for(started_files, 120, 0.01, what="the sync to create documents")
        redis.stop()

        # the sync finishes without Redis
        def finished():
            with session_scope(db_url) as s:
                row = s.get(ZoteroLibrary, lib_id)
                return row if row.status == "idle" and row.version == zlib.version else None

        row = wait_for(finished, 120, 0.2, what="the sync to finish while Redis is down")
        assert row.last_result["documents_added"] == n_pdfs
        assert "left to the reaper" in (tmp_path / "worker.log").read_text()
        fake_zotero.latency_s = 0.0
        redis.start()

        def all_indexed():
            with session_scope(db_url) as s:
                docs = list(s.exec(select(Document).where(Document.owner_id == owner)))
                return len(docs) == n_pdfs and all(d.status == "indexed" for d in docs)

        wait_for(all_indexed, 240, 1.0, what="every document to be indexed after Redis came back")
        with session_scope(db_url) as s:
            keys = [d.zotero_attachment_key for d in s.exec(select(Document).where(Document.owner_id == owner))]
        assert len(keys) == len(set(keys)) == n_pdfs
    finally:
        fake_zotero.latency_s = 0.0
        for p in (worker, index):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
        redis.stop()
