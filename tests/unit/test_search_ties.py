"""The same search returns the same passages in the same order: a tie of the fused score (two
overlapping passages that swap ranks between the dense and the sparse list) is broken by the
dense cosine, then by id — not by the order the index happens to return it in."""

from __future__ import annotations

import itertools

from bayes_app.search.hybrid import _tie_broken
from bayes_app.search.points import RRF_K, Hit


def test_a_fused_tie_is_broken_by_cosine_then_id_whatever_the_index_order():
    tie = 1 / (RRF_K + 1) + 1 / (RRF_K + 2)  # ranks 1 and 2 swapped between the two lists
    hits = [
        Hit("b", tie, dense=0.61),
        Hit("a", tie, dense=0.64),
        Hit("d", 0.5 * tie, dense=0.9),
        Hit("c", tie, dense=0.61),
        Hit("e", 2 * tie, dense=0.1),
    ]
    orders = {tuple(h.point_id for h in _tie_broken(list(p))) for p in itertools.permutations(hits)}
    assert orders == {("e", "a", "b", "c", "d")}


def test_a_hit_without_a_cosine_comes_after_its_tie():
    hits = [Hit("x", 0.3), Hit("y", 0.3, dense=0.2)]
    assert [h.point_id for h in _tie_broken(hits)] == ["y", "x"]
