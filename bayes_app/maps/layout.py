"""Auto-layout: a tidy left-to-right tree (depth → x, leaves stacked → y, parents centred)."""

from __future__ import annotations

from bayes_app.models import MapNode

X_STEP = 300.0
Y_STEP = 80.0


def tree_layout(nodes: list[MapNode]) -> dict[str, tuple[float, float]]:
    """Positions for every visible node; children of collapsed nodes keep their parent's spot."""
    kids: dict[str | None, list[MapNode]] = {}
    for n in nodes:
        kids.setdefault(n.parent_id, []).append(n)
    for lst in kids.values():
        lst.sort(key=lambda n: (n.order_index, n.created_at))
    out: dict[str, tuple[float, float]] = {}
    next_leaf = [0.0]

    def place(n: MapNode, depth: int) -> float:
        children = [] if n.collapsed else kids.get(n.id, [])
        if not children:
            y = next_leaf[0] * Y_STEP
            next_leaf[0] += 1
        else:
            ys = [place(c, depth + 1) for c in children]
            y = (ys[0] + ys[-1]) / 2
        out[n.id] = (depth * X_STEP, y)
        if n.collapsed:
            _hide(n, out, kids, depth * X_STEP, y)
        return y

    for root in kids.get(None, []):
        place(root, 0)
        next_leaf[0] += 1  # a gap between trees (a map has one root)
    return out


def _hide(n: MapNode, out: dict, kids: dict, x: float, y: float) -> None:
    stack = list(kids.get(n.id, []))
    while stack:
        c = stack.pop()
        out[c.id] = (x, y)
        stack.extend(kids.get(c.id, []))
