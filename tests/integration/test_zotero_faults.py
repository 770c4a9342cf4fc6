"""Zotero sync under faults (SQLite + PostgreSQL): 429 with and without Retry-After, 503 with an
HTTP-date Retry-After, Backoff on a 200, 500s, 409 from /deleted (full resync), a library
that changes during the pass (restart), a wait too long to sleep through, the local API."""

from __future__ import annotations

import email.utils
import time

import httpx2
import pytest
from sqlmodel import Session, select

from bayes_app.accounts import service as accounts
from bayes_app.db import get_engine, session_scope
from bayes_app.models import Document, SyncStatus, ZoteroLibrary
from bayes_app.zotero import engine
from bayes_app.zotero import service as zs
from bayes_app.zotero.http import Policy, parse_delay
from tests.support.fake_zotero import FakeLibrary, recorded_items, seed_recorded
from tests.support.tiny_pdf import text_pdf
from tests.support.zotero_sync import SECRET, Recorder, connect_web, new_ids, options, sessions, snapshot

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files


@pytest.fixture
def zf(db_url, fake_zotero, configure, tmp_path):
    configure(BAYES_SECRET_KEY=SECRET, BAYES_DATA_DIR=str(tmp_path))
    uid, key = new_ids()
    zlib = fake_zotero.add_user(uid, key)
    atts = seed_recorded(zlib, pdf_for=4)
    with session_scope(db_url) as s:
        owner = accounts.register(s, f"f{uid}@example.com", "tangerine-sky-42").id
    lib_id = connect_web(db_url, owner, fake_zotero, key)
    rec = Recorder()
    fake_zotero.faults.clear()

    def sync(policy: Policy | None = None, **kw):
        return engine.sync_library(sessions(db_url), lib_id, rec.hooks(), options(fake_zotero, tmp_path, policy, **kw))

    yield type(
        "Env",
        (),
        {
            "db_url": db_url,
            "fz": fake_zotero,
            "zlib": zlib,
            "atts": atts,
            "owner": owner,
            "lib_id": lib_id,
            "rec": rec,
            "sync": staticmethod(sync),
            "tmp": tmp_path,
        },
    )
    fake_zotero.faults.clear()


def _docs(db_url: str, owner: str) -> int:
    with Session(get_engine(db_url)) as s:
        return len(list(s.exec(select(Document).where(Document.owner_id == owner))))


def test_parse_delay_seconds_and_http_date():
    assert parse_delay("7") == 7.0
    assert parse_delay(" 2.5 ") == 2.5
    now = time.time()
    assert 9 <= parse_delay(email.utils.formatdate(now + 10, usegmt=True), now) <= 10.5
    assert parse_delay(email.utils.formatdate(now - 100, usegmt=True)) == 0.0
    assert parse_delay("soon") is None
    assert parse_delay(None) is None


def test_rate_limits_and_server_errors_are_retried(zf):
    fz = zf.fz
    # 429 without Retry-After (pyzotero alone raises at once), 429 with one, 503 with an
    # HTTP date (pyzotero alone crashes on it), a 500, and a file request rate-limited too
    fz.fail(429, path="/items")
    fz.fail(429, path="/items", retry_after="1")
    fz.fail(503, path="/collections", retry_after=email.utils.formatdate(time.time() + 1, usegmt=True))
    fz.fail(500, path="/items")
    fz.fail(429, path="/file")
    policy = Policy(base_delay_s=0.05, max_delay_s=0.2)
    t0 = time.monotonic()
    res = zf.sync(policy)
    elapsed = time.monotonic() - t0
    assert res.outcome == "synced", res.error
    assert policy.retries == 5
    assert fz.faults == []
    assert elapsed >= 1.0  # the 1 s Retry-After was honoured (the HTTP date one overlapped)
    assert _docs(zf.db_url, zf.owner) == 4
    assert res.version == zf.zlib.version


def test_backoff_header_on_a_success_is_honoured(zf):
    zf.sync()
    zf.zlib.edit_item(recorded_items()[0]["key"], title="Edited")
    zf.fz.backoff = "1.5"  # arrives on the cheap version check (a 200)
    policy = Policy()
    t0 = time.monotonic()
    res = zf.sync(policy)
    assert res.outcome == "synced"
    assert time.monotonic() - t0 >= 1.5
    assert policy.waited_s >= 1.4


def test_retries_are_bounded(zf):
    zf.fz.fail(503, times=50)
    res = None
    with pytest.raises(Exception):  # noqa: B017, PT011 - any failure will do: the point is that nothing was returned
        res = zf.sync(Policy(base_delay_s=0.01, max_delay_s=0.02, max_attempts=4))
    assert res is None
    with session_scope(zf.db_url) as s:
        row = s.get(ZoteroLibrary, zf.lib_id)
        assert row.status == SyncStatus.ERROR
        assert row.version == 0
        assert row.lease_token is None
        assert "retried" in row.last_error
    zf.fz.faults.clear()
    assert zf.sync().outcome == "synced"


