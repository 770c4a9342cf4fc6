"""Node boxes never overlap: the tidy tree, and a node added between layouts."""

import random
from types import SimpleNamespace

from bayes_app.maps.layout import NODE_H, NODE_W, free_spot, overlaps, tree_layout


def _tree(rng: random.Random, n: int) -> list[SimpleNamespace]:
    nodes = [SimpleNamespace(id="n0", parent_id=None, order_index=0, created_at="", collapsed=False)]
    for i in range(1, n):
        parent = rng.choice(nodes[: max(1, i // 2 + 1)])
        nodes.append(SimpleNamespace(id=f"n{i}", parent_id=parent.id, order_index=i, created_at="", collapsed=False))
    return nodes


def test_tidy_tree_boxes_never_overlap() -> None:
    rng = random.Random(7)
    for n in (2, 5, 30, 120, 500):
        pos = tree_layout(_tree(rng, n))
        pts = list(pos.values())
        bad = [(a, b) for i, a in enumerate(pts) for b in pts[i + 1 :] if overlaps(a, b)]
        assert not bad, (n, bad[:3])


def test_free_spot_moves_down_past_every_box_in_the_column() -> None:
    taken = [(300.0, 0.0), (300.0, 110.0), (600.0, 220.0), (300.0 + NODE_W, 220.0)]
    x, y = free_spot(taken, 300.0, 0.0)
    assert (x, y) == (300.0, 220.0)
    assert not any(overlaps((x, y), p) for p in taken)
    assert free_spot([], 10.0, 20.0) == (10.0, 20.0)
    assert overlaps((0, 0), (NODE_W - 1, NODE_H - 1))
    assert not overlaps((0, 0), (0, NODE_H))
