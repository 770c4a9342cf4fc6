"""Maps and their nodes: create / list / rename / delete maps, node edits, undo, views.

Every function takes the caller's `owner_id` and raises `MapNotFound` for a map, node,
citation or proposal that does not exist or is someone else's (answer 404), `MapError`
for an edit that cannot apply (answer `err.status`). Each edit is ONE transaction that
also bumps `Mindmap.revision` and commits, so pass a session without pending changes.

User edits are recorded in `map_edits` with what is needed to reverse them; `undo`
reverses the most recent one not yet undone. Agent writes (`write_agent_node`,
`add_relation`) are not undoable by the user's Ctrl-Z.

The UI calls (all return plain dicts / lists, JSON-ready):
    list_maps(db, owner_id)                       -> [map_summary], last edited first
    create_map(db, owner_id, title, question="")  -> map_summary (with a root question node)
    rename_map / delete_map / map_view / revision
    add_child(db, owner_id, map_id, parent_id, title="", kind="note", body="")  -> node
    add_sibling(db, owner_id, map_id, node_id, title="", kind=None, body="")   -> node
    update_node(db, owner_id, map_id, node_id, title=?, body=?, kind=?, collapsed=?,
                position=(x, y)?, confidence=?)                                 -> node
    move_node(db, owner_id, map_id, node_id, new_parent_id, index=None)         -> node
    delete_subtree(db, owner_id, map_id, node_id)                                -> deleted ids
    set_positions(db, owner_id, map_id, {node_id: (x, y)})  (drag of several nodes)
    auto_layout(db, owner_id, map_id)                        -> {node_id: (x, y)}
    undo(db, owner_id, map_id)                               -> action undone or None
    accept_proposal / reject_proposal
Citations: see `bayes_app.maps.citations`; export: `bayes_app.maps.export`.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from sqlalchemy import delete, update
from sqlmodel import Session, col, func, select

from bayes_app.db import atomic
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.models import (
    Citation, Document, MapEdit, MapNode, MapProposal, Mindmap, NodeKind, NodeRelation, Origin,
    RelationKind, utcnow,
)

MAX_TITLE = 300
MAX_NODE_TITLE = 2_000
MAX_BODY = 100_000
UNDO_KEEP = 200  # undo entries kept per map


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
    root = db.exec(select(MapNode).where(MapNode.map_id == map_id, col(MapNode.parent_id).is_(None))
                   .order_by(col(MapNode.created_at))).first()
    if root is None:
        raise MapNotFound("root node")
    return root


def _nodes(db: Session, map_id: str) -> list[MapNode]:
    return list(db.exec(select(MapNode).where(MapNode.map_id == map_id)
                        .order_by(col(MapNode.order_index), col(MapNode.created_at))))


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
    db.exec(update(Mindmap).where(col(Mindmap.id) == map_id)  # type: ignore[call-overload]
            .values(revision=col(Mindmap.revision) + 1, updated_at=utcnow()))


def revision(db: Session, owner_id: str, map_id: str) -> int:
    """The map's edit counter: poll it to learn that another tab or a run changed the map."""
    rev = db.exec(select(Mindmap.revision).where(Mindmap.id == map_id, Mindmap.owner_id == owner_id)).first()
    if rev is None:
        raise MapNotFound("mindmap")
    return rev


# ---- serialisation ---------------------------------------------------------------------------
def _iso(d: datetime | None) -> str | None:
    return d.isoformat() if d else None


def map_summary(m: Mindmap) -> dict[str, Any]:
    return {"id": m.id, "title": m.title, "offline": m.offline, "revision": m.revision,
            "created_at": _iso(m.created_at), "updated_at": _iso(m.updated_at)}


def node_view(n: MapNode, citations: list[Citation] | None = None) -> dict[str, Any]:
    cits = citations or []
    scores = [c.support_score for c in cits if c.support_score is not None]
    return {"id": n.id, "map_id": n.map_id, "parent_id": n.parent_id, "kind": n.kind, "title": n.title,
            "body": n.body, "order": n.order_index,
            "position": _stored_position(n),
            "collapsed": n.collapsed, "created_by": n.created_by, "run_id": n.run_id,
            "confidence": n.confidence, "citation_count": len(cits),
            "support": round(min(scores), 3) if scores else None,
            "created_at": _iso(n.created_at), "updated_at": _iso(n.updated_at)}