def test_a_long_retry_after_defers_the_sync(zf):
    zf.fz.fail(429, retry_after="3600")
    res = zf.sync()
    assert res.outcome == "rate_limited"
    assert res.retry_in_s == 3600
    with session_scope(zf.db_url) as s:
        row = s.get(ZoteroLibrary, zf.lib_id)
        assert row.version == 0
        assert row.status == SyncStatus.QUEUED
        assert "3600" in row.last_error
    assert zf.sync().outcome == "synced"


def test_409_from_deleted_triggers_a_full_resync(zf):
    zf.sync()
    gone = recorded_items()[1]["key"]
    zf.zlib.delete_item(gone)
    zf.zlib.truncate_delete_log()
    zf.zlib.edit_item(recorded_items()[0]["key"], title="Still here")
    zf.fz.reset_counters()
    res = zf.sync()
    assert res.outcome == "synced"
    assert res.full_resync
    assert res.documents_removed == 1
    assert zf.atts[gone] not in snapshot(zf.db_url, zf.owner)
    assert _docs(zf.db_url, zf.owner) == 3
    assert snapshot(zf.db_url, zf.owner)[zf.atts[recorded_items()[0]["key"]]][0] == "Still here"
    assert zf.fz.count("/deleted") == 1
    # a full resync does not download unchanged files again
    assert res.files_downloaded == 0


class ChangeDuringSync(httpx2.BaseTransport):
    """Edits the library right after the collections are served (another client writing), so
    the item batches that follow carry a newer library version."""

    def __init__(self, lib: FakeLibrary, key: str):
        self.inner, self.lib, self.key, self.done = httpx2.HTTPTransport(), lib, key, False

    def handle_request(self, request):
        response = self.inner.handle_request(request)
        if not self.done and "collectionKey=" in str(request.url):
            self.done = True
            self.lib.edit_item(self.key, title="Changed mid-sync")
        return response


def test_library_changing_mid_sync_restarts_the_pass(zf):
    key = recorded_items()[0]["key"]
    before = zf.zlib.version
    res = zf.sync(transport=ChangeDuringSync(zf.zlib, key))
    assert zf.zlib.version == before + 1
    assert res.outcome == "synced"
    assert res.restarts == 1
    assert res.version == zf.zlib.version
    assert snapshot(zf.db_url, zf.owner)[zf.atts[key]][0] == "Changed mid-sync"
    assert _docs(zf.db_url, zf.owner) == 4


def test_local_api_deletions_by_diffing_keys(db_url, fake_zotero, configure, tmp_path):
    configure(BAYES_SECRET_KEY=SECRET, BAYES_DATA_DIR=str(tmp_path))
    local = FakeLibrary("users", 0, "local")
    atts = seed_recorded(local, pdf_for=3)
    fake_zotero.local_library = local
    try:
        with session_scope(db_url) as s:
            owner = accounts.register(s, f"local{new_ids()[0]}@example.com", "tangerine-sky-42").id
            lib_id = zs.connect(s, owner, zs.ConnectRequest.parse({"api": "local"}), web_api_url=fake_zotero.base).id
        rec = Recorder()

        def sync():
            return engine.sync_library(sessions(db_url), lib_id, rec.hooks(), options(fake_zotero, tmp_path))

        assert sync().documents_added == 3
        keys = list(atts)
        local.delete_item(keys[0])
        local.edit_item(keys[1], title="Edited locally")
        local.add_pdf(None, "STANDALN", text_pdf("standalone pdf"), filename="standalone.pdf")
        fake_zotero.reset_counters()
        res = sync()
        assert res.documents_removed == 1
        assert res.documents_added == 1
        snap = snapshot(db_url, owner)
        assert atts[keys[0]] not in snap
        assert snap[atts[keys[1]]][0] == "Edited locally"
        assert snap["STANDALN"][0] == local.items["STANDALN"]["title"]  # a standalone PDF: its own title
        assert fake_zotero.count("/deleted") == 0
        assert fake_zotero.count("/api/users/0/") > 0
    finally:
        fake_zotero.local_library = None


def test_local_api_not_running_is_a_clear_error_not_a_retry_loop(db_url, fake_zotero, configure, tmp_path):
    """The server's Zotero stopped after it was connected: the sync ends with a plain message
    (status error), it does not raise into Dramatiq's retries with a traceback."""
    import dataclasses

    from tests.support.procs import free_port

    configure(BAYES_SECRET_KEY=SECRET, BAYES_DATA_DIR=str(tmp_path))
    with session_scope(db_url) as s:
        owner = accounts.register(s, f"gone{new_ids()[0]}@example.com", "tangerine-sky-42").id
        lib_id = zs.connect(s, owner, zs.ConnectRequest.parse({"api": "local"}), web_api_url=fake_zotero.base).id
    opts = dataclasses.replace(options(fake_zotero, tmp_path), local_api_url=f"http://127.0.0.1:{free_port()}/api")
    res = engine.sync_library(sessions(db_url), lib_id, Recorder().hooks(), opts)
    assert res.outcome == "error"
    assert "server's Zotero does not answer" in res.error
    with session_scope(db_url) as s:
        row = s.get(ZoteroLibrary, lib_id)
        assert row.status == SyncStatus.ERROR
        assert "start Zotero 7" in row.last_error
