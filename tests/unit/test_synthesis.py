"""Synthesis pieces without a database: reading order from cue words, a model's prose with its
markers checked against the claims (unmarked sentences dropped), reference labels per paper."""

from __future__ import annotations

from bayes_app.maps import export, synthesis
from bayes_app.models import Citation


def test_role_order_background_method_results_limitations():
    background = ["Academic search lies at the core of research."]
    method = ["We propose a crawler trained with reinforcement learning.", "The framework uses two agents."]
    results = ["PaSa outperforms Google Scholar by 37% in recall.", "Accuracy improves significantly."]
    limits = ["However, the approach fails on long queries.", "A limitation is the cost of annotation."]
    ranks = [synthesis.role_of(t) for t in (limits, results, background, method)]
    assert ranks == [3, 2, 0, 1]


def _cit(cid: str, page: int, quote: str) -> Citation:
    return Citation(id=cid, map_id="m", node_id=f"n{cid}", document_id="d1", page=page, quote=quote)


def test_model_prose_markers_point_to_the_claim_of_their_sentence_and_unmarked_sentences_go():
    a = _cit("a", 5, "The Crawler is trained in two stages: imitation learning, then reinforcement learning.")
    b = _cit("b", 1, "PaSa-7B surpasses Google with GPT-4o by 37.78% in recall@20.")
    o = export.Outline(
        "",
        {1: "He et al. 2025, pp. 1, 5"},
        {1: [a, b]},
        claims={1: ["The Crawler is trained in two stages.", "PaSa-7B beats Google by 37.78%."]},
        claims_of={
            "a": ["The Crawler is trained in two stages."],
            "b": ["PaSa-7B beats Google by 37.78% in recall@20."],
        },
    )
    prose = (
        "PaSa-7B beats Google by 37.78% in recall@20 [1]. The Crawler is trained first by imitation "
        "learning and then with reinforcement learning [1]. It rains in Shanghai [1]. This matters a lot.\n\n"
        "[1] The crawler learns."
    )
    s, dropped, lost = synthesis.from_prose(prose, o)
    # the Shanghai marker and the one that opens a sentence; the Shanghai, the unmarked sentence and
    # the one whose only marker came first
    assert dropped == [1, 1]
    assert lost == 3
    assert s.citations == [b, a]  # numbered in order of first use, each the claim its sentence states
    assert s.text.startswith("PaSa-7B beats Google by 37.78% in recall@20 [1]. The Crawler is trained")
    assert "reinforcement learning [2]." in s.text
    assert "Shanghai" not in s.text
    assert "matters" not in s.text


def test_pages_label_lists_every_page_once():
    assert export.pages_label({14}) == "p. 14"
    assert export.pages_label({14, 1, 5}) == "pp. 1, 5, 14"


def test_each_marker_of_a_two_clause_sentence_points_to_its_own_clause_claim():
    a = _cit("a", 5, "The Selector acts as a single-token reward model during Crawler training.")
    b = _cit("b", 1, "PaSa-7B surpasses Google with GPT-4o by 37.78% in recall@20.")
    o = export.Outline(
        "",
        {1: "He et al. 2025, pp. 1, 5"},
        {1: [a, b]},
        claims_of={"a": ["The Selector serves as a reward model."], "b": ["PaSa-7B wins on recall against Google."]},
    )
    s, dropped, lost = synthesis.from_prose(
        "PaSa trains the Selector as a reward model [1], and PaSa-7B wins on recall against Google [1].", o
    )
    assert (dropped, lost) == ([], 0)
    assert s.citations == [a, b]
    assert s.text == "PaSa trains the Selector as a reward model [1], and PaSa-7B wins on recall against Google [2]."


def test_a_paragraph_whose_claims_share_no_phrase_gets_no_heading_rather_than_a_false_one():
    from bayes_app.agents import naming
    from bayes_app.maps.synthesis import _Group, _heads
    from bayes_app.models import MapNode
    from bayes_app.search.embeddings import get_embedder

    model = get_embedder()
    texts = [
        "Upon taking an action, the Crawler appends a set of new papers to the queue.",
        "We then sample papers from the search results and obtain the initial state.",
    ]
    shared = _Group("Crawler appends", [(MapNode(title=t), []) for t in texts], 0)
    held = _Group("Paper queue", [(MapNode(title=t), []) for t in ["The paper queue grows.", "A paper queue."]], 1)
    _heads([shared, held], lambda ts: model.embed_passages(list(ts)))
    assert shared.title == "" or naming.holds(shared.title, texts)
    assert held.title == "Paper queue"
