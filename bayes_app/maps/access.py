"""Who may do what on a map (`role_of`, `authorize`: the ONE access policy of maps), loading a
map's rows for their owner (404 otherwise), the node tree, and the revision counter.

A front door never calls an edit with the caller's id directly on a map it may not own: the use
case `usecases.maps.call_as` authorizes the caller (`authorize`), then calls the domain function
with the map's owner id while `acting_as(caller)` records who made each edit and node."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from sqlalchemy import update
from sqlmodel import Session, col, select

from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.models import (
    Citation,
    MapMember,
    MapNode,
    Mindmap,
    Role,
    utcnow,
)

_ACTOR: ContextVar[str | None] = ContextVar("map_actor", default=None)


# ---- the access policy ------------------------------------------------------------------------
def role_of(db: Session, user_id: str, map_id: str) -> str:
    """The user's role on the map: `owner`, `editor` or `viewer`; MapNotFound for anyone else."""
    m = db.get(Mindmap, map_id, populate_existing=True)
    if m is None:
        raise MapNotFound("mindmap")
    if m.owner_id == user_id:
        return Role.OWNER
    member = db.get(MapMember, (map_id, user_id), populate_existing=True)
    if member is None:
        raise MapNotFound("mindmap")
    return member.role


def authorize(db: Session, user_id: str, map_id: str, need: str = Role.VIEWER) -> Mindmap:
    """The map when the user's role allows `need` (viewer < editor < owner); MapNotFound for a
    non-member, MapError 403 `forbidden_role` for a member whose role is too low."""
    role = role_of(db, user_id, map_id)
    if Role.RANK[role] < Role.RANK[need]:
        raise MapError("forbidden_role", f"Your role on this map ({role}) does not allow this.", 403)
    m = db.get(Mindmap, map_id)
    assert m is not None
    return m


@contextmanager
def acting_as(user_id: str | None) -> Iterator[None]:
    """Edits made inside are recorded as this user's (authorship, per-user undo)."""
    token = _ACTOR.set(user_id)
    try:
        yield
    finally:
        _ACTOR.reset(token)


def actor(default: str | None = None) -> str | None:
    """The user the current edit is made for (set by `acting_as`), else `default`."""
    return _ACTOR.get() or default


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
        update(Mindmap).where(col(Mindmap.id) == map_id).values(revision=col(Mindmap.revision) + 1, updated_at=utcnow())
    )


def revision(db: Session, owner_id: str, map_id: str) -> int:
    """The map's edit counter: poll it to learn that another tab or a run changed the map."""
    rev = db.exec(select(Mindmap.revision).where(Mindmap.id == map_id, Mindmap.owner_id == owner_id)).first()
    if rev is None:
        raise MapNotFound("mindmap")
    return rev


def _node_citations(db: Session, node_id: str) -> list[Citation]:
    return list(db.exec(select(Citation).where(Citation.node_id == node_id)))
