"""The user's edits: maps (create, rename, delete) and nodes (add, update, move, delete,
positions, auto-layout), each one undoable transaction that bumps the map's revision."""

from __future__ import annotations

import math
from typing import Any, cast

from sqlalchemy import delete
from sqlmodel import Session, col, func, select

from bayes_app.db import atomic
from bayes_app.maps.access import _node_citations, _nodes, _touch, actor, get_map, get_node, subtree
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.maps.tree import check_shape
from bayes_app.maps.undo import _amend_edit, _commit_edit, _Undo
from bayes_app.maps.views import map_summary, node_view
from bayes_app.models import (
    Citation,
    MapNode,
    Mindmap,
    NodeKind,
    NodeRelation,
    Origin,
    utcnow,
)

MAX_TITLE = 300
MAX_NODE_TITLE = 2_000
MAX_BODY = 100_000


# ---- maps ------------------------------------------------------------------------------------
def _clean_title(title: Any, what: str = "title", limit: int = MAX_TITLE) -> str:
    if not isinstance(title, str):
        raise MapError("bad_title", f"The {what} must be text.")
    title = " ".join(title.split())
    if not title:
        raise MapError("bad_title", f"The {what} is empty.")
    if len(title) > limit:
        raise MapError("bad_title", f"The {what} is longer than {limit} characters.")
    return title


def list_maps(db: Session, owner_id: str) -> list[dict[str, Any]]:
    """The owner's maps, last edited first, with their node counts and how many new papers
    their pending update proposals bring."""
    maps = list(db.exec(select(Mindmap).where(Mindmap.owner_id == owner_id).order_by(col(Mindmap.updated_at).desc())))
    counts = (
        dict(
            db.exec(
                select(MapNode.map_id, func.count())
                .where(col(MapNode.map_id).in_([m.id for m in maps]))
                .group_by(MapNode.map_id)
            ).all()
        )
        if maps
        else {}
    )
    from bayes_app.maps.updates import pending_paper_counts

    new = pending_paper_counts(db, owner_id) if maps else {}
    return [{**map_summary(m), "node_count": counts.get(m.id, 0), "new_papers": new.get(m.id, 0)} for m in maps]


def create_map(
    db: Session, owner_id: str, title: str, question: str = "", collection_id: str | None = None
) -> dict[str, Any]:
    """A new map with its root `question` node (titled `question`, or the map's title), scoped to
    `collection_id` when given (the caller checked the owner may read it)."""
    title = _clean_title(title)
    question = " ".join((question or "").split())[:MAX_NODE_TITLE]
    with atomic(db):
        m = Mindmap(owner_id=owner_id, title=title, collection_id=collection_id or None)
        db.add(m)
        db.flush()
        db.add(MapNode(map_id=m.id, kind=NodeKind.QUESTION, title=question or title, pos_x=0, pos_y=0))
    return map_summary(m)


def rename_map(db: Session, owner_id: str, map_id: str, title: str) -> dict[str, Any]:
    title = _clean_title(title)
    m = get_map(db, owner_id, map_id)
    m.title = title
    db.add(m)
    _touch(db, map_id)
    db.commit()
    return map_summary(get_map(db, owner_id, map_id))


def delete_map(db: Session, owner_id: str, map_id: str) -> None:
    """Delete the map with everything on it. Cancel its runs FIRST (see maps.runs.delete_map)."""
    get_map(db, owner_id, map_id)
    with atomic(db):
        db.exec(delete(Mindmap).where(col(Mindmap.id) == map_id))


# ---- node edits -----------------------------------------------------------------------------
def _check_kind(kind: Any) -> str:
    if kind not in NodeKind.ALL or kind == NodeKind.QUESTION:
        allowed = ", ".join(k for k in NodeKind.ALL if k != NodeKind.QUESTION)
        raise MapError("bad_kind", f"Unknown node kind {kind!r}; use one of {allowed}.")
    return kind


def _clean_text(value: Any, what: str, limit: int, multiline: bool = False) -> str:
    if not isinstance(value, str):
        raise MapError("bad_field", f"The {what} must be text.")
    value = value.strip() if multiline else " ".join(value.split())
    if len(value) > limit:
        raise MapError("too_long", f"The {what} is longer than {limit} characters.")
    return value


def _next_order(db: Session, parent_id: str) -> int:
    top = db.exec(select(func.max(MapNode.order_index)).where(MapNode.parent_id == parent_id)).first()
    return 0 if top is None else top + 1


def _make_room(db: Session, parent_id: str, index: int, u: _Undo | None) -> None:
    """Shift siblings at `index` and after one place down."""
    later = list(db.exec(select(MapNode).where(MapNode.parent_id == parent_id, MapNode.order_index >= index)))
    for s in later:
        if u:
            u.before("nodes", s)
        s.order_index += 1
        db.add(s)


