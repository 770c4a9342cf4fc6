"""Loading a map's rows for their owner (404 otherwise), the node tree, and the revision counter."""

from __future__ import annotations

from sqlalchemy import update
from sqlmodel import Session, col, select

from bayes_app.maps.errors import MapNotFound
from bayes_app.models import (
    Citation,
    MapNode,
    Mindmap,
    utcnow,
)


# ---- loading / ownership ----------------------------------------------------------------------
def get_map(db: Session, owner_id: str, map_id: str) -> Mindmap:
    m = db.get(Mindmap, map_id, populate_existing=True)
    if m is None or m.owner_id != owner_id:
        raise MapNotFound("mindmap")
    return m


def get_node(db: Session, owner_id: str, map_id: str, node_id: str) -> MapNode:
    get_map(db, owner_id, map_id)
    n = db.get(MapNode, node_id, populate_existing=True)
    if n is None or n.map_id != map_id:
        raise MapNotFound("node")
    return n


def root_of(db: Session, map_id: str) -> MapNode:
    root = db.exec(
        select(MapNode)
        .where(MapNode.map_id == map_id, col(MapNode.parent_id).is_(None))
        .order_by(col(MapNode.created_at))
    ).first()
    if root is None:
        raise MapNotFound("root node")
    return root


def _nodes(db: Session, map_id: str) -> list[MapNode]:
    return list(
        db.exec(
            select(MapNode).where(MapNode.map_id == map_id).order_by(col(MapNode.order_index), col(MapNode.created_at))
        )
    )


def children_index(nodes: list[MapNode]) -> dict[str | None, list[MapNode]]:
    """parent id → children in display order."""
    out: dict[str | None, list[MapNode]] = {}
    for n in nodes:
        out.setdefault(n.parent_id, []).append(n)
    for kids in out.values():
        kids.sort(key=lambda n: (n.order_index, n.created_at))
    return out


def subtree(nodes: list[MapNode], node_id: str) -> list[MapNode]:
    """`node_id` and its descendants, parents before children (breadth first)."""
    kids = children_index(nodes)
    by_id = {n.id: n for n in nodes}
    out, queue = [], [by_id[node_id]] if node_id in by_id else []
    while queue:
        n = queue.pop(0)
        out.append(n)
        queue.extend(kids.get(n.id, []))
    return out


def _touch(db: Session, map_id: str) -> None:
    """Bump the map's revision and edit time (in the caller's transaction)."""
    db.exec(
        update(Mindmap)
        .where(col(Mindmap.id) == map_id)  # type: ignore[call-overload]
        .values(revision=col(Mindmap.revision) + 1, updated_at=utcnow())
    )


def revision(db: Session, owner_id: str, map_id: str) -> int:
    """The map's edit counter: poll it to learn that another tab or a run changed the map."""
    rev = db.exec(select(Mindmap.revision).where(Mindmap.id == map_id, Mindmap.owner_id == owner_id)).first()
    if rev is None:
        raise MapNotFound("mindmap")
    return rev


def _node_citations(db: Session, node_id: str) -> list[Citation]:
    return list(db.exec(select(Citation).where(Citation.node_id == node_id)))