def citation_view(c: Citation, doc: Document | None = None) -> dict[str, Any]:
    return {"id": c.id, "node_id": c.node_id, "document_id": c.document_id, "chunk_id": c.chunk_id,
            "page": c.page, "quote": c.quote, "char_start": c.char_start, "char_end": c.char_end,
            "origin": c.origin, "agent": c.agent, "support_score": c.support_score,
            "support_label": c.support_label, "suggested_rewrite": c.suggested_rewrite,
            "title": (doc.title or doc.filename) if doc else c.source_title,
            "source_removed": c.source_removed_at is not None,
            "source_removed_reason": c.source_removed_reason,
            "authors": list(doc.authors or []) if doc else [], "year": doc.year if doc else None,
            "language": doc.language if doc else "", "created_at": _iso(c.created_at)}


def relation_view(r: NodeRelation) -> dict[str, Any]:
    return {"id": r.id, "source_id": r.source_id, "target_id": r.target_id, "kind": r.kind,
            "created_by": r.created_by, "run_id": r.run_id}


def proposal_view(p: MapProposal) -> dict[str, Any]:
    return {"id": p.id, "kind": p.kind, "status": p.status, "run_id": p.run_id, "payload": p.payload,
            "created_at": _iso(p.created_at)}


def map_citations(db: Session, map_id: str) -> list[tuple[Citation, Document | None]]:
    cits = list(db.exec(select(Citation).where(Citation.map_id == map_id).order_by(col(Citation.created_at))))
    docs = {d.id: d for d in db.exec(select(Document).where(
        col(Document.id).in_({c.document_id for c in cits})))} if cits else {}
    return [(c, docs.get(c.document_id)) for c in cits]


def map_view(db: Session, owner_id: str, map_id: str) -> dict[str, Any]:
    """The whole map: summary, nodes (display order), citations, relations, pending proposals."""
    m = get_map(db, owner_id, map_id)
    nodes = _nodes(db, map_id)
    cits = map_citations(db, map_id)
    by_node: dict[str, list[Citation]] = {}
    for c, _ in cits:
        by_node.setdefault(c.node_id, []).append(c)
    rels = db.exec(select(NodeRelation).where(NodeRelation.map_id == map_id))
    props = db.exec(select(MapProposal).where(MapProposal.map_id == map_id, MapProposal.status == "pending")
                    .order_by(col(MapProposal.created_at)))
    root = next((n.id for n in nodes if n.parent_id is None), None)
    return {**map_summary(m), "root_id": root,
            "nodes": [node_view(n, by_node.get(n.id)) for n in nodes],
            "citations": [citation_view(c, d) for c, d in cits],
            "relations": [relation_view(r) for r in rels],
            "proposals": [proposal_view(p) for p in props]}


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
    """The owner's maps, last edited first, with their node counts."""
    maps = list(db.exec(select(Mindmap).where(Mindmap.owner_id == owner_id)
                        .order_by(col(Mindmap.updated_at).desc())))
    counts = dict(db.exec(select(MapNode.map_id, func.count()).where(
        col(MapNode.map_id).in_([m.id for m in maps])).group_by(MapNode.map_id)).all()) if maps else {}
    return [{**map_summary(m), "node_count": counts.get(m.id, 0)} for m in maps]


def create_map(db: Session, owner_id: str, title: str, question: str = "") -> dict[str, Any]:
    """A new map with its root `question` node (titled `question`, or the map's title)."""
    title = _clean_title(title)
    question = " ".join((question or "").split())[:MAX_NODE_TITLE]
    with atomic(db):
        m = Mindmap(owner_id=owner_id, title=title)
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
        db.exec(delete(Mindmap).where(col(Mindmap.id) == map_id))  # type: ignore[call-overload]


