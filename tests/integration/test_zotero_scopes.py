"""Zotero collections as scopes, with a real index process and real embeddings: a scope on a
Zotero collection covers its sub-collections, moving an item between collections in Zotero
changes the scope on the next sync, and the "my highlights" filter returns only highlighted
passages (with their rectangles)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from bayes_app.accounts import service as accounts
from bayes_app.db import get_engine, session_scope
from bayes_app.library.documents import collection_ids_of
from bayes_app.library.ingest import ingest_document
from bayes_app.models import Collection, Document
from bayes_app.usecases import library as app_lib
from bayes_app.usecases import zotero as app_zotero
from bayes_app.zotero import engine
from bayes_app.zotero.scopes import with_subcollections
from tests.support.fake_zotero_write import add_annotation
from tests.support.procs import index_process
from tests.support.tiny_pdf import text_pdf
from tests.support.zotero_sync import SECRET, Recorder, connect_web, new_ids, options, sessions

GLACIER = "Alpine glaciers lost a third of their ice volume between 2000 and 2020 according to the survey."
CORAL = "Coral reefs bleach when the water temperature stays above the seasonal maximum for weeks."


@pytest.fixture(scope="module")
def index_env(tmp_path_factory):
    """A real index process; this process's settings point at it."""
    with index_process(Path(tmp_path_factory.mktemp("zidx"))) as tmp:
        yield tmp


def test_collection_scopes_follow_zotero(db_url, fake_zotero, index_env, monkeypatch):
    from bayes_app import settings
    from bayes_app.search import runtime

    for k, v in {"BAYES_SECRET_KEY": SECRET, "DATABASE_URL": db_url, "ZOTERO_API_URL": fake_zotero.base}.items():
        monkeypatch.setenv(k, v)
    settings.get_settings.cache_clear()
    uid, key = new_ids()
    z = fake_zotero.add_user(uid, key, username=f"user{uid}")
    z.put_collection({"key": "TOPCOL01", "name": "Climate", "parentCollection": False, "relations": {}})
    z.put_collection({"key": "SUBCOL01", "name": "Ice", "parentCollection": "TOPCOL01", "relations": {}})
    z.put_collection({"key": "OCEANS01", "name": "Oceans", "parentCollection": False, "relations": {}})
    for item, col_key, text in (("ITEMICE1", "SUBCOL01", GLACIER), ("ITEMSEA1", "OCEANS01", CORAL)):
        z.put_item(
            {
                "key": item,
                "itemType": "journalArticle",
                "title": f"Paper {item}",
                "creators": [],
                "collections": [col_key],
                "tags": [],
                "relations": {},
            }
        )
        z.add_pdf(item, "A" + item[1:], text_pdf(f"Paper {item}", [text]))
    add_annotation(z, "ATEMICE1", "HILITE01", text=GLACIER[:60], page_index=0, rects=[[72, 700, 400, 712]])
    with session_scope(db_url) as s:
        owner = accounts.register(s, f"s{uid}@example.com", "tangerine-sky-42").id
    lib_id = connect_web(db_url, owner, fake_zotero, key)
    sf = sessions(db_url)
    rec = Recorder()
    opts = options(fake_zotero, index_env)
    assert engine.sync_library(sf, lib_id, rec.hooks(), opts).outcome == "synced"
    for doc_id, gen in rec.ingested:
        ingest_document(sf, doc_id, gen, files_root=opts.files_root, index=runtime.index(), embedder=runtime.embedder())
    with Session(get_engine(db_url)) as db:
        cols = {c.name: c.id for c in db.exec(select(Collection).where(Collection.owner_id == owner))}
        docs = {d.zotero_item_key: d.id for d in db.exec(select(Document).where(Document.owner_id == owner))}
        assert with_subcollections(db, owner, [cols["Climate"]]) == [cols["Climate"], cols["Climate / Ice"]]

    def found(col_name: str | None, q: str = "glaciers ice volume") -> set[str]:
        ids = [cols[col_name]] if col_name else None
        return {h.document_id for h in app_lib.search(owner, q, 5, None, ids)}

    assert found("Climate") == {docs["ITEMICE1"]}  # through its sub-collection "Ice"
    assert found("Oceans") == {docs["ITEMSEA1"]}
    assert found(None) == {docs["ITEMICE1"], docs["ITEMSEA1"]}

    # "my highlights": only the highlighted passage, with its rectangles
    hits = [h.model_dump() for h in app_zotero.search_highlights(owner, "glaciers", 5)]
    assert [h["document_id"] for h in hits] == [docs["ITEMICE1"]]
    assert hits[0]["highlighted"]
    assert hits[0]["highlight"]["rects"] == [[72, 700, 400, 712]]
    assert app_zotero.search_highlights(owner, "glaciers", 5, collection_ids=[cols["Oceans"]]) == []

    # the item moves to "Oceans" in Zotero: on the next sync the scopes follow
    z.edit_item("ITEMICE1", collections=["OCEANS01"])
    rec.clear()
    assert engine.sync_library(sf, lib_id, rec.hooks(), opts).outcome == "synced"
    assert docs["ITEMICE1"] in rec.regrouped
    for d in rec.regrouped:  # what the collections job does
        with session_scope(db_url) as db:
            ids = collection_ids_of(db, d)
        runtime.index().set_collections(d, ids)
    assert found("Climate") == set()
    assert found("Oceans") == {docs["ITEMICE1"], docs["ITEMSEA1"]}
