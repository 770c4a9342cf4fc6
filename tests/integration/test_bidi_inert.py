"""Issue 36.9: bidi controls in user-, document- or model-supplied text are inert wherever it is
shown or exported: stored titles and texts lose them (whatever path wrote them), and exports,
Zotero notes and the canvas drop them from rows written before the rule. Over HTTP
(TestClient over build_api) on SQLite and PostgreSQL."""

from __future__ import annotations

import io
import zipfile

from sqlalchemy import update
from sqlmodel import Session, select

from bayes_app.bidi import BIDI_CONTROLS, inert, inert_deep
from bayes_app.db import get_engine
from bayes_app.maps import live
from bayes_app.models import ChatMessage, Conversation, Document, MapNode
from bayes_app.zotero import notes_html
from tests.integration.test_maps_api import api, login  # noqa: F401 - the fixture

BASE = "/api/v1/mindmaps"
SPOOF = "Claim with \u202egnp.exe\u202c and \u2067isolate\u2069 \u200fmarks\u200e\u061c"


def _clean(text: str) -> bool:
    return not any(c in text for c in BIDI_CONTROLS)


def test_inert_drops_every_control_and_keeps_the_letters():
    assert inert(SPOOF) == "Claim with gnp.exe and isolate marks"
    assert inert("שלום عربي") == "שלום عربي"  # right-to-left letters are text, not controls
    assert inert_deep({"a": ["x\u202ey", 3], "b": None}) == {"a": ["xy", 3], "b": None}


def test_bidi_controls_are_inert_in_storage_views_and_exports(api, db_url):  # noqa: F811
    uid, h = login(db_url)
    m = api.post(BASE, json={"title": "Map \u202eevil", "question": SPOOF}, headers=h).json()
    assert _clean(m["title"])
    node = api.post(
        f"{BASE}/{m['id']}/nodes", json={"parent_id": m["root_id"], "title": SPOOF, "body": SPOOF}, headers=h
    ).json()
    assert node["title"] == inert(SPOOF)
    assert _clean(node["body"])
    renamed = api.patch(f"{BASE}/{m['id']}/nodes/{node['id']}", json={"title": "x\u202ey"}, headers=h).json()
    assert renamed["title"] == "xy"

    with Session(get_engine(db_url), expire_on_commit=False) as db:
        # a document's metadata and a model's answer, written by other paths
        doc = Document(owner_id=uid, filename="\u202efdp.pdf", file_sha256="0" * 64, title=SPOOF, authors=[SPOOF])
        conv = Conversation(owner_id=uid, title=SPOOF)
        db.add_all([doc, conv])
        db.flush()
        db.add(ChatMessage(conversation_id=conv.id, position=0, role="assistant", content=SPOOF))
        db.commit()
        db.expire_all()
        assert _clean(db.get(Document, doc.id).title)
        assert _clean(db.get(Document, doc.id).authors[0])
        assert _clean(db.get(Document, doc.id).filename)
        assert _clean(db.get(Conversation, conv.id).title)
        assert _clean(db.exec(select(ChatMessage).where(ChatMessage.conversation_id == conv.id)).one().content)
        # a row written before the rule (no flush guard on a bulk UPDATE)
        db.exec(update(MapNode).where(MapNode.id == node["id"]).values(title=SPOOF, body=SPOOF))  # type: ignore[call-overload]
        db.commit()

    md = api.get(f"{BASE}/{m['id']}/export.md", headers=h)
    assert md.status_code == 200
    assert "gnp.exe" in md.text
    assert _clean(md.text)
    docx = api.get(f"{BASE}/{m['id']}/export.docx", headers=h)
    xml = zipfile.ZipFile(io.BytesIO(docx.content)).read("word/document.xml").decode()
    assert "gnp.exe" in xml
    assert _clean(xml)
    with Session(get_engine(db_url), expire_on_commit=False) as db:
        notes = notes_html.render(db, uid, m["id"])
    assert "gnp.exe" in notes.map_note
    assert _clean(notes.map_note)
    view = api.get(f"{BASE}/{m['id']}", headers=h).json()
    graph = live.build_graph({n["id"]: n for n in view["nodes"]}, [], live_layout=True)
    assert all(_clean(n["title"]) for n in graph["nodes"])