# ---- undo log --------------------------------------------------------------------------------
_NODE_FIELDS = ("id", "map_id", "parent_id", "kind", "title", "body", "order_index", "pos_x", "pos_y",
                "collapsed", "created_by", "run_id", "confidence")
_CIT_FIELDS = ("id", "map_id", "node_id", "document_id", "chunk_id", "page", "quote", "char_start",
               "char_end", "origin", "agent", "support_score", "support_label", "suggested_rewrite",
               "source_title", "source_removed_at", "source_removed_reason")
_REL_FIELDS = ("id", "map_id", "source_id", "target_id", "kind", "created_by", "run_id")


def _snap(row: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    return {f: getattr(row, f) for f in fields}


class _Undo:
    """Collects, for one edit, the rows to delete and the rows to restore on undo."""

    def __init__(self) -> None:
        self.delete: dict[str, list[str]] = {"nodes": [], "citations": [], "relations": []}
        self.restore: dict[str, list[dict]] = {"nodes": [], "citations": [], "relations": []}
        self._seen: set[str] = set()

    def created(self, table: str, row_id: str) -> None:
        self.delete[table].append(row_id)

    def before(self, table: str, row: Any) -> None:
        if row.id in self._seen:
            return
        self._seen.add(row.id)
        fields = {"nodes": _NODE_FIELDS, "citations": _CIT_FIELDS, "relations": _REL_FIELDS}[table]
        self.restore[table].append(_snap(row, fields))

    def save(self, db: Session, map_id: str, action: str) -> None:
        db.add(MapEdit(map_id=map_id, action=action,
                       undo={"delete": self.delete, "restore": self.restore}))
        _touch(db, map_id)


def _prune_undo(db: Session, map_id: str) -> None:
    """Keep the newest UNDO_KEEP undo entries of a map."""
    old = list(db.exec(select(MapEdit.id).where(MapEdit.map_id == map_id)
                       .order_by(col(MapEdit.created_at).desc()).offset(UNDO_KEEP)))
    if old:
        db.exec(delete(MapEdit).where(col(MapEdit.id).in_(old)))  # type: ignore[call-overload]


def _commit_edit(db: Session, map_id: str, action: str, u: _Undo) -> None:
    with atomic(db):
        u.save(db, map_id, action)
        db.flush()
        _prune_undo(db, map_id)


def undo(db: Session, owner_id: str, map_id: str) -> str | None:
    """Reverse the latest user edit not yet undone; returns its action name (None: nothing)."""
    get_map(db, owner_id, map_id)
    edit = db.exec(select(MapEdit).where(MapEdit.map_id == map_id, col(MapEdit.undone).is_(False))
                   .order_by(col(MapEdit.created_at).desc())).first()
    if edit is None:
        return None
    with atomic(db):
        dele, rest = edit.undo.get("delete", {}), edit.undo.get("restore", {})
        if dele.get("relations"):
            db.exec(delete(NodeRelation).where(col(NodeRelation.id).in_(dele["relations"])))  # type: ignore[call-overload]
        if dele.get("citations"):
            db.exec(delete(Citation).where(col(Citation.id).in_(dele["citations"])))  # type: ignore[call-overload]
        if dele.get("nodes"):
            db.exec(delete(MapNode).where(col(MapNode.id).in_(dele["nodes"])))  # type: ignore[call-overload]
        edit_id = edit.id
        db.expunge_all()  # rows deleted in bulk (here or by an earlier delete) must not linger
        edit = db.get(MapEdit, edit_id)
        for table, model in (("nodes", MapNode), ("citations", Citation), ("relations", NodeRelation)):
            for data in rest.get(table, []):
                row = db.get(model, data["id"], populate_existing=True)
                if row is None:
                    if table == "nodes" and data.get("parent_id") and db.get(MapNode, data["parent_id"]) is None:
                        continue  # its parent is gone since: nothing to hang it on
                    db.add(model(**data))
                else:
                    for k, v in data.items():
                        setattr(row, k, v)
                    db.add(row)
                db.flush()
        edit.undone = True
        db.add(edit)
        _touch(db, map_id)
    return edit.action


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

    placed = list(db.exec(select(MapNode.pos_x, MapNode.pos_y, MapNode.parent_id).where(
        MapNode.map_id == map_id, col(MapNode.pos_x).is_not(None), col(MapNode.pos_y).is_not(None))))
    below = [y for _x, y, pid in placed if pid == parent.id]
    y0 = max(below) + Y_STEP if below else parent.pos_y
    return free_spot([(x, y) for x, y, _pid in placed], parent.pos_x + X_STEP, y0)


def _insert(db: Session, map_id: str, parent: MapNode, kind: str, title: str, body: str,
            index: int | None, u: _Undo | None, **extra: Any) -> MapNode:
    if index is None:
        index = _next_order(db, parent.id)
    else:
        _make_room(db, parent.id, index, u)
    pos = None
    if parent.pos_x is not None and parent.pos_y is not None:  # beside its parent until laid out
        pos = _spot_beside(db, map_id, parent)
    node = MapNode(map_id=map_id, parent_id=parent.id, kind=kind, title=title, body=body,
                   order_index=index, pos_x=pos[0] if pos else None, pos_y=pos[1] if pos else None,
                   **extra)
    db.add(node)
    db.flush()
    if u:
        u.created("nodes", node.id)
    return node


def add_child(db: Session, owner_id: str, map_id: str, parent_id: str, title: str = "",
              kind: str = NodeKind.NOTE, body: str = "") -> dict[str, Any]:
    """A user node as the last child of `parent_id` (Tab in the editor)."""
    parent = get_node(db, owner_id, map_id, parent_id)
    kind = _check_kind(kind)
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


def add_sibling(db: Session, owner_id: str, map_id: str, node_id: str, title: str = "",
                kind: str | None = None, body: str = "") -> dict[str, Any]:
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


def update_node(db: Session, owner_id: str, map_id: str, node_id: str, **changes: Any) -> dict[str, Any]:
    """Edit fields: title, body, kind, collapsed, position=(x, y) or {"x","y"}, confidence."""
    node = get_node(db, owner_id, map_id, node_id)
    allowed = {"title", "body", "kind", "collapsed", "position", "confidence"}
    unknown = set(changes) - allowed
    if unknown:
        raise MapError("bad_field", f"Cannot change {', '.join(sorted(unknown))}; "
                                    f"editable: {', '.join(sorted(allowed))}.")
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
        c = changes["confidence"]
        if c is not None and (not isinstance(c, (int, float)) or isinstance(c, bool) or not 0 <= c <= 1):
            raise MapError("bad_field", "confidence must be a number from 0 to 1, or null.")
        node.confidence = c
    node.updated_at = utcnow()
    db.add(node)
    _commit_edit(db, map_id, "update_node", u)
    return node_view(node, _node_citations(db, node.id))


MAX_COORDINATE = 1e7  # far beyond any canvas; keeps positions finite and JSON-safe


def _position(value: Any) -> tuple[float, float]:
    if isinstance(value, dict):
        value = (value.get("x"), value.get("y"))
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
            or not all(math.isfinite(v) and abs(v) <= MAX_COORDINATE for v in value)):
        raise MapError("bad_field", "position must be {\"x\": number, \"y\": number} with finite "
                                    f"coordinates within ±{MAX_COORDINATE:.0e}.")
    return float(value[0]), float(value[1])


