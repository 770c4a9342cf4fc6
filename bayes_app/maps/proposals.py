"""Restructure / chapters previews: created by a run, accepted (regrouping, undoable) or rejected."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from bayes_app.db import atomic
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.maps.access import _nodes, _touch, get_map, root_of
from bayes_app.maps.edits import MAX_NODE_TITLE, _insert
from bayes_app.maps.undo import _commit_edit, _Undo
from bayes_app.maps.views import proposal_view
from bayes_app.models import (
    MapNode, MapProposal, NodeKind, Origin,
)

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