def _spot_beside(db: Session, map_id: str, parent: MapNode) -> tuple[float, float]:
    """A free spot right of `parent`, below its children: clear of every node's box."""
    from bayes_app.maps.layout import X_STEP, Y_STEP, free_spot

    px, py = parent.pos_x, parent.pos_y
    # called for a placed parent only
    assert px is not None
    assert py is not None
    placed = cast(
        list[tuple[float, float, str | None]],  # positions are not null: selected so
        list(
            db.exec(
                select(MapNode.pos_x, MapNode.pos_y, MapNode.parent_id).where(
                    MapNode.map_id == map_id, col(MapNode.pos_x).is_not(None), col(MapNode.pos_y).is_not(None)
                )
            )
        ),
    )
    below = [y for _x, y, pid in placed if pid == parent.id]
    y0 = max(below) + Y_STEP if below else py
    return free_spot([(x, y) for x, y, _pid in placed], px + X_STEP, y0)


def _insert(
    db: Session,
    map_id: str,
    parent: MapNode,
    kind: str,
    title: str,
    body: str,
    index: int | None,
    u: _Undo | None,
    **extra: Any,
) -> MapNode:
    if index is None:
        index = _next_order(db, parent.id)
    else:
        _make_room(db, parent.id, index, u)
    pos = None
    if parent.pos_x is not None and parent.pos_y is not None:  # beside its parent until laid out
        pos = _spot_beside(db, map_id, parent)
    extra.setdefault("author_id", actor())
    node = MapNode(
        map_id=map_id,
        parent_id=parent.id,
        kind=kind,
        title=title,
        body=body,
        order_index=index,
        pos_x=pos[0] if pos else None,
        pos_y=pos[1] if pos else None,
        **extra,
    )
    db.add(node)
    db.flush()
    check_shape(db, map_id)
    if u:
        u.created("nodes", node.id)
    return node


def add_child(
    db: Session, owner_id: str, map_id: str, parent_id: str, title: str = "", kind: str | None = None, body: str = ""
) -> dict[str, Any]:
    """A user node as the last child of `parent_id` (Tab in the editor). Without a kind: a
    theme under the root question, a note anywhere else."""
    parent = get_node(db, owner_id, map_id, parent_id)
    kind = _check_kind(kind or (NodeKind.THEME if parent.parent_id is None else NodeKind.NOTE))
    title = _clean_text(title, "title", MAX_NODE_TITLE)
    body = _clean_text(body, "body", MAX_BODY, multiline=True)
    u = _Undo()
    if parent.collapsed:
        u.before("nodes", parent)
        parent.collapsed = False
        db.add(parent)
    node = _insert(db, map_id, parent, kind, title, body, None, u, created_by=Origin.USER)
    _commit_edit(db, map_id, "add_child", u)
    return node_view(node)


def add_sibling(
    db: Session, owner_id: str, map_id: str, node_id: str, title: str = "", kind: str | None = None, body: str = ""
) -> dict[str, Any]:
    """A user node right after `node_id` under the same parent (Enter in the editor);
    same kind as `node_id` unless given."""
    ref = get_node(db, owner_id, map_id, node_id)
    if ref.parent_id is None:
        raise MapError("root_sibling", "The question at the root cannot have siblings; add a child instead.")
    parent = get_node(db, owner_id, map_id, ref.parent_id)
    kind = _check_kind(kind or ref.kind)
    title = _clean_text(title, "title", MAX_NODE_TITLE)
    body = _clean_text(body, "body", MAX_BODY, multiline=True)
    u = _Undo()
    node = _insert(db, map_id, parent, kind, title, body, ref.order_index + 1, u, created_by=Origin.USER)
    _commit_edit(db, map_id, "add_sibling", u)
    return node_view(node)


def update_node(db: Session, owner_id: str, map_id: str, /, node_id: str, **changes: Any) -> dict[str, Any]:
    """Edit fields: title, body, kind, collapsed, position=(x, y) or {"x","y"}, confidence."""
    node = get_node(db, owner_id, map_id, node_id)
    allowed = {"title", "body", "kind", "collapsed", "position", "confidence"}
    unknown = set(changes) - allowed
    if unknown:
        raise MapError(
            "bad_field", f"Cannot change {', '.join(sorted(unknown))}; editable: {', '.join(sorted(allowed))}."
        )
    u = _Undo()
    u.before("nodes", node)
    if "title" in changes:
        node.title = _clean_text(changes["title"], "title", MAX_NODE_TITLE)
    if "body" in changes:
        node.body = _clean_text(changes["body"], "body", MAX_BODY, multiline=True)
    if "kind" in changes:
        if node.parent_id is None:
            raise MapError("root_kind", "The root stays a question.")
        node.kind = _check_kind(changes["kind"])
    if "collapsed" in changes:
        if not isinstance(changes["collapsed"], bool):
            raise MapError("bad_field", "collapsed must be true or false.")
        node.collapsed = changes["collapsed"]
    if "position" in changes:
        node.pos_x, node.pos_y = _position(changes["position"])
    if "confidence" in changes:
        node.confidence = _confidence(changes["confidence"])
    node.updated_at = utcnow()
    node.edited_by = actor()
    db.add(node)
    _commit_edit(db, map_id, "update_node", u)
    return node_view(node, _node_citations(db, node.id))


