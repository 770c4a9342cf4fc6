"""Zotero annotations in: they sync incrementally with the items (new, edited, deleted, trashed),
`annotations.for_document` / GET …/annotations list them validated, and "Add my Zotero highlights"
writes one cited claim per highlight under the best-fitting theme or "Your highlights"."""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session, select

from bayes_app.accounts import service as accounts
from bayes_app.db import get_engine, session_scope
from bayes_app.library import documents as lib
from bayes_app.maps import service as maps
from bayes_app.models import Citation, Document, MapNode, NodeKind, ZoteroItem
from bayes_app.usecases import zotero as app_zotero
from bayes_app.zotero import annotations as zann
from bayes_app.zotero import engine
from tests.support.fake_zotero import seed_recorded
from tests.support.fake_zotero_write import add_annotation
from tests.support.zotero_sync import SECRET, Recorder, connect_web, new_ids, options, sessions


@pytest.fixture
def zann_env(db_url, fake_zotero, configure, tmp_path):
    configure(
        BAYES_SECRET_KEY=SECRET, BAYES_DATA_DIR=str(tmp_path), DATABASE_URL=db_url, ZOTERO_API_URL=fake_zotero.base
    )
    uid, key = new_ids()
    zlib = fake_zotero.add_user(uid, key, username=f"user{uid}")
    atts = seed_recorded(zlib, pdf_for=2)
    a1, a2 = list(atts.values())
    add_annotation(
        zlib,
        a1,
        "ANNOT001",
        text="Sleep deprivation impairs memory consolidation in adults",
        comment="key result",
        color="#ff6666",
        page_index=1,
        rects=[[72, 500, 300, 512], [72, 488, 200, 500]],
    )
    add_annotation(zlib, a1, "ANNOT002", text="Coffee improves reaction time", page_index=0)
    add_annotation(zlib, a2, "ANNOT003", kind="note", comment="remember this", page_index=0)
    with session_scope(db_url) as s:
        owner = accounts.register(s, f"a{uid}@example.com", "tangerine-sky-42").id
    lib_id = connect_web(db_url, owner, fake_zotero, key)

    class Env:
        pass

    env = Env()
    env.__dict__.update(fz=fake_zotero, zlib=zlib, owner=owner, lib_id=lib_id, a1=a1, a2=a2, db_url=db_url, uid=uid)
    env.sync = lambda: engine.sync_library(sessions(db_url), lib_id, Recorder().hooks(), options(fake_zotero, tmp_path))
    env.doc = lambda att: _doc(db_url, owner, att)
    return env


def _doc(db_url, owner, att) -> Document:
    with Session(get_engine(db_url)) as db:
        return db.exec(select(Document).where(Document.owner_id == owner, Document.zotero_attachment_key == att)).one()


def anns(env, att) -> dict[str, dict]:
    return {a.key: a.model_dump() for a in app_zotero.document_annotations(env.owner, env.doc(att).id)}


def test_annotations_sync_incrementally_and_disappear_when_deleted(zann_env):
    env = zann_env
    assert env.sync().outcome == "synced"
    got = anns(env, env.a1)
    assert set(got) == {"ANNOT001", "ANNOT002"}
    a = got["ANNOT001"]
    assert a["type"] == "highlight"
    assert a["comment"] == "key result"
    assert a["color"] == "#ff6666"
    assert a["page"] == 2
    assert a["page_index"] == 1
    assert a["rects"] == [[72, 500, 300, 512], [72, 488, 200, 500]]
    assert list(got) == ["ANNOT002", "ANNOT001"]  # Zotero's sort order: page 1 before page 2
    assert [x["type"] for x in anns(env, env.a2).values()] == ["note"]

    # edited, new, deleted, trashed in Zotero → the next (incremental) sync follows
    env.zlib.edit_item("ANNOT001", annotationComment="revised", annotationColor="#2ea8e5")
    add_annotation(env.zlib, env.a2, "ANNOT004", text="A new highlight", page_index=0)
    env.zlib.delete_item("ANNOT002")
    env.zlib.trash_item("ANNOT003")
    env.fz.reset_counters()
    r = env.sync()
    assert r.outcome == "synced"
    assert r.items_changed == 3
    assert r.items_deleted == 1
    assert r.files_downloaded == 0
    got = anns(env, env.a1)
    assert set(got) == {"ANNOT001"}
    assert got["ANNOT001"]["comment"] == "revised"
    assert got["ANNOT001"]["color"] == "#2ea8e5"
    assert set(anns(env, env.a2)) == {"ANNOT004"}
    # nothing changed: still one request
    env.fz.reset_counters()
    assert env.sync().outcome == "unchanged"
    assert env.fz.count(f"/users/{env.uid}/") == 1
    # the attachment goes: its annotations go with it
    env.zlib.delete_item(env.a2)
    env.sync()
    with Session(get_engine(env.db_url)) as db:
        assert db.get(ZoteroItem, (env.lib_id, "ANNOT004")) is None
        assert [a.key for _, a in zann.highlights(db, env.owner)] == ["ANNOT001"]


