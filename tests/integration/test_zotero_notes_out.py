""" "Send to Zotero" against the fake Web API with the real pyzotero: a map becomes a standalone
note in the collection "Bayes" (created once) plus child notes on cited items; sending again
updates the same notes (nothing new); a concurrent change (412) is re-read and retried once; a
read-only key writes nothing and says so; 429 + Retry-After is waited out; untrusted text is
escaped."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from bayes_app.accounts import service as accounts
from bayes_app.db import get_engine, session_scope
from bayes_app.maps import service as maps
from bayes_app.models import Citation, Document, NodeKind, ZoteroNote
from bayes_app.usecases import zotero as app_zotero
from bayes_app.zotero import engine
from bayes_app.zotero.service import ZoteroError
from tests.support.fake_zotero import seed_recorded
from tests.support.fake_zotero_write import grant_write
from tests.support.zotero_sync import SECRET, Recorder, connect_web, new_ids, options, sessions

pytestmark = pytest.mark.waits  # on the processes it starts: ordered beside CPU-bound files

EVIL = '<img src=x onerror="alert(1)"> & <script>bad()</script>'


@pytest.fixture
def sent(db_url, fake_zotero, configure, tmp_path):
    """An owner with a synced Zotero library (write access) and a map citing two of its items."""
    configure(
        BAYES_SECRET_KEY=SECRET, BAYES_DATA_DIR=str(tmp_path), DATABASE_URL=db_url, ZOTERO_API_URL=fake_zotero.base
    )
    uid, key = new_ids()
    zlib = fake_zotero.add_user(uid, key, username=f"user{uid}", write=True)
    atts = seed_recorded(zlib, pdf_for=3)
    with session_scope(db_url) as s:
        owner = accounts.register(s, f"n{uid}@example.com", "tangerine-sky-42").id
    lib_id = connect_web(db_url, owner, fake_zotero, key)
    assert (
        engine.sync_library(sessions(db_url), lib_id, Recorder().hooks(), options(fake_zotero, tmp_path)).outcome
        == "synced"
    )
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        docs = list(db.exec(select(Document).where(Document.owner_id == owner)))
        m = maps.create_map(db, owner, f"Map {EVIL}", "What do we know?")
        root = maps.root_of(db, m["id"])
        theme = maps.add_child(db, owner, m["id"], root.id, title="Theme one", kind=NodeKind.THEME)
        c1 = maps.add_child(db, owner, m["id"], theme["id"], title=f"Claim {EVIL}", kind=NodeKind.CLAIM)
        c2 = maps.add_child(db, owner, m["id"], theme["id"], title="Second claim", kind=NodeKind.CLAIM)
        db.add(Citation(map_id=m["id"], node_id=c1["id"], document_id=docs[0].id, page=2, quote=f"quote {EVIL}"))
        db.add(Citation(map_id=m["id"], node_id=c2["id"], document_id=docs[1].id, page=1, quote="plain quote"))
        db.commit()

    class Env:
        pass

    env = Env()
    env.__dict__.update(
        fz=fake_zotero,
        zlib=zlib,
        owner=owner,
        lib_id=lib_id,
        map_id=m["id"],
        docs=docs,
        key=key,
        uid=uid,
        atts=atts,
        db_url=db_url,
        c1=c1["id"],
    )
    env.send = lambda child_notes=True: app_zotero.send_map(
        owner, m["id"], {"library_id": lib_id, "child_notes": child_notes}
    ).model_dump()
    return env


def notes(zlib) -> dict[str, dict]:
    return {k: d for k, d in zlib.items.items() if d["itemType"] == "note"}


def test_send_creates_then_updates_the_same_notes(sent):
    out = sent.send()
    assert len(out["written"]) == 3
    assert not out["failed"]
    assert not out["updated"]
    made = notes(sent.zlib)
    assert set(made) == set(out["written"])
    bayes = [c for c in sent.zlib.collections.values() if c["name"] == "Bayes"]
    assert len(bayes) == 1
    assert out["collection_key"] == bayes[0]["key"]
    map_note = next(d for d in made.values() if not d.get("parentItem"))
    assert map_note["collections"] == [bayes[0]["key"]]
    html = map_note["note"]
    # nested lists: theme → claim → quote; untrusted text escaped; a zotero:// link to the page
    assert "<ul><li><strong>Theme one</strong><ul><li>Claim &lt;img" in html
    assert "<img" not in html
    assert "<script" not in html
    assert "&lt;script&gt;" in html
    att = sent.docs[0].zotero_attachment_key
    assert f'href="zotero://open-pdf/library/items/{att}?page=2"' in html
    children = {d["parentItem"]: d for d in made.values() if d.get("parentItem")}
    assert set(children) == {sent.docs[0].zotero_item_key, sent.docs[1].zotero_item_key}
    assert "Second claim" in children[sent.docs[1].zotero_item_key]["note"]

    # again, unchanged map: nothing new, nothing rewritten
    again = sent.send()
    assert sorted(again["unchanged"]) == sorted(out["written"])
    assert not again["written"]
    assert len(notes(sent.zlib)) == 3
    assert len([c for c in sent.zlib.collections.values() if c["name"] == "Bayes"]) == 1
    # the map changes: the same notes are updated
    with Session(get_engine(sent.db_url)) as db:
        maps.update_node(db, sent.owner, sent.map_id, sent.c1, title="Claim reworded")
    third = sent.send()
    assert set(third["updated"]) | set(third["unchanged"]) == set(out["written"])
    assert not third["written"]
    assert len(third["updated"]) == 2  # the map note and the first item's child note
    assert len(notes(sent.zlib)) == 3
    assert "Claim reworded" in sent.zlib.items[map_note["key"]]["note"]


def test_a_concurrent_change_is_reread_and_retried_once(sent):
    first = sent.send(child_notes=False)
    key = first["written"][0]
    sent.zlib.edit_item(key, note="<p>edited in Zotero</p>")  # Zotero's version moved on
    with Session(get_engine(sent.db_url)) as db:
        maps.update_node(db, sent.owner, sent.map_id, sent.c1, title="New wording")
    out = sent.send(child_notes=False)
    assert out["updated"] == [key]
    assert not out["failed"]
    assert "New wording" in sent.zlib.items[key]["note"]
    # deleted in Zotero: written again under a new key, and that key is kept
    sent.zlib.delete_item(key)
    with Session(get_engine(sent.db_url)) as db:
        maps.update_node(db, sent.owner, sent.map_id, sent.c1, title="Third wording")
    out = sent.send(child_notes=False)
    assert len(out["written"]) == 1
    assert out["written"][0] != key
    with Session(get_engine(sent.db_url)) as db:
        row = db.exec(select(ZoteroNote).where(ZoteroNote.map_id == sent.map_id)).one()
        assert row.note_key == out["written"][0]
        assert row.version == sent.zlib.items[row.note_key]["version"]


def test_a_lost_answer_makes_no_copy(sent, monkeypatch):
    """Zotero stores the note but the answer never arrives: the next send updates it."""
    from bayes_app.zotero import notes_out

    real = notes_out.record
    monkeypatch.setattr(notes_out, "record", lambda *a, **k: None)  # the versions are never recorded
    sent.send(child_notes=False)
    monkeypatch.setattr(notes_out, "record", real)
    out = sent.send(child_notes=False)
    assert len(notes(sent.zlib)) == 1
    assert out["unchanged"] == list(notes(sent.zlib))
    assert not out["written"]


def test_read_only_key_writes_nothing(sent):
    grant_write(sent.fz, sent.key, write=False)  # the key lost write access after connecting
    with pytest.raises(ZoteroError) as err:
        sent.send()
    assert err.value.code == "read_only"
    assert err.value.status == 403
    assert "write access" in err.value.message
    assert not notes(sent.zlib)
    assert not any(c["name"] == "Bayes" for c in sent.zlib.collections.values())


def test_read_only_at_connect_is_refused_before_any_request(sent):
    with Session(get_engine(sent.db_url)) as db:
        from bayes_app.models import ZoteroLibrary

        row = db.get(ZoteroLibrary, sent.lib_id)
        row.permissions = dict(row.permissions, write=False)
        db.add(row)
        db.commit()
    sent.fz.reset_counters()
    with pytest.raises(ZoteroError) as err:
        sent.send()
    assert err.value.code == "read_only"
    assert sent.fz.count(f"/users/{sent.uid}/") == 0


def test_rate_limit_is_waited_out(sent):
    sent.fz.fail(429, path=f"/users/{sent.uid}/items", retry_after="1")
    sent.fz.backoff = "1"
    out = sent.send(child_notes=False)
    assert len(out["written"]) == 1
    assert len(notes(sent.zlib)) == 1


def test_group_library_sync_annotations_and_notes(db_url, fake_zotero, configure, tmp_path):
    """A group the user belongs to: its items become the user's documents (nobody else's), its
    annotations come in, and a map is sent back into the group with group links."""
    from bayes_app.library.documents import NotFound
    from bayes_app.usecases import library as app_lib
    from tests.support.fake_zotero_write import add_annotation, add_group

    configure(
        BAYES_SECRET_KEY=SECRET, BAYES_DATA_DIR=str(tmp_path), DATABASE_URL=db_url, ZOTERO_API_URL=fake_zotero.base
    )
    uid, key = new_ids()
    fake_zotero.add_user(uid, key, username=f"user{uid}")
    gid = uid + 700000
    group = add_group(fake_zotero, key, gid, "Lab", write=True)
    atts = seed_recorded(group, pdf_for=2)
    att = next(iter(atts.values()))
    add_annotation(group, att, "GRPANN01", text="a group highlight", page_index=0)
    with session_scope(db_url) as s:
        owner = accounts.register(s, f"g{uid}@example.com", "tangerine-sky-42").id
        other = accounts.register(s, f"o{uid}@example.com", "tangerine-sky-42").id
    lib_id = connect_web(db_url, owner, fake_zotero, key, library_type="group", library_id=str(gid))
    assert (
        engine.sync_library(sessions(db_url), lib_id, Recorder().hooks(), options(fake_zotero, tmp_path)).outcome
        == "synced"
    )
    docs = app_lib.documents(owner)
    assert len(docs) == 2
    assert app_lib.documents(other) == []
    doc_id = next(d.id for d in docs if _att_of(db_url, d.id) == att)
    assert [a.key for a in app_zotero.document_annotations(owner, doc_id)] == ["GRPANN01"]
    with pytest.raises(NotFound):
        app_zotero.send_map(other, "nope", {"library_id": lib_id})  # not theirs
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        m = maps.create_map(db, owner, "Group map", "Q?")
        claim = maps.add_child(db, owner, m["id"], maps.root_of(db, m["id"]).id, title="A claim", kind=NodeKind.CLAIM)
        db.add(Citation(map_id=m["id"], node_id=claim["id"], document_id=doc_id, page=1, quote="q"))
        db.commit()
    out = app_zotero.send_map(owner, m["id"], {"library_id": lib_id, "child_notes": True})
    assert len(out.written) == 2
    note = next(d for d in group.items.values() if d["itemType"] == "note" and not d.get("parentItem"))
    assert f"zotero://open-pdf/groups/{gid}/items/{att}?page=1" in note["note"]


def _att_of(db_url: str, doc_id: str) -> str | None:
    with Session(get_engine(db_url)) as db:
        return db.get(Document, doc_id).zotero_attachment_key
