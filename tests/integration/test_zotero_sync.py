"""The Zotero sync engine against the fake Web API (real pyzotero, real HTTP), on SQLite and
PostgreSQL: full sync, no-op sync, incremental edits/new/delete/trash/moved collection/changed
file, unavailable attachments, and the connection checks."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from bayes_app.accounts import service as accounts
from bayes_app.db import get_engine, session_scope
from bayes_app.library import documents as lib
from bayes_app.library import storage
from bayes_app.models import Collection, Document, ZoteroLibrary
from bayes_app.zotero import engine
from bayes_app.zotero import service as zs
from tests.support.fake_zotero import recorded_collections, recorded_items, seed_recorded
from tests.support.tiny_pdf import text_pdf
from tests.support.zotero_sync import (
    SECRET,
    Recorder,
    connect_web,
    new_ids,
    options,
    problems,
    sessions,
    snapshot,
)


@pytest.fixture
def zenv(db_url, fake_zotero, configure, tmp_path):
    """A fresh owner, a fresh Zotero user library seeded with the recorded items (6 with a PDF,
    one linked PDF, one PDF only on WebDAV), connected but not yet synced."""
    configure(BAYES_SECRET_KEY=SECRET, BAYES_DATA_DIR=str(tmp_path))
    uid, key = new_ids()
    zlib = fake_zotero.add_user(uid, key, username=f"user{uid}")
    atts = seed_recorded(zlib, pdf_for=6)
    items = [d["key"] for d in recorded_items()]
    zlib.add_pdf(items[6], "LINKED01", b"", link_mode="linked_file")
    zlib.add_pdf(items[7], "WEBDAV01", text_pdf("webdav only"), with_file=False)
    with session_scope(db_url) as s:
        owner = accounts.register(s, f"z{uid}@example.com", "tangerine-sky-42").id
    lib_id = connect_web(db_url, owner, fake_zotero, key)
    rec = Recorder()

    class Env:
        pass

    env = Env()
    env.__dict__.update(
        db_url=db_url,
        fz=fake_zotero,
        zlib=zlib,
        atts=atts,
        items=items,
        owner=owner,
        lib_id=lib_id,
        rec=rec,
        tmp=tmp_path,
        key=key,
        uid=uid,
    )

    def sync(**kw):
        opts = options(fake_zotero, tmp_path, **kw)
        return engine.sync_library(sessions(db_url), lib_id, rec.hooks(), opts)

    env.sync = sync
    return env


def test_full_sync_maps_items_collections_and_problems(zenv):
    fz = zenv.fz
    fz.reset_counters()
    res = zenv.sync()
    assert res.outcome == "synced"
    assert res.version == zenv.zlib.version
    assert res.documents_added == 6
    assert res.files_downloaded == 6
    snap = snapshot(zenv.db_url, zenv.owner)
    assert set(snap) == set(zenv.atts.values())
    by_item = {d["key"]: d for d in recorded_items()}
    first = by_item[zenv.items[0]]
    title, cols, version = snap[zenv.atts[first["key"]]]
    assert title == first["title"]
    assert cols == ["Sherlock Holmes"]
    # nested collections keep their path
    with Session(get_engine(zenv.db_url)) as s:
        names = {c.name for c in s.exec(select(Collection).where(Collection.owner_id == zenv.owner))}
        doc = s.exec(select(Document).where(Document.zotero_attachment_key == zenv.atts["PQKBRC33"])).one()
    assert len(names) == len(recorded_collections())
    assert "Non-English items / sherlock films" in names
    assert "LoC / Digital Newspaper project" in names
    assert doc.source == "zotero"
    assert doc.zotero_item_key == "PQKBRC33"
    assert doc.zotero_version > 0
    # every new document was queued for the normal ingestion, exactly once
    assert sorted(d for d, _ in zenv.rec.ingested) == sorted({d for d, _ in zenv.rec.ingested})
    assert len(zenv.rec.ingested) == 6
    # attachments Zotero can't serve are listed with the reason, and did not fail the sync
    assert problems(zenv.db_url, zenv.lib_id) == {"LINKED01": "linked_file", "WEBDAV01": "file_unavailable"}
    with session_scope(zenv.db_url) as s:
        listed = zs.problems(s, zenv.lib_id)
    assert {p["code"] for p in listed} == {"linked_file", "file_unavailable"}
    assert all(p["message"] and p["title"] for p in listed)
    # the protocol: versions, ≤ 50 keys per request, files; never more than 4 in flight
    assert fz.count("format=versions") == 2
    assert all(len(r.split("itemKey=")[1].split("&")[0].split("%2C")) <= 50 for r in fz.requests if "itemKey=" in r)
    assert fz.max_in_flight <= 4
    # the stored files are the Zotero files
    with Session(get_engine(zenv.db_url)) as s:
        for d in s.exec(select(Document).where(Document.owner_id == zenv.owner)):
            assert (
                storage.path_for(zenv.tmp / "files", d.file_sha256).read_bytes()
                == zenv.zlib.files[d.zotero_attachment_key]
            )


def test_metadata_from_zotero(zenv):
    zenv.sync()
    item = {d["key"]: d for d in recorded_items()}["PQKBRC33"]
    with Session(get_engine(zenv.db_url)) as s:
        doc = s.exec(select(Document).where(Document.zotero_item_key == "PQKBRC33")).one()
    assert doc.title == item["title"]
    names = [
        " ".join(p for p in (c.get("firstName", ""), c.get("lastName", "")) if p) or c.get("name")
        for c in item["creators"]
        if c["creatorType"] in ("author", "editor")
    ]
    assert doc.authors == names
    assert doc.authors
    assert (doc.year, doc.doi) == (1980, "10.2307/2321200")  # from "May 01, 1980"
    assert doc.metadata_edited  # ingestion keeps Zotero's metadata
    # contributors are not authors; a film with only contributors has none
    with Session(get_engine(zenv.db_url)) as s:
        film = s.exec(select(Document).where(Document.zotero_item_key == "PG5ZCTJT")).one()
    assert film.authors == []
    assert film.year == 2004
    assert film.doi is None


def test_noop_sync_is_one_request(zenv):
    zenv.sync()
    zenv.rec.clear()
    zenv.fz.reset_counters()
    res = zenv.sync()
    assert res.outcome == "unchanged"
    assert res.requests == 1
    assert len(zenv.fz.requests) == 1
    assert "/items" in zenv.fz.requests[0]
    assert zenv.rec.ingested == zenv.rec.purged == []


def test_incremental_edit_new_delete_trash_and_moved_collection(zenv, monkeypatch):
    zenv.sync()
    removed: list[tuple[str, str]] = []  # what mindmaps will see: (document id, reason)
    monkeypatch.setattr(lib, "_removal_hooks", [lambda _db, doc_id, reason: removed.append((doc_id, reason))])
    z, fz, rec = zenv.zlib, zenv.fz, zenv.rec
    rec.clear()
    before = snapshot(zenv.db_url, zenv.owner)
    edited, deleted, trashed = zenv.items[0], zenv.items[1], zenv.items[2]
    z.edit_item(edited, title="How Earthquakes Work (2nd edition)")
    z.delete_item(deleted)
    z.trash_item(trashed)
    new_parent = z.put_item(
        {
            "key": "NEWITEM1",
            "itemType": "journalArticle",
            "title": "A brand new paper",
            "creators": [{"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"}],
            "date": "1843",
            "DOI": "10.1000/new.1",
            "collections": ["9KH9TNSJ"],
            "tags": [],
            "relations": {},
        }
    )
    z.add_pdf(new_parent["key"], "NEWPDF01", text_pdf("A brand new paper"))
    # move "sherlock films" out of "Non-English items" and under "Sherlock Holmes"
    z.put_collection(dict(z.collections["TVPC4XK4"], parentCollection="9KH9TNSJ"))
    fz.reset_counters()
    res = zenv.sync()
    assert res.outcome == "synced"
    assert res.version == z.version
    after = snapshot(zenv.db_url, zenv.owner)
    # edit: metadata updated, same document, the unchanged file not downloaded again
    assert after[zenv.atts[edited]][0] == "How Earthquakes Work (2nd edition)"
    assert fz.count(f"/items/{zenv.atts[edited]}/file") == 0
    # delete and trash: documents removed (through the library's delete path) and purged
    assert zenv.atts[deleted] not in after
    assert zenv.atts[trashed] not in after
    assert len(rec.purged) == 2
    assert res.documents_removed == 2
    assert sorted(removed) == sorted((d, "source_removed") for d, _ in rec.purged)
    # new item: a new document with its metadata, queued for ingestion
    assert after["NEWPDF01"][0] == "A brand new paper"
    assert after["NEWPDF01"][1] == ["Sherlock Holmes"]
    assert len(rec.ingested) == 1
    assert res.files_downloaded == 1
    assert fz.count("/file") == 1
    # moved collection: renamed to its new path, not duplicated
    with Session(get_engine(zenv.db_url)) as s:
        names = {c.name for c in s.exec(select(Collection).where(Collection.owner_id == zenv.owner))}
    assert "Sherlock Holmes / sherlock films" in names
    assert "Non-English items / sherlock films" not in names
    assert len(names) == len(recorded_collections())
    # untouched documents are unchanged
    for k, v in before.items():
        if k not in (zenv.atts[edited], zenv.atts[deleted], zenv.atts[trashed]):
            assert after[k] == v
    # restoring the trashed item brings its document back
    z.edit_item(trashed, deleted=0)
    assert zenv.sync().documents_added == 1
    assert zenv.atts[trashed] in snapshot(zenv.db_url, zenv.owner)


def test_changed_file_reingests_same_document(zenv):
    zenv.sync()
    att = zenv.atts[zenv.items[3]]
    with Session(get_engine(zenv.db_url)) as s:
        doc = s.exec(select(Document).where(Document.zotero_attachment_key == att)).one()
    zenv.rec.clear()
    zenv.zlib.replace_file(att, text_pdf("a new version of the file", pages=2))
    res = zenv.sync()
    assert res.documents_updated == 1
    assert res.documents_added == 0
    assert res.files_downloaded == 1
    with Session(get_engine(zenv.db_url)) as s:
        again = s.get(Document, doc.id)
    assert again.file_sha256 != doc.file_sha256
    assert again.ingest_generation == doc.ingest_generation + 1
    assert zenv.rec.ingested == [(doc.id, again.ingest_generation)]


def test_user_deleted_collection_and_user_collections_survive(zenv):
    """A document's own (non-Zotero) collections are kept when Zotero's change."""
    zenv.sync()
    att = zenv.atts[zenv.items[0]]
    with session_scope(zenv.db_url) as s:
        mine = lib.create_collection(s, zenv.owner, "My reading")
        doc = s.exec(select(Document).where(Document.zotero_attachment_key == att)).one()
        lib.set_document_collections(s, zenv.owner, doc.id, [mine.id, *lib.collection_ids_of(s, doc.id)])
    zenv.zlib.edit_item(zenv.items[0], collections=["BX9965IJ"])
    zenv.sync()
    assert snapshot(zenv.db_url, zenv.owner)[att][1] == ["My reading", "Sciences (miscellaneous)"]
    zenv.zlib.delete_collection("BX9965IJ")
    zenv.sync()
    assert snapshot(zenv.db_url, zenv.owner)[att][1] == ["My reading"]


def test_connect_checks_key_and_stores_it_encrypted(zenv):
    with session_scope(zenv.db_url) as s:
        row = s.get(ZoteroLibrary, zenv.lib_id)
        assert zenv.key not in (row.api_key_encrypted or "")
        assert row.api_key_encrypted
        assert row.permissions == {"library": True, "files": True, "notes": True, "write": False}
        assert row.library_key == str(zenv.uid)
        with pytest.raises(zs.ZoteroError) as bad:
            zs.connect(s, zenv.owner, zs.ConnectRequest("web", "user", None, "nosuchkey123"), web_api_url=zenv.fz.base)
        assert bad.value.code == "invalid_key"
        with pytest.raises(zs.ZoteroError) as other:
            zs.connect(s, zenv.owner, zs.ConnectRequest("web", "user", "999", zenv.key), web_api_url=zenv.fz.base)
        assert other.value.status == 403
        with pytest.raises(zs.ZoteroError) as dup:
            zs.connect(s, zenv.owner, zs.ConnectRequest("web", "user", None, zenv.key), web_api_url=zenv.fz.base)
        assert dup.value.status == 409
        for bad_input in (
            {"api": "ftp"},
            {"api_key": ""},
            {"api_key": "x y"},
            {"api_key": "abc", "library_type": "group"},
            {"api_key": "a", "library_id": "x1"},
        ):
            with pytest.raises(zs.ZoteroError):
                zs.ConnectRequest.parse(bad_input)
        # another user never sees or touches the library
        other_owner = accounts.register(s, f"other{zenv.uid}@example.com", "tangerine-sky-42").id
        with pytest.raises(lib.NotFound):
            zs.get_owned(s, other_owner, zenv.lib_id)
        assert zs.list_libraries(s, other_owner) == []


def test_disconnect_keep_or_remove_documents(zenv):
    zenv.sync()
    with session_scope(zenv.db_url) as s:
        purges = zs.disconnect(s, zenv.owner, zenv.lib_id, keep_documents=True)
    assert purges == []
    with Session(get_engine(zenv.db_url)) as s:
        docs = list(s.exec(select(Document).where(Document.owner_id == zenv.owner)))
        assert len(docs) == 6
        assert all(d.zotero_library_id is None for d in docs)
        kept = {d.id for d in docs}
    # connecting again adopts the kept documents: nothing duplicated, nothing re-ingested
    zenv.rec.clear()
    lib_id = connect_web(zenv.db_url, zenv.owner, zenv.fz, zenv.key)
    res = engine.sync_library(sessions(zenv.db_url), lib_id, zenv.rec.hooks(), options(zenv.fz, zenv.tmp))
    assert res.outcome == "synced"
    assert zenv.rec.ingested == []
    assert set(problems(zenv.db_url, lib_id).values()) == {"linked_file", "file_unavailable"}
    with Session(get_engine(zenv.db_url)) as s:
        docs = list(s.exec(select(Document).where(Document.owner_id == zenv.owner)))
        assert {d.id for d in docs} == kept
        assert all(d.zotero_library_id == lib_id for d in docs)
    # disconnect removing the documents (and the collections the sync made)
    with session_scope(zenv.db_url) as s:
        purges = zs.disconnect(s, zenv.owner, lib_id, keep_documents=False)
    assert sorted(d for d, _ in purges) == sorted(kept)
    with Session(get_engine(zenv.db_url)) as s:
        assert s.get(ZoteroLibrary, lib_id) is None
        assert list(s.exec(select(Document).where(Document.owner_id == zenv.owner))) == []
        # the collections were kept with the first disconnection, so they are the user's now
        assert len(list(s.exec(select(Collection).where(Collection.owner_id == zenv.owner)))) == 15
    # a library connected once and removed takes the collections it made with it
    lib_id = connect_web(zenv.db_url, zenv.owner, zenv.fz, zenv.key)
    with session_scope(zenv.db_url) as s:
        for c in s.exec(select(Collection).where(Collection.owner_id == zenv.owner)):
            lib.delete_collection(s, zenv.owner, c.id)
    engine.sync_library(sessions(zenv.db_url), lib_id, zenv.rec.hooks(), options(zenv.fz, zenv.tmp))
    with session_scope(zenv.db_url) as s:
        assert len(list(s.exec(select(Collection).where(Collection.owner_id == zenv.owner)))) == 15
        zs.disconnect(s, zenv.owner, lib_id, keep_documents=False)
    with Session(get_engine(zenv.db_url)) as s:
        assert list(s.exec(select(Collection).where(Collection.owner_id == zenv.owner))) == []
        assert list(s.exec(select(Document).where(Document.owner_id == zenv.owner))) == []


def test_periodic_due_list(zenv):
    from datetime import timedelta

    from bayes_app.models import utcnow

    with session_scope(zenv.db_url) as s:
        assert zenv.lib_id in zs.due_for_sync(s, 15)  # never synced
    zenv.sync()
    with session_scope(zenv.db_url) as s:
        assert zenv.lib_id not in zs.due_for_sync(s, 15)  # just synced
        assert zs.due_for_sync(s, 0) == []  # periodic sync off
        row = s.get(ZoteroLibrary, zenv.lib_id)
        row.last_sync_at = utcnow() - timedelta(minutes=16)
        s.add(row)
    with session_scope(zenv.db_url) as s:
        assert zenv.lib_id in zs.due_for_sync(s, 15)
        row = s.get(ZoteroLibrary, zenv.lib_id)  # a sync whose worker died (lease expired)
        row.status, row.last_sync_at = "syncing", utcnow()
        row.lease_until = utcnow() - timedelta(seconds=1)
        s.add(row)
    with session_scope(zenv.db_url) as s:
        assert zenv.lib_id in zs.due_for_sync(s, 15)
        row = s.get(ZoteroLibrary, zenv.lib_id)  # a live sync is left alone
        row.lease_until = utcnow() + timedelta(seconds=30)
        s.add(row)
    with session_scope(zenv.db_url) as s:
        assert zenv.lib_id not in zs.due_for_sync(s, 15)
