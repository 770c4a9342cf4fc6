"""Cross-language search through the real ingestion path and index process: an English
question finds the German and the French version of a passage in a library that also holds
the English original and same-topic English distractors (tests/fixtures/crosslang)."""

from __future__ import annotations

import io
import json
import os
import textwrap
from pathlib import Path

import pytest
from sqlmodel import Session, select

from bayes_app.db import get_engine, session_scope
from bayes_app.models import Document
from tests.support.ingest_env import ingest, ingest_env
from tests.support.tiny_pdf import text_pdf

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "crosslang"
ITEMS = json.loads((FIXTURE / "items.json").read_text(encoding="utf-8"))
EXTRA = json.loads((FIXTURE / "distractors.json").read_text(encoding="utf-8"))
# The first five topics of the fixture (fixed before the test was first run).
CHECKED = [it["id"] for it in ITEMS[: int(os.environ.get("XL_N", "5"))]]


def _pdf(title: str, text: str) -> bytes:
    return text_pdf(title, textwrap.wrap(text, 85))


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """Every fixture passage as its own one-page PDF, ingested into one owner's library."""
    with ingest_env(tmp_path_factory.mktemp("crosslang"), "polyglot@example.com") as env:
        docs: dict[str, str] = {}
        passages = [(f"{it['id']}:{lang}", it[lang]) for it in ITEMS for lang in ("en", "de", "fr")]
        passages += [(f"{it['id']}:distractor", it["distractor"]) for it in ITEMS]
        passages += [(f"extra:{lang}:{j}", t) for lang, texts in EXTRA.items() for j, t in enumerate(texts)]
        for key, text in passages:
            doc_id, res = ingest(env, _pdf(f"Note {len(docs) + 1}", text), f"note{len(docs)}.pdf")
            assert res.status == "indexed", (key, res)
            docs[key] = doc_id
        yield env | {"docs": docs}


def test_language_is_detected_per_document(library):
    with session_scope(library["db_url"]) as s:
        lang = {d.id: d.language for d in s.exec(select(Document))}
    docs = library["docs"]
    wrong = [
        key
        for key, doc_id in docs.items()
        if lang[doc_id]
        != (
            key.split(":")[1]
            if key.startswith("extra:")
            else "en"
            if key.endswith(("en", "distractor"))
            else key.rsplit(":", 1)[1]
        )
    ]
    assert not wrong, wrong
    # non-English passages (and only those) carry a multilingual vector
    index = library["index"]
    assert index.client.count(index.cross_collection).count == sum(
        1 for key in docs if key.rsplit(":", 1)[1] in ("de", "fr") or key.startswith(("extra:de", "extra:fr"))
    )


@pytest.mark.parametrize("item_id", CHECKED)
def test_english_question_finds_the_german_and_french_versions_in_the_top_3(library, item_id):
    from bayes_app.search import hybrid

    item = next(it for it in ITEMS if it["id"] == item_id)
    docs = library["docs"]
    with session_scope(library["db_url"]) as s:
        hits = hybrid.search(s, library["index"], library["embedder"], library["owner"], item["query"], k=10)
    top3 = [h.document_id for h in hits[:3]]
    assert docs[f"{item_id}:de"] in top3, [h.text[:60] for h in hits[:5]]
    assert docs[f"{item_id}:fr"] in top3, [h.text[:60] for h in hits[:5]]
    by_doc = {h.document_id: h for h in hits}
    assert by_doc[docs[f"{item_id}:de"]].language == "de"
    assert by_doc[docs[f"{item_id}:fr"]].language == "fr"
    assert not by_doc[docs[f"{item_id}:de"]].weak
    assert by_doc[docs[f"{item_id}:de"]].model_dump()["language"] == "de"


def test_without_foreign_documents_search_is_the_english_hybrid(library):
    """The cross-language leg is off for an owner whose documents are all in English: the
    results are those of the plain hybrid query (and the multilingual model is not asked)."""
    from bayes_app.accounts import service
    from bayes_app.library import ingest, storage, uploads
    from bayes_app.search import hybrid, sparse

    class Refuses:
        name = "refuses"

        def embed_query(self, _text):
            raise AssertionError("the multilingual model must not run for an English-only library")

    db_url, index, emb = library["db_url"], library["index"], library["embedder"]
    with session_scope(db_url) as s:
        owner = service.register(s, "anglo@example.com", "tangerine-sky-42").id
    for j, it in enumerate(ITEMS[:6]):
        for text in (it["en"], it["distractor"]):
            acc = uploads.accept(owner, io.BytesIO(_pdf(f"English {j}", text)), f"en{j}.pdf")
            ingest.ingest_document(
                lambda: Session(get_engine(db_url)),
                acc.document_id,
                acc.generation,
                files_root=storage.default_store(),
                index=index,
                embedder=emb,
            )
    q = ITEMS[0]["query"]
    with session_scope(db_url) as s:
        hits = hybrid.search(s, index, emb, owner, q, k=5, cross_embedder=Refuses())
    sv = sparse.query_vector(q)
    plain = index.hybrid_search(
        emb.embed_query(q),
        (sv.indices, sv.values),
        owner_id=owner,
        limit=5,
        prefetch_limit=40,
        exclude_roles=hybrid.excluded_roles(),
    )
    assert [h.chunk_id for h in hits] == [str(h.point_id) for h in plain]
    assert all(h.language == "en" for h in hits)


def test_role_updates_and_deletes_reach_both_collections(library):
    """set_roles / delete_chunks take a mix of English chunks (main collection only) and
    German ones (both collections) without failing, and apply to both."""
    from qdrant_client import models

    from bayes_app.models import Chunk

    index, docs = library["index"], library["docs"]
    with session_scope(library["db_url"]) as s:
        de = [c.id for c in s.exec(select(Chunk).where(Chunk.document_id == docs["extra:de:5"]))]
        en = [c.id for c in s.exec(select(Chunk).where(Chunk.document_id == docs["extra:en:5"]))]
    index.set_roles(en + de, "footnote")
    for name in (index.collection, index.cross_collection):
        points, _ = index.client.scroll(
            name,
            scroll_filter=models.Filter(
                must=[models.FieldCondition(key="document_id", match=models.MatchValue(value=docs["extra:de:5"]))]
            ),
            with_payload=["role"],
        )
        assert points
        assert all(p.payload["role"] == "footnote" for p in points)
    index.delete_chunks(en + de)
    assert index.count(document_id=docs["extra:de:5"]) == 0
    assert (
        index.client.count(
            index.cross_collection,
            count_filter=models.Filter(
                must=[models.FieldCondition(key="document_id", match=models.MatchValue(value=docs["extra:de:5"]))]
            ),
        ).count
        == 0
    )


def test_a_map_citation_of_a_german_passage_says_its_language(library):
    from bayes_app.maps import citations, service
    from bayes_app.search import hybrid

    item = ITEMS[0]
    with session_scope(library["db_url"]) as s:
        hits = hybrid.search(s, library["index"], library["embedder"], library["owner"], item["query"], k=10)
        german = next(h for h in hits if h.document_id == library["docs"][f"{item['id']}:de"])
        m = service.create_map(s, library["owner"], "Languages")
        root = service.map_view(s, library["owner"], m["id"])["nodes"][0]["id"]
        citations.attach_citation(s, library["owner"], m["id"], root, german.chunk_id)
        view = service.map_view(s, library["owner"], m["id"])
    assert [c["language"] for c in view["citations"]] == ["de"]