def test_bad_annotation_data_is_dropped_or_made_safe(zann_env):
    env = zann_env
    env.zlib.put_item(
        {
            "key": "BADPOS01",
            "itemType": "annotation",
            "parentItem": env.a1,
            "annotationType": "highlight",
            "annotationText": "x",
            "annotationPosition": "not json",
        }
    )
    env.zlib.put_item(
        {
            "key": "BADCOL01",
            "itemType": "annotation",
            "parentItem": env.a1,
            "annotationType": "highlight",
            "annotationText": "y",
            "annotationColor": "red;background:url(javascript:1)",
            "annotationPosition": json.dumps({"pageIndex": 0, "rects": [[1, 2, 3, "x"], [5, 6, 3, 4]]}),
        }
    )
    env.sync()
    got = anns(env, env.a1)
    assert "BADPOS01" not in got
    assert got["BADCOL01"]["color"] == "#ffd400"
    assert got["BADCOL01"]["rects"] == [[3, 4, 5, 6]]


def test_another_owner_cannot_read_annotations(zann_env):
    env = zann_env
    env.sync()
    with session_scope(env.db_url) as s:
        other = accounts.register(s, f"other{env.uid}@example.com", "tangerine-sky-42").id
    with pytest.raises(lib.NotFound):
        app_zotero.document_annotations(other, env.doc(env.a1).id)


def test_add_my_highlights_writes_one_cited_claim_per_highlight(zann_env):
    env = zann_env
    env.sync()
    with Session(get_engine(env.db_url), expire_on_commit=False) as db:
        m = maps.create_map(db, env.owner, "Sleep", "What does sleep do?")
        root = maps.root_of(db, m["id"])
        theme = maps.add_child(db, env.owner, m["id"], root.id, title="Sleep and memory", kind=NodeKind.THEME)
    out = app_zotero.add_highlights(env.owner, m["id"], {})
    assert out.added == 2
    assert out.skipped == 0
    assert out.themes == {"Sleep and memory": 1, "Your highlights": 1}
    with Session(get_engine(env.db_url)) as db:
        nodes = {n.title: n for n in db.exec(select(MapNode).where(MapNode.map_id == m["id"]))}
        sleep = nodes["Sleep deprivation impairs memory consolidation in adults"]
        assert sleep.parent_id == theme["id"]
        assert sleep.body == "key result"
        assert sleep.created_by == "zotero"
        coffee = nodes["Coffee improves reaction time"]
        assert nodes["Your highlights"].kind == NodeKind.THEME
        assert coffee.parent_id == nodes["Your highlights"].id
        cit = db.exec(select(Citation).where(Citation.node_id == sleep.id)).one()
        assert cit.origin == "zotero"
        assert cit.page == 2
        assert cit.document_id == env.doc(env.a1).id
        assert cit.region["rects"] == [[72, 500, 300, 512], [72, 488, 200, 500]]
        assert cit.region["annotation_key"] == "ANNOT001"
        assert cit.region["color"] == "#ff6666"
    # again: nothing twice
    assert app_zotero.add_highlights(env.owner, m["id"], {}).added == 0
    # one undo removes them all
    with Session(get_engine(env.db_url)) as db:
        assert maps.undo(db, env.owner, m["id"]) == "add_zotero_highlights"
        titles = {n.title for n in db.exec(select(MapNode).where(MapNode.map_id == m["id"]))}
        assert titles == {root.title, "Sleep and memory"}
        assert not db.exec(select(Citation).where(Citation.map_id == m["id"])).all()


def test_highlighted_passages_are_preferred_evidence(zann_env):
    from bayes_app.agents.researcher import _header
    from bayes_app.agents.retrieval import Passage as AgentPassage
    from bayes_app.llm.offline import format_passages, parse_passages

    env = zann_env
    env.sync()
    d1, d2 = env.doc(env.a1).id, env.doc(env.a2).id
    text = "In a trial of 40 adults, sleep deprivation impairs memory consolidation in adults, as measured."
    hits = [
        {"document_id": d2, "page": 1, "text": "Unrelated passage about coffee.", "weak": False, "n": 1},
        {"document_id": d1, "page": 1, "text": text, "weak": False, "n": 2},  # wrong page: not it
        {"document_id": d1, "page": 2, "text": text, "weak": False, "n": 3},
        {"document_id": d1, "page": 2, "text": text, "weak": True, "n": 4},
    ]
    with Session(get_engine(env.db_url)) as db:
        out = zann.prefer_highlighted(db, hits)
    assert [h["n"] for h in out] == [3, 1, 2, 4]  # strong highlighted first; weak stays last
    assert out[0]["highlighted"]
    assert out[0]["highlight"]["annotation_key"] == "ANNOT001"
    assert out[0]["highlight"]["rects"][0] == [72, 500, 300, 512]
    assert not out[1]["highlighted"]
    assert not out[2]["highlighted"]
    # no highlight among the hits: the order is left alone
    with Session(get_engine(env.db_url)) as db:
        assert [h["n"] for h in zann.prefer_highlighted(db, [hits[1], hits[0]])] == [2, 1]

    # the model is told, in the passage header, and the header still parses
    text_block = format_passages(out[:2])
    assert "p. 2; you highlighted this)" in text_block
    parsed = parse_passages(text_block)
    assert [p.highlighted for p in parsed] == [True, False]
    assert parsed[0].text.startswith("In a trial")
    ap = AgentPassage(1, "c", d1, "Title", [], 2020, 2, text, highlighted=True)
    assert _header(ap).endswith("; you highlighted this")
