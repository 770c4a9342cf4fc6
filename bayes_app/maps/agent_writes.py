"""What agents write into a map (nodes, citations, relations), each its own transaction and
not on the user's undo stack."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlmodel import Session, col, select

from bayes_app.db import atomic
from bayes_app.maps.access import _node_citations, _touch
from bayes_app.maps.edits import MAX_NODE_TITLE, _insert
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.models import (
    Citation,
    MapNode,
    Mindmap,
    NodeRelation,
    Operation,
    Origin,
    RelationKind,
    utcnow,
)


# ---- agent writes (each its own transaction; not on the user's undo stack) -------------------
def _starter(db: Session, run_id: str | None) -> str | None:
    """The user who started the run (an editor's run on a shared map is theirs, not the owner's)."""
    op = db.get(Operation, run_id) if run_id else None
    return op.owner_id if op is not None else None


def write_agent_node(
    db: Session,
    map_id: str,
    parent_id: str,
    kind: str,
    title: str,
    body: str = "",
    *,
    run_id: str | None,
    confidence: float | None = None,
    citations: list[dict[str, Any]] | None = None,
    after_id: str | None = None,
) -> tuple[MapNode, list[Citation]]:
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
        node = _insert(
            db,
            map_id,
            parent,
            kind,
            title[:MAX_NODE_TITLE],
            body,
            index,
            None,
            created_by=Origin.AGENT,
            run_id=run_id,
            author_id=_starter(db, run_id),
            confidence=confidence,
        )
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


def add_relation(
    db: Session,
    map_id: str,
    source_id: str,
    target_id: str,
    kind: str = RelationKind.CONTRADICTS,
    *,
    run_id: str | None = None,
    created_by: str = Origin.AGENT,
) -> NodeRelation | None:
    """Link two nodes of the map (idempotent: None when the link exists)."""
    if kind not in RelationKind.ALL:
        raise MapError("bad_relation", f"Unknown relation {kind!r}.")
    with atomic(db):
        nodes = {n.id: n for n in db.exec(select(MapNode).where(col(MapNode.id).in_([source_id, target_id])))}
        if len(nodes) != 2 or any(n.map_id != map_id for n in nodes.values()):
            raise MapNotFound("node")
        exists = db.exec(
            select(NodeRelation.id).where(
                ((NodeRelation.source_id == source_id) & (NodeRelation.target_id == target_id))
                | ((NodeRelation.source_id == target_id) & (NodeRelation.target_id == source_id)),
                NodeRelation.kind == kind,
            )
        ).first()
        if exists:
            return None
        rel = NodeRelation(
            map_id=map_id, source_id=source_id, target_id=target_id, kind=kind, run_id=run_id, created_by=created_by
        )
        db.add(rel)
        _touch(db, map_id)
    return rel


def mark_offline(db: Session, map_id: str) -> None:
    db.exec(update(Mindmap).where(col(Mindmap.id) == map_id).values(offline=True))  # type: ignore[call-overload]
    db.commit()
