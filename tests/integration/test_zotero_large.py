"""A generated 5,000-item library (1,000 PDFs): the sync's requests are counted and bounded
(≤ 50 keys per request, ≤ 4 in flight), its memory stays bounded (items are processed in
committed batches, never all held), and a no-change resync is one request. On PostgreSQL, the
backend of a library this size; SQLite syncs a 400-item library batch by batch (killed and
resumed) in test_zotero_crash."""

from __future__ import annotations

import math
import time
import tracemalloc

from sqlmodel import Session, func, select

from bayes_app.accounts import service as accounts
from bayes_app.db import get_engine, session_scope
from bayes_app.models import Document, ZoteroItem
from bayes_app.zotero import engine
from tests.support.backends import POSTGRES_ONLY
from tests.support.fake_zotero import generate
from tests.support.zotero_sync import SECRET, Recorder, connect_web, new_ids, options, sessions

N_ITEMS, N_PDFS = 5_000, 1_000


@POSTGRES_ONLY
def test_5000_items_bounded_requests_and_memory(db_url, fake_zotero, configure, tmp_path):
    configure(BAYES_SECRET_KEY=SECRET, BAYES_DATA_DIR=str(tmp_path))
    uid, key = new_ids()
    zlib = fake_zotero.add_user(uid, key)
    generate(zlib, N_ITEMS, N_PDFS)
    with session_scope(db_url) as s:
        owner = accounts.register(s, f"big{uid}@example.com", "tangerine-sky-42").id
    lib_id = connect_web(db_url, owner, fake_zotero, key)
    rec = Recorder()
    fake_zotero.reset_counters()

    tracemalloc.start()
    t0 = time.monotonic()
    res = engine.sync_library(sessions(db_url), lib_id, rec.hooks(), options(fake_zotero, tmp_path))
    elapsed = time.monotonic() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"\n5,000 items: {elapsed:.1f}s, {res.requests} requests, peak traced memory "
        f"{peak / 2**20:.1f} MiB (includes the in-process fake server's responses)"
    )

    assert res.outcome == "synced"
    assert res.documents_added == N_PDFS
    assert res.version == zlib.version
    objects = N_ITEMS + N_PDFS
    expected = 2 + math.ceil(20 / 50) + math.ceil(objects / 50) + 2 * N_PDFS  # versions, batches, 302+file
    assert res.requests == expected == len(fake_zotero.requests), (res.requests, expected)
    assert fake_zotero.max_in_flight <= 4
    # bounded memory: far below holding 6,000 items' JSON several times over
    assert peak < 48 * 2**20
    with Session(get_engine(db_url)) as s:
        assert s.exec(select(func.count()).select_from(Document).where(Document.owner_id == owner)).one() == N_PDFS
        assert (
            s.exec(
                select(func.count())
                .select_from(ZoteroItem)
                .where(ZoteroItem.library_id == lib_id, ZoteroItem.dirty == True)
            ).one()
            == 0
        )
    assert len(rec.ingested) == N_PDFS

    fake_zotero.reset_counters()
    t0 = time.monotonic()
    again = engine.sync_library(sessions(db_url), lib_id, rec.hooks(), options(fake_zotero, tmp_path))
    assert again.outcome == "unchanged"
    assert again.requests == 1
    assert time.monotonic() - t0 < 1.0
