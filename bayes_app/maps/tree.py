"""Walking a map's tree without recursion, and the bounds on its shape.

Every walk over nodes goes through `walk` (parents first) or `bottom_up` (children first), so a
deep map never meets Python's recursion limit; `check_shape` refuses an edit that would make a
map deeper than `BAYES_MAP_MAX_DEPTH` levels or larger than `BAYES_MAP_MAX_NODES` nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from sqlmodel import Session, select

from bayes_app.maps.errors import MapError
from bayes_app.models import MapNode
from bayes_app.settings import get_settings

T = TypeVar("T")


def walk(roots: Iterable[T], children: Callable[[T], Iterable[T]]) -> Iterator[tuple[T, int]]:
    """Depth first, parents before children, in order: (item, depth) with depth 0 for a root.
    `children(item)` is called only once the caller is done with `item`, so it may expand the
    tree lazily (and anything the caller does for `item` happens before its children)."""
    stack = [(r, 0) for r in reversed(list(roots))]
    while stack:
        item, depth = stack.pop()
        yield item, depth
        stack.extend((c, depth + 1) for c in reversed(list(children(item))))


def bottom_up(roots: Iterable[T], children: Callable[[T], Iterable[T]]) -> Iterator[T]:
    """Depth first, each item after all its children (post-order), children in order."""
    stack: list[tuple[T, bool]] = [(r, False) for r in reversed(list(roots))]
    while stack:
        item, expanded = stack.pop()
        if expanded:
            yield item
            continue
        stack.append((item, True))
        stack.extend((c, False) for c in reversed(list(children(item))))


def shape(parent_of: dict[str, str | None]) -> tuple[int, int]:
    """(node count, depth in levels: a lone root is 1) of the tree given as id → parent id."""
    kids: dict[str | None, list[str]] = {}
    for nid, pid in parent_of.items():
        kids.setdefault(pid, []).append(nid)
    deepest = max((d for _n, d in walk(kids.get(None, []), lambda n: kids.get(n, []))), default=-1)
    return len(parent_of), deepest + 1


def check_shape(db: Session, map_id: str) -> None:
    """Refuse (MapError 409, nothing kept) an edit that left the map, as flushed in `db`, deeper
    or larger than the limits. Call it after adding or moving nodes, before committing."""
    s = get_settings()
    rows = db.exec(select(MapNode.id, MapNode.parent_id).where(MapNode.map_id == map_id)).all()
    count, depth = shape(dict(rows))
    if count > s.map_max_nodes:
        raise MapError(
            "map_too_large",
            f"A map can hold at most {s.map_max_nodes} nodes; delete or merge some before adding more.",
            409,
        )
    if depth > s.map_max_depth:
        raise MapError(
            "map_too_deep",
            f"A map can be at most {s.map_max_depth} levels deep; put this under a node nearer the top.",
            409,
        )