def _stored_position(n: MapNode) -> dict[str, float] | None:
    """The node's saved position; one saved before positions were checked (Infinity, NaN)
    reads as "not placed yet" so the map stays readable and exportable."""
    if n.pos_x is None or n.pos_y is None or not (math.isfinite(n.pos_x) and math.isfinite(n.pos_y)):
        return None
    return {"x": n.pos_x, "y": n.pos_y}


def _node_citations(db: Session, node_id: str) -> list[Citation]:
    return list(db.exec(select(Citation).where(Citation.node_id == node_id)))


def set_positions(db: Session, owner_id: str, map_id: str, positions: dict[str, Any]) -> int:
    """Save canvas positions of several nodes at once (one undoable edit)."""
    get_map(db, owner_id, map_id)
    nodes = {n.id: n for n in db.exec(select(MapNode).where(
        MapNode.map_id == map_id, col(MapNode.id).in_(list(positions))))}
    missing = set(positions) - set(nodes)
    if missing:
        raise MapNotFound("node")
    u = _Undo()
    for nid, pos in positions.items():
        n = nodes[nid]
        u.before("nodes", n)
        n.pos_x, n.pos_y = _position(pos)
        db.add(n)
    _commit_edit(db, map_id, "move_nodes", u)
    return len(nodes)


