"""maps.living: the relevance of a paper to a map, and Co-STORM's top-down placement."""

from __future__ import annotations

import numpy as np

from bayes_app.maps import crowding, living
from bayes_app.models import MapNode


def _u(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def _node(i: str, parent: str | None, kind: str, title: str, order: int = 0) -> MapNode:
    return MapNode(id=i, map_id="m", parent_id=parent, kind=kind, title=title, order_index=order)


def test_relevance_is_the_best_map_text_over_its_top_passages():
    texts = np.stack([_u(1, 0, 0), _u(0, 1, 0)])
    on_theme = np.stack([_u(0, 1, 0.1), _u(0, 1, 0.2), _u(0, 1, 0.3), _u(0, 0, 1)])
    off = np.stack([_u(0, 0, 1), _u(0.1, 0, 1)])
    assert living.relevance(on_theme, texts) > 0.9  # one theme matched strongly is enough
    assert living.relevance(off, texts) < 0.2
    # one lucky passage does not make a paper relevant: the mean of the best three counts
    lucky = np.stack([_u(1, 0, 0), _u(0, 0, 1), _u(0, 0.1, 1)])
    assert living.relevance(lucky, texts) < 0.5
    assert living.relevance(np.zeros((0, 3)), texts) == 0.0


def test_map_texts_are_the_question_then_the_branches():
    nodes = [
        _node("r", None, "question", "Q?"),
        _node("t", "r", "theme", "Theme"),
        _node("c", "t", "claim", "A claim."),
        _node("h", "r", "chapter", "Chapter"),
    ]
    assert living.map_texts(nodes) == ["Q?", "Theme", "Chapter"]


def test_placement_descends_the_best_branch_inserts_or_creates():
    nodes = [
        _node("r", None, "question", "Q"),
        _node("a", "r", "theme", "A", 0),
        _node("a1", "a", "theme", "A1", 0),
        _node("a2", "a", "theme", "A2", 1),
        _node("b", "r", "theme", "B", 1),
        _node("bc", "b", "claim", "b claim", 0),
    ]
    vec_of = {
        "a": _u(1, 0, 0, 0),
        "a1": _u(1, 1, 0, 0),
        "a2": _u(1, -1, 0, 0),
        "b": _u(0, 0, 1, 0),
        "bc": _u(0, 0, 1, 0.2),
    }
    tree = living.build_tree(nodes, vec_of)
    assert [b.id for b in tree] == ["a", "b"]
    assert [c.id for c in tree[0].children] == ["a1", "a2"]
    deep = living.place(_u(1, 0.9, 0, 0), "r", tree)
    assert (deep.action, deep.parent_id, deep.path) == ("insert", "a1", ("A", "A1"))
    flat = living.place(_u(0, 0, 1, 0.1), "r", tree)
    assert (flat.action, flat.parent_id, flat.path) == ("insert", "b", ("B",))
    new = living.place(_u(0, 0, 0, 1), "r", tree)
    assert (new.action, new.parent_id) == ("create", "r")
    # a claim that matches the branch but none of its sub-branches stays at the branch
    mid = living.place(_u(1, 0, 0, 0.05), "r", tree, descend_floor=0.8)
    assert (mid.action, mid.parent_id) == ("insert", "a")


def test_crowded_counts_the_claims_directly_under_a_theme():
    nodes = [_node("r", None, "question", "Q"), _node("t", "r", "theme", "T"), _node("u", "r", "theme", "U")]
    nodes += [_node(f"c{k}", "t", "claim", f"c{k}", k) for k in range(13)]
    nodes += [_node(f"d{k}", "u", "claim", f"d{k}", k) for k in range(12)]
    (hit,) = crowding.crowded(nodes, 12)
    assert hit[0].id == "t"
    assert [c.id for c in hit[1]] == [f"c{k}" for k in range(13)]
    assert crowding.crowded(nodes, 13) == []


def test_the_preview_row_names_each_claim_where_it_goes_its_paper_and_the_cost():
    from state.map_updates import challenge_lines, update_row

    p = {
        "id": "p1",
        "charged_credits": 1_234_567,
        "payload": {
            "documents": [{"id": "d", "title": "New study"}],
            "items": [
                {
                    "n": 0,
                    "action": "insert",
                    "text": "C0",
                    "path": ["A", "A1"],
                    "document_title": "New study",
                    "page": 3,
                },
                {"n": 1, "action": "create", "text": "C1", "theme_title": "Fresh", "document_title": "", "page": 1},
                {
                    "n": 2,
                    "action": "counter",
                    "text": "C2",
                    "target_title": "Old claim",
                    "document_title": "N",
                    "page": 2,
                },
            ],
        },
    }
    row = update_row(p)
    assert row["papers"] == "1 new paper(s): New study"
    assert row["cost"] == "cost 1.23 credits"
    assert [(i["key"], i["action"], i["where"]) for i in row["items"]] == [
        ("p1:0", "under", "A › A1"),
        ("p1:1", "new theme", "Fresh"),
        ("p1:2", "counterpoint to", "Old claim"),
    ]
    assert row["items"][0]["paper"] == "New study, p. 3"
    assert row["items"][1]["paper"] == "Untitled, p. 1"
    assert update_row({**p, "charged_credits": None})["cost"] == "cost not settled yet"
    n = {"challenged_by": [{"verb": "superseded", "line": "Superseded by New study (evidence arrived 2026-11-20)"}]}
    assert challenge_lines(n) == ["Superseded by New study (evidence arrived 2026-11-20)"]
    assert challenge_lines({"challenged_by": []}) == []
