"""What agents write into a map (nodes, citations, relations), each its own transaction. A run's
writes are recorded in ONE history entry of the map (`undo.record_run_write`), authored by the
user who started the run: that user's undo reverses them, and the map's history lists them.

A run started by a member of a shared map may cite only what the owner made readable to the map
(`sharing.map_documents`): a node citing anything else is refused with `NotShared` (the Writer
turns it into a proposal only the owner sees). A run changes only nodes it wrote itself."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlmodel import Session, col, select

from bayes_app.db import atomic
from bayes_app.maps.access import _node_citations, _touch
from bayes_app.maps.edits import MAX_NODE_TITLE, _insert
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.maps.undo import _Undo, record_run_write
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
from bayes_app.sharing.map_documents import may_cite


class NotShared(MapError):
    """A member's run would cite documents the owner has not made readable to the map."""

    def __init__(self, document_ids: set[str]) -> None:
        super().__init__("not_shared", "This paper is not shared with the map's members.", 403)
        self.document_ids = document_ids


# ---- agent writes (each its own transaction; not on the user's undo stack) -------------------
def _starter(db: Session, run_id: str | None) -> str | None:
    """The user who started the run (an editor's run on a shared map is theirs, not the owner's)."""
    op = db.get(Operation, run_id) if run_id else None
    return op.owner_id if op is not None else None


def _record(db: Session, map_id: str, run_id: str | None, u: _Undo) -> None:
    """Record the write in its run's history entry (a write outside a run is not recorded)."""
    op = db.get(Operation, run_id) if run_id else None
    if op is not None and run_id is not None:
        record_run_write(db, map_id, run_id, op.owner_id, f"run_{op.kind}", u)


def unshared(db: Session, m: Mindmap, run_id: str | None, citations: list[dict[str, Any]]) -> set[str]:
    """The documents of `citations` the run may not cite on the map (see the module docstring)."""
    docs = {str(c["document_id"]) for c in citations if c.get("document_id")}
    return docs - may_cite(db, m, _starter(db, run_id), docs) if docs else set()


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
        m = db.get(Mindmap, map_id, populate_existing=True)
        if m is None:
            raise MapNotFound("mindmap")
        parent = db.get(MapNode, parent_id, populate_existing=True)
        if parent is None or parent.map_id != map_id:
            raise MapNotFound("node")
        refused = unshared(db, m, run_id, citations or [])
        if refused:
            raise NotShared(refused)
        u = _Undo()
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
            u,
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
        db.flush()
        for row in rows:
            u.created("citations", row.id)
        _touch(db, map_id)
        _record(db, map_id, run_id, u)
    return node, rows


def add_agent_citations(
    db: Session, map_id: str, node_id: str, citations: list[dict[str, Any]], run_id: str | None = None
) -> list[Citation]:
    """More evidence for an existing node (a near-duplicate claim merged into it): its citations
    not already on the node (same passage and quote) are added — of a member's run, only those
    of documents readable to the map (the others are left out). MapNotFound when it is gone."""
    with atomic(db):
        node = db.get(MapNode, node_id, populate_existing=True)
        m = db.get(Mindmap, map_id, populate_existing=True)
        if node is None or m is None or node.map_id != map_id:
            raise MapNotFound("node")
        refused = unshared(db, m, run_id, citations)
        have = {(c.chunk_id, c.quote) for c in _node_citations(db, node_id)}
        rows = []
        for c in citations:
            if (c.get("chunk_id"), c.get("quote")) in have or c.get("document_id") in refused:
                continue
            row = Citation(map_id=map_id, node_id=node_id, origin=Origin.AGENT, **c)
            db.add(row)
            rows.append(row)
        if rows:
            db.flush()
            u = _Undo()
            for row in rows:
                u.created("citations", row.id)
            _touch(db, map_id)
            _record(db, map_id, run_id, u)
    return rows


def update_agent_node(db: Session, map_id: str, node_id: str, *, run_id: str | None, **values: Any) -> MapNode:
    """A run's change to a node it wrote itself (e.g. a claim becoming a counterpoint); a node
    the run did not create is never rewritten (MapError 409 `not_run_node`)."""
    with atomic(db):
        node = db.get(MapNode, node_id, populate_existing=True)
        if node is None or node.map_id != map_id:
            raise MapNotFound("node")
        if run_id is None or node.run_id != run_id:
            raise MapError("not_run_node", "A run changes only the nodes it wrote.", 409)
        u = _Undo()
        u.before("nodes", node)
        for k, v in values.items():
            setattr(node, k, v)
        node.updated_at = utcnow()
        db.add(node)
        _touch(db, map_id)
        _record(db, map_id, run_id, u)
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
        db.flush()
        u = _Undo()
        u.created("relations", rel.id)
        _touch(db, map_id)
        _record(db, map_id, run_id, u)
    return rel


def mark_offline(db: Session, map_id: str) -> None:
    db.exec(update(Mindmap).where(col(Mindmap.id) == map_id).values(offline=True))
    db.commit()