def move_node(db: Session, owner_id: str, map_id: str, node_id: str, new_parent_id: str,
              index: int | None = None) -> dict[str, Any]:
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
    for r in db.exec(select(NodeRelation).where(
            col(NodeRelation.source_id).in_(ids) | col(NodeRelation.target_id).in_(ids))):
        u.before("relations", r)
    with atomic(db):
        db.exec(delete(MapNode).where(col(MapNode.id) == node.id))  # type: ignore[call-overload]
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


# ---- agent writes (each its own transaction; not on the user's undo stack) -------------------
def write_agent_node(db: Session, map_id: str, parent_id: str, kind: str, title: str, body: str = "",
                     *, run_id: str | None, confidence: float | None = None,
                     citations: list[dict[str, Any]] | None = None,
                     after_id: str | None = None) -> tuple[MapNode, list[Citation]]:
    """Commit one agent node with its citations. `citations` items: document_id, chunk_id, page,
    quote, char_start, char_end, agent, support_score, support_label, suggested_rewrite.
    Placed right after `after_id` (a sibling) when given, else last. Raises MapNotFound when
    the map or the parent is gone (deleted mid-run)."""
    with atomic(db):
        if db.get(Mindmap, map_id, populate_existing=True) is None:
            raise MapNotFound("mindmap")
        parent = db.get(MapNode, parent_id, populate_existing=True)
        if parent is None or parent.map_id != map_id:
            raise MapNotFound("node")
        index = None
        if after_id:
            ref = db.get(MapNode, after_id)
            if ref is not None and ref.parent_id == parent_id:
                index = ref.order_index + 1
        node = _insert(db, map_id, parent, kind, title[:MAX_NODE_TITLE], body, index, None,
                       created_by=Origin.AGENT, run_id=run_id, confidence=confidence)
        rows = []
        for c in citations or []:
            row = Citation(map_id=map_id, node_id=node.id, origin=Origin.AGENT, **c)
            db.add(row)
            rows.append(row)
        _touch(db, map_id)
    return node, rows


def add_agent_citations(db: Session, map_id: str, node_id: str, citations: list[dict[str, Any]]) -> list[Citation]:
    """More evidence for an existing node (a near-duplicate claim merged into it): its citations
    not already on the node (same passage and quote) are added. MapNotFound when it is gone."""
    with atomic(db):
        node = db.get(MapNode, node_id, populate_existing=True)
        if node is None or node.map_id != map_id:
            raise MapNotFound("node")
        have = {(c.chunk_id, c.quote) for c in _node_citations(db, node_id)}
        rows = []
        for c in citations:
            if (c.get("chunk_id"), c.get("quote")) in have:
                continue
            row = Citation(map_id=map_id, node_id=node_id, origin=Origin.AGENT, **c)
            db.add(row)
            rows.append(row)
        if rows:
            _touch(db, map_id)
    return rows


def update_agent_node(db: Session, map_id: str, node_id: str, **values: Any) -> MapNode:
    """An agent's change to an existing node (e.g. a claim becoming a counterpoint)."""
    with atomic(db):
        node = db.get(MapNode, node_id, populate_existing=True)
        if node is None or node.map_id != map_id:
            raise MapNotFound("node")
        for k, v in values.items():
            setattr(node, k, v)
        node.updated_at = utcnow()
        db.add(node)
        _touch(db, map_id)
    return node


