"""Auto-layout: a tidy left-to-right tree (depth → x, leaves stacked → y, parents centred),
and a free spot for a node added between layouts.

The canvas draws a node at most NODE_W × NODE_H (CSS in components/mindmap_canvas.py: at
most 260 px wide, the title clamped to four lines), so a column per depth X_STEP apart and
rows Y_STEP apart can never overlap: within a depth, tidy-tree nodes are at least one row
apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from bayes_app.maps.tree import bottom_up, walk

NODE_W, NODE_H = 262.0, 100.0  # the largest box a node draws (borders included)
X_STEP = 300.0
Y_STEP = 110.0


class LayoutNode(Protocol):
    """What the layout reads of a node: a `MapNode`, or a live map's node dict as an object."""

    @property
    def id(self) -> str: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def order_index(self) -> int: ...
    @property
    def created_at(self) -> Any: ...  # a datetime, or its ISO text (ordered alike)
    @property
    def collapsed(self) -> bool: ...


def tree_layout(nodes: Sequence[LayoutNode]) -> dict[str, tuple[float, float]]:
    """Positions for every visible node; children of collapsed nodes keep their parent's spot."""
    kids: dict[str | None, list[LayoutNode]] = {}
    for n in nodes:
        kids.setdefault(n.parent_id, []).append(n)
    for lst in kids.values():
        lst.sort(key=lambda n: (n.order_index, n.created_at))
    out: dict[str, tuple[float, float]] = {}
    next_leaf = 0.0

    def shown(n: LayoutNode) -> list[LayoutNode]:
        return [] if n.collapsed else kids.get(n.id, [])

    for root in kids.get(None, []):
        depth = {root.id: 0}
        for n, d in walk([root], shown):
            depth[n.id] = d
        for n in bottom_up([root], shown):  # leaves stacked in order, then parents centred
            children = shown(n)
            if not children:
                y = next_leaf * Y_STEP
                next_leaf += 1
            else:
                y = (out[children[0].id][1] + out[children[-1].id][1]) / 2
            out[n.id] = (depth[n.id] * X_STEP, y)
            if n.collapsed:
                _hide(n, out, kids, depth[n.id] * X_STEP, y)
        next_leaf += 1  # a gap between trees (a map has one root)
    return out


def _hide(n: LayoutNode, out: dict, kids: dict, x: float, y: float) -> None:
    stack = list(kids.get(n.id, []))
    while stack:
        c = stack.pop()
        out[c.id] = (x, y)
        stack.extend(kids.get(c.id, []))


def overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two nodes' largest boxes at these top-left positions intersect."""
    return abs(a[0] - b[0]) < NODE_W and abs(a[1] - b[1]) < NODE_H


def free_spot(taken: Iterable[tuple[float, float]], x: float, y: float) -> tuple[float, float]:
    """The first position at (x, y) or below it, a row at a time, whose box meets none of
    the boxes at `taken` (a new node never lands on another branch)."""
    column = [p for p in taken if abs(p[0] - x) < NODE_W]
    while any(overlaps((x, y), p) for p in column):
        y += Y_STEP
    return x, y