def _confidence(c: Any) -> float | None:
    if c is not None and (not isinstance(c, (int, float)) or isinstance(c, bool) or not 0 <= c <= 1):
        raise MapError("bad_field", "confidence must be a number from 0 to 1, or null.")
    return c


MAX_COORDINATE = 1e7  # far beyond any canvas; keeps positions finite and JSON-safe


def _position(value: Any) -> tuple[float, float]:
    if isinstance(value, dict):
        value = (value.get("x"), value.get("y"))
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        or not all(math.isfinite(v) and abs(v) <= MAX_COORDINATE for v in value)
    ):
        raise MapError(
            "bad_field",
            f'position must be {{"x": number, "y": number}} with finite coordinates within ±{MAX_COORDINATE:.0e}.',
        )
    return float(value[0]), float(value[1])


LAYOUT_ACTIONS = ("move_nodes", "auto_layout")


def set_positions(
    db: Session,
    owner_id: str,
    map_id: str,
    positions: dict[str, Any],
    action: str = "move_nodes",
    completes: str | None = None,
) -> int:
    """Save canvas positions of several nodes at once (one undoable edit, recorded as `action`:
    a drag of several nodes, or an auto-layout the canvas computed with measured sizes).
    `completes`: the edit this layout finishes (e.g. "accept_proposal"); while that edit is
    the latest, the positions join its undo step instead of making a second one."""
    if action not in LAYOUT_ACTIONS:
        raise MapError("bad_field", f"action must be one of {', '.join(LAYOUT_ACTIONS)}.")
    get_map(db, owner_id, map_id)
    nodes = {
        n.id: n for n in db.exec(select(MapNode).where(MapNode.map_id == map_id, col(MapNode.id).in_(list(positions))))
    }
    missing = set(positions) - set(nodes)
    if missing:
        raise MapNotFound("node")
    u = _Undo()
    for nid, pos in positions.items():
        n = nodes[nid]
        u.before("nodes", n)
        n.pos_x, n.pos_y = _position(pos)
        db.add(n)
    if not (completes and _amend_edit(db, map_id, completes, u)):
        _commit_edit(db, map_id, action, u)
    return len(nodes)


def move_node(
    db: Session, owner_id: str, map_id: str, node_id: str, new_parent_id: str, index: int | None = None
) -> dict[str, Any]:
    """Re-parent `node_id` under `new_parent_id` at `index` among its children (end: None)."""
    node = get_node(db, owner_id, map_id, node_id)
    parent = get_node(db, owner_id, map_id, new_parent_id)
    if node.parent_id is None:
        raise MapError("move_root", "The root question cannot be moved.")
    if any(n.id == parent.id for n in subtree(_nodes(db, map_id), node.id)):
        raise MapError("move_cycle", "A node cannot move under itself or one of its descendants.")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool) or not 0 <= index <= 100_000):
        raise MapError("bad_field", "index must be a whole number from 0 to 100000.")
    u = _Undo()
    u.before("nodes", node)
    node.parent_id = None  # out of the sibling list while we make room
    db.add(node)
    db.flush()
    if index is None:
        node.order_index = _next_order(db, parent.id)
    else:
        _make_room(db, parent.id, index, u)
        node.order_index = index
    node.parent_id = parent.id
    node.updated_at = utcnow()
    db.add(node)
    db.flush()
    check_shape(db, map_id)
    _commit_edit(db, map_id, "move_node", u)
    return node_view(node, _node_citations(db, node.id))


def delete_subtree(db: Session, owner_id: str, map_id: str, node_id: str) -> list[str]:
    """Delete a node with all its descendants, their citations and relations (undoable)."""
    node = get_node(db, owner_id, map_id, node_id)
    if node.parent_id is None:
        raise MapError("delete_root", "The root question cannot be deleted; delete the map instead.")
    doomed = subtree(_nodes(db, map_id), node.id)
    ids = [n.id for n in doomed]
    u = _Undo()
    for n in doomed:
        u.before("nodes", n)
    for c in db.exec(select(Citation).where(col(Citation.node_id).in_(ids))):
        u.before("citations", c)
    for r in db.exec(
        select(NodeRelation).where(col(NodeRelation.source_id).in_(ids) | col(NodeRelation.target_id).in_(ids))
    ):
        u.before("relations", r)
    with atomic(db):
        db.exec(delete(MapNode).where(col(MapNode.id) == node.id))
        _commit_edit(db, map_id, "delete_subtree", u)
    return ids


def auto_layout(db: Session, owner_id: str, map_id: str) -> dict[str, tuple[float, float]]:
    """Lay the tree out left to right and save the positions (one undoable edit)."""
    from bayes_app.maps.layout import tree_layout

    get_map(db, owner_id, map_id)
    nodes = _nodes(db, map_id)
    positions = tree_layout(nodes)
    u = _Undo()
    for n in nodes:
        if n.id in positions:
            u.before("nodes", n)
            n.pos_x, n.pos_y = positions[n.id]
            db.add(n)
    _commit_edit(db, map_id, "auto_layout", u)
    return positions