def add_relation(db: Session, map_id: str, source_id: str, target_id: str,
                 kind: str = RelationKind.CONTRADICTS, *, run_id: str | None = None,
                 created_by: str = Origin.AGENT) -> NodeRelation | None:
    """Link two nodes of the map (idempotent: None when the link exists)."""
    if kind not in RelationKind.ALL:
        raise MapError("bad_relation", f"Unknown relation {kind!r}.")
    with atomic(db):
        nodes = {n.id: n for n in db.exec(select(MapNode).where(col(MapNode.id).in_([source_id, target_id])))}
        if len(nodes) != 2 or any(n.map_id != map_id for n in nodes.values()):
            raise MapNotFound("node")
        exists = db.exec(select(NodeRelation.id).where(
            ((NodeRelation.source_id == source_id) & (NodeRelation.target_id == target_id))
            | ((NodeRelation.source_id == target_id) & (NodeRelation.target_id == source_id)),
            NodeRelation.kind == kind)).first()
        if exists:
            return None
        rel = NodeRelation(map_id=map_id, source_id=source_id, target_id=target_id, kind=kind,
                           run_id=run_id, created_by=created_by)
        db.add(rel)
        _touch(db, map_id)
    return rel


def mark_offline(db: Session, map_id: str) -> None:
    db.exec(update(Mindmap).where(col(Mindmap.id) == map_id).values(offline=True))  # type: ignore[call-overload]
    db.commit()


# ---- proposals (restructure / chapters previews) -------------------------------------------
def create_proposal(db: Session, map_id: str, kind: str, groups: list[dict[str, Any]],
                    run_id: str | None = None) -> MapProposal:
    p = MapProposal(map_id=map_id, kind=kind, run_id=run_id,
                    payload={"groups": groups, "node_kind": NodeKind.CHAPTER if kind == "chapters" else NodeKind.THEME})
    with atomic(db):
        db.add(p)
        _touch(db, map_id)
    return p


def _proposal(db: Session, owner_id: str, map_id: str, proposal_id: str) -> MapProposal:
    get_map(db, owner_id, map_id)
    p = db.get(MapProposal, proposal_id, populate_existing=True)
    if p is None or p.map_id != map_id:
        raise MapNotFound("proposal")
    if p.status != "pending":
        raise MapError("proposal_decided", f"The proposal was already {p.status}.", 409)
    return p


def accept_proposal(db: Session, owner_id: str, map_id: str, proposal_id: str) -> dict[str, Any]:
    """Apply a regrouping: one new theme/chapter node per group under the root, the group's
    nodes moved under it (nodes deleted since are skipped). One undoable edit."""
    p = _proposal(db, owner_id, map_id, proposal_id)
    root = root_of(db, map_id)
    nodes = {n.id: n for n in _nodes(db, map_id)}
    kind = p.payload.get("node_kind", NodeKind.THEME)
    u = _Undo()
    for gi, group in enumerate(p.payload.get("groups", [])):
        members = [nodes[i] for i in group.get("node_ids", []) if i in nodes and i != root.id]
        if not members:
            continue
        head = _insert(db, map_id, root, kind, str(group.get("title") or f"Group {gi + 1}")[:MAX_NODE_TITLE],
                       str(group.get("summary") or ""), None, u, created_by=Origin.AGENT, run_id=p.run_id)
        member_ids = {m.id for m in members}
        for k, m in enumerate(members):
            # a member nested under another member moves along with it
            if _has_ancestor_in(m, member_ids, nodes):
                continue
            u.before("nodes", m)
            m.parent_id, m.order_index = head.id, k
            db.add(m)
    p.status = "accepted"
    db.add(p)
    _commit_edit(db, map_id, "accept_proposal", u)
    return proposal_view(p)


def _has_ancestor_in(n: MapNode, ids: set[str], nodes: dict[str, MapNode]) -> bool:
    cur = nodes.get(n.parent_id) if n.parent_id else None
    while cur is not None:
        if cur.id in ids:
            return True
        cur = nodes.get(cur.parent_id) if cur.parent_id else None
    return False


def reject_proposal(db: Session, owner_id: str, map_id: str, proposal_id: str) -> dict[str, Any]:
    p = _proposal(db, owner_id, map_id, proposal_id)
    p.status = "rejected"
    db.add(p)
    _touch(db, map_id)
    db.commit()
    return proposal_view(p)
