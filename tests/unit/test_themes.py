"""Themes a reader would choose (bayes_app.agents.themes): balanced groups, short noun-phrase
names from the group's own claims, no two names alike, and the relevance floor against a node."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_app.agents import themes
from bayes_app.search.embeddings import get_embedder


def _embed(texts):
    return get_embedder().embed_passages(list(texts))


def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def test_balanced_groups_split_a_dominant_cluster_and_keep_every_item_once():
    rng = np.random.default_rng(7)
    centres = _unit(rng.normal(size=(6, 32)))
    # one broad cluster of 24 items and five small ones of 3
    vecs = [centres[0] + 0.35 * rng.normal(size=32) for _ in range(24)]
    vecs += [centres[k] + 0.1 * rng.normal(size=32) for k in range(1, 6) for _ in range(3)]
    vecs = _unit(np.array(vecs))
    groups = themes.balanced_groups(vecs)
    flat = sorted(i for g in groups for i in g)
    assert flat == list(range(len(vecs)))  # every item exactly once
    assert len(groups) >= 4
    assert max(len(g) for g in groups) <= len(vecs) / 2
    assert all(len(g) >= 2 for g in groups)  # single items join their closest group


def test_balanced_groups_on_identical_vectors_still_respect_the_cap():
    vecs = _unit(np.ones((10, 8)))
    groups = themes.balanced_groups(vecs)
    assert sorted(i for g in groups for i in g) == list(range(10))
    assert max(len(g) for g in groups) <= 5


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Search agents", "search agent", True),
        ("Crawler", "crawler", True),
        ("Crawler", "Crawler training", False),
        ("RL reward", "Reward", False),
    ],
)
def test_same_name(a, b, same):
    assert themes.same_name(a, b) is same


CRAWLER = [
    "The Crawler invokes the search tool to generate queries for the user query.",
    "The Crawler expands citations of each paper it reads.",
    "Requires high-quality academic search for the Crawler to be useful.",
    "The Crawler collects papers by following citation networks.",
]


def test_name_is_a_short_noun_phrase_of_the_claims_and_avoids_taken_names():
    vecs = _embed(CRAWLER)
    title = themes.name(CRAWLER, vecs, [], _embed)
    assert title.lower() in " ".join(CRAWLER).lower()
    assert len(title.split()) <= themes.MAX_NAME_WORDS
    assert not title.lower().startswith(("requires", "invokes", "expands"))
    other = themes.name(CRAWLER, vecs, [title], _embed)
    assert not themes.same_name(other, title)


def test_group_names_are_distinct_and_cover_every_text():
    texts = CRAWLER + [
        "The Selector reads each paper and decides whether it meets the query.",
        "The Selector acts as a reward model during Crawler training.",
        "The Selector is fine-tuned on synthetic data.",
        "PaSa-7B surpasses the best Google-based baseline by 37.78% in recall@20.",
        "PaSa-7B exceeds PaSa-GPT-4o by 30.36% in recall.",
        "Recall on RealScholarQuery improves over Google Scholar.",
    ]
    groups = themes.group(texts, _embed, taken=["Crawler"])
    names = [t for t, _ in groups]
    assert sorted(i for _, g in groups for i in g) == list(range(len(texts)))
    for i, a in enumerate(names):
        assert not themes.same_name(a, "Crawler")
        assert not any(themes.same_name(a, b) for b in names[i + 1 :]), names


def test_on_topic_keeps_what_is_about_the_node_not_what_belongs_to_another_theme():
    node = [
        "Crawler",
        "The Crawler invokes the search tool to generate queries.",
        "The Crawler collects papers by following citation networks.",
    ]
    others = [
        [
            "Benchmark",
            "The RealScholarQuery benchmark has 50 real-world academic queries.",
            "AutoScholarQuery contains 35k fine-grained academic queries.",
        ]
    ]
    texts = [
        "PaSa uses reinforcement learning to train an agent that expands citations and searches.",
        "Annotators labelled relevant papers for each benchmark query.",
        "Counterfactual explanations show the minimal change to a molecule that flips the prediction.",
    ]
    assert themes.on_topic(texts, node, others, embed=_embed) == [True, False, False]


def test_balanced_groups_never_put_two_or_three_claims_in_one_group():
    vecs = np.array([[1.0, 0.0, 0.0], [0.99, 0.14, 0.0], [0.0, 0.0, 1.0]])
    vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    assert themes.balanced_groups(vecs) == [[0, 1], [2]]
    assert themes.balanced_groups(vecs[[0, 2]]) == [[0], [1]]
    assert themes.balanced_groups(vecs[:1]) == [[0]]


def test_a_name_is_never_a_generic_word_when_the_claims_have_a_phrase():
    texts = [
        "Models are often opaque to chemists.",
        "Deep learning models are opaque black boxes for chemists.",
        "Opaque deep learning models hide their reasoning from chemists.",
    ]
    title = themes.name(texts, _embed(texts), [], _embed)
    assert len(title.split()) in (2, 3), title


def _node(id_, kind, title, parent_id=None):
    from types import SimpleNamespace

    return SimpleNamespace(id=id_, kind=kind, title=title, parent_id=parent_id, body="")


def test_a_theme_whose_name_no_claim_pair_holds_is_split_until_each_part_s_name_does():
    from bayes_app.agents.pipeline import Theme, _name_fixes

    claims = [  # "database" in one of them only, and no phrase in two of the four
        "We developed a database to manage and restore research papers.",
        "Reinforcement learning rewards the agent for every relevant find.",
        "Counterfactual explanations show the smallest change that flips a prediction.",
        "Selectors read each candidate in full before they decide.",
    ]
    nodes = [_node("root", "question", "Q"), _node("t", "theme", "Database", "root")]
    nodes += [_node(f"c{i}", "claim", c, "t") for i, c in enumerate(claims)]
    theme = Theme(None, "root", "Database")
    theme.node_id = "t"
    [(fixed, parent, parts)] = _name_fixes(nodes, {"t": theme})
    assert fixed is theme
    assert parent == "root"
    assert sorted(i for _, ids in parts for i in ids) == ["c0", "c1", "c2", "c3"]  # every claim once
    for name, ids in parts:
        assert themes.holds(name, [claims[int(i[1:])] for i in ids]), (name, ids)
    assert len(parts) >= 2


def test_a_theme_whose_name_holds_is_left_alone():
    from bayes_app.agents.pipeline import Theme, _name_fixes

    nodes = [_node("t", "theme", "Database", "root")]
    nodes += [
        _node("a", "claim", "The database stores papers.", "t"),
        _node("b", "claim", "A database of queries.", "t"),
    ]
    theme = Theme(None, "root", "Database")
    theme.node_id = "t"
    assert _name_fixes(nodes, {"t": theme}) == []


def test_a_restructure_group_is_named_by_the_claims_that_will_be_the_theme_s_own():
    from bayes_app.agents.regroup import _own_name

    texts = [
        "Black-box models are hard to trust.",
        "Black-box models move into healthcare.",
        "XAI explains predictions of deep learning models in chemistry.",
        "XAI methods in chemistry are reviewed here.",
    ]
    # the two black-box claims are nested under the XAI ones (Deepen): they move along with them
    items = [
        _node("x1", "claim", texts[2], "t"),
        _node("x2", "claim", texts[3], "t"),
        _node("b1", "claim", texts[0], "x1"),
        _node("b2", "claim", texts[1], "x2"),
    ]
    order = [items[2], items[3], items[0], items[1]]
    parent = {n.id: n.parent_id for n in order}
    name = _own_name("Black-box models", [0, 1, 2, 3], order, texts, ["Black-box models"], parent)
    assert themes.holds(name, texts[2:]), name
