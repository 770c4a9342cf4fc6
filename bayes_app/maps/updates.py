"""Update proposals: what newly arrived papers would add to a map, previewed, then accepted in
full, in part or not at all. Nothing is written to the map before acceptance; an acceptance is
ONE undoable edit.

payload = {
  "documents": [{"id", "title", "year", "arrived_at"}],
  "items": [{"n", "action": "insert"|"create"|"counter", "text", "document_id", "document_title",
             "page", "quote", "citation": {...}, "parent_id", "parent_title", "path", "theme_title",
             "target_id", "target_title", "confidence"}],
}
"insert": a claim under an existing theme (`parent_id`, reached top-down: `path`); "create": a
claim under a new theme `theme_title`; "counter": a counterpoint to the existing claim
`target_id`, linked by `contradicts` and carrying its paper and the date it arrived (item 4).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from bayes_app.db import atomic
from bayes_app.maps.access import _touch, root_of
from bayes_app.maps.edits import MAX_NODE_TITLE, _insert
from bayes_app.maps.errors import MapError
from bayes_app.maps.undo import _commit_edit, _Undo
from bayes_app.maps.views import proposal_view
from bayes_app.models import (
    Citation,
    Document,
    MapNode,
    MapProposal,
    Mindmap,
    NodeKind,
    NodeRelation,
    Origin,
    RelationKind,
)

UPDATE = "update"
ACTIONS = ("insert", "create", "counter")


def create_update_proposal(
    db: Session, map_id: str, documents: list[dict[str, Any]], items: list[dict[str, Any]], run_id: str | None
) -> MapProposal:
    """Store an update proposal (numbering its items)."""
    items = [{**it, "n": k} for k, it in enumerate(i for i in items if i.get("action") in ACTIONS)]
    p = MapProposal(map_id=map_id, kind=UPDATE, run_id=run_id, payload={"documents": documents, "items": items})
    with atomic(db):
        db.add(p)
        _touch(db, map_id)
    return p


def divert_to_owner(
    db: Session,
    map_id: str,
    run_id: str,
    text: str,
    citation: dict[str, Any],
    *,
    parent_id: str | None,
    theme_title: str | None = None,
    kind: str = NodeKind.CLAIM,
    confidence: float | None = None,
) -> MapProposal:
    """A claim a member's run would have cited from a paper the owner has not made readable to
    the map: added to the run's update proposal that only the owner sees (`owner_only`); the
    owner's acceptance writes it (the paper then becomes readable as a cited one). Placed under
    `parent_id` when it still exists, else under a theme `theme_title`."""
    doc = db.get(Document, citation.get("document_id") or "")
    title = doc.title if doc is not None else str(citation.get("source_title") or "")
    p = db.exec(
        select(MapProposal).where(
            MapProposal.map_id == map_id, MapProposal.run_id == run_id, MapProposal.status == "pending"
        )
    ).first()
    payload: dict[str, Any] = dict(p.payload) if p is not None else {"documents": [], "items": [], "owner_only": True}
    if p is None:
        p = MapProposal(map_id=map_id, kind=UPDATE, run_id=run_id)
    docs = list(payload.get("documents", []))
    if doc is not None and all(d.get("id") != doc.id for d in docs):
        docs.append({"id": doc.id, "title": doc.title, "year": doc.year, "arrived_at": doc.updated_at.isoformat()})
    parent = db.get(MapNode, parent_id) if parent_id else None
    item: dict[str, Any] = {
        "n": len(payload.get("items", [])),
        "action": "insert" if parent is not None else "create",
        "text": text,
        "kind": kind,
        "document_id": citation.get("document_id"),
        "document_title": title,
        "year": doc.year if doc is not None else None,
        "page": citation.get("page"),
        "quote": citation.get("quote"),
        "citation": {
            **{k: v for k, v in citation.items() if k != "region" and not isinstance(v, datetime)},
            "source_title": title[:1000] or None,
        },
        "parent_id": parent.id if parent is not None else None,
        "parent_title": parent.title if parent is not None else None,
        "path": [],
        "theme_title": theme_title,
        "confidence": confidence,
    }
    p.payload = {**payload, "documents": docs, "items": [*payload.get("items", []), item], "owner_only": True}
    with atomic(db):
        db.add(p)
        _touch(db, map_id)
    return p


def proposed_documents(db: Session, map_id: str) -> set[str]:
    """The papers any update proposal of the map (pending or decided) already covered."""
    rows = db.exec(select(MapProposal.payload).where(MapProposal.map_id == map_id, MapProposal.kind == UPDATE))
    return {d["id"] for payload in rows for d in (payload or {}).get("documents", []) if d.get("id")}


def pending_paper_counts(db: Session, owner_id: str) -> dict[str, int]:
    """Map id → how many new papers its pending update proposals bring ("N new papers may change
    this map"); maps without one are left out."""
    rows = db.exec(
        select(MapProposal.map_id, MapProposal.payload)
        .join(Mindmap, col(Mindmap.id) == col(MapProposal.map_id))
        .where(Mindmap.owner_id == owner_id, MapProposal.kind == UPDATE, MapProposal.status == "pending")
    )
    docs: dict[str, set[str]] = {}
    for map_id, payload in rows:
        docs.setdefault(map_id, set()).update(d["id"] for d in (payload or {}).get("documents", []) if d.get("id"))
    return {m: len(d) for m, d in docs.items() if d}


def _theme(
    db: Session, map_id: str, root: MapNode, title: str, made: dict[str, MapNode], u: _Undo, run_id: str | None
) -> MapNode:
    """The top-level theme named `title`: one made by this acceptance, an existing one, or a new one."""
    key = title.lower()
    if key in made:
        return made[key]
    existing = db.exec(
        select(MapNode).where(MapNode.map_id == map_id, MapNode.parent_id == root.id, MapNode.kind == NodeKind.THEME)
    ).all()
    node = next((n for n in existing if n.title.lower() == key), None)
    if node is None:
        node = _insert(
            db,
            map_id,
            root,
            NodeKind.THEME,
            title[:MAX_NODE_TITLE],
            "",
            None,
            u,
            created_by=Origin.AGENT,
            run_id=run_id,
        )
    made[key] = node
    return node


def _arrived(documents: list[dict[str, Any]], doc_id: str | None) -> datetime | None:
    for d in documents:
        if d.get("id") == doc_id and d.get("arrived_at"):
            return datetime.fromisoformat(d["arrived_at"])
    return None


def it_gone(db: Session, item: dict[str, Any]) -> bool:
    """The item's paper was removed from the library since the preview (nothing left to cite)."""
    doc_id = (item.get("citation") or {}).get("document_id")
    return bool(doc_id) and db.get(Document, doc_id) is None


def accept_update(db: Session, p: MapProposal, selected: list[int] | None = None) -> tuple[dict[str, Any], list[str]]:
    """Write the selected items (all when `selected` is None) where the preview showed them, as
    ONE undoable edit; returns the proposal's view and the ids of the themes that got claims.
    A theme or claim removed since the preview: its items go under a new theme of the old
    theme's name (a counterpoint whose claim is gone becomes a plain claim there); an item whose
    paper was removed from the library is skipped (`skipped_removed`)."""
    items = p.payload.get("items", [])
    chosen = set(range(len(items)) if selected is None else selected)
    bad = [k for k in chosen if not isinstance(k, int) or not 0 <= k < len(items)]
    if bad:
        raise MapError("bad_items", f"No such item in the proposal: {bad[0]}.", 400)
    map_id, root = p.map_id, root_of(db, p.map_id)
    u, touched = _Undo(), []
    made: dict[str, MapNode] = {}
    docs = p.payload.get("documents", [])
    gone = [k for k in sorted(chosen) if it_gone(db, items[k])]
    for it in (items[k] for k in sorted(chosen) if k not in gone):
        parent = db.get(MapNode, it.get("parent_id") or "", populate_existing=True)
        target = (
            db.get(MapNode, it.get("target_id") or "", populate_existing=True) if it["action"] == "counter" else None
        )
        after = None
        kind = NodeKind.CLAIM
        if it["action"] == "counter" and target is not None and target.map_id == map_id and target.parent_id:
            parent, kind = db.get_one(MapNode, target.parent_id), NodeKind.COUNTERPOINT
            after = target.order_index + 1
        elif it["action"] == "create" or parent is None or parent.map_id != map_id:
            name = it.get("theme_title") or it.get("parent_title") or "New papers"
            parent = _theme(db, map_id, root, name, made, u, p.run_id)
        node = _insert(
            db,
            map_id,
            parent,
            kind,
            str(it["text"])[:MAX_NODE_TITLE],
            "",
            after,
            u,
            created_by=Origin.AGENT,
            run_id=p.run_id,
            confidence=it.get("confidence"),
        )
        cit = Citation(map_id=map_id, node_id=node.id, origin=Origin.AGENT, **it["citation"])
        db.add(cit)
        db.flush()
        u.created("citations", cit.id)
        if kind == NodeKind.COUNTERPOINT:
            assert target is not None  # a counterpoint answers its target
            rel = NodeRelation(
                map_id=map_id,
                source_id=node.id,
                target_id=target.id,
                kind=RelationKind.CONTRADICTS,
                run_id=p.run_id,
                evidence_document_id=it.get("document_id"),
                evidence_title=(it.get("document_title") or "")[:1000] or None,
                evidence_at=_arrived(docs, it.get("document_id")),
            )
            db.add(rel)
            db.flush()
            u.created("relations", rel.id)
        if parent.kind in (NodeKind.THEME, NodeKind.CHAPTER) and parent.id not in touched:
            touched.append(parent.id)
    p.status = "accepted" if chosen else "rejected"
    p.payload = {**p.payload, "accepted": sorted(set(chosen) - set(gone)), "skipped_removed": gone}
    db.add(p)
    _commit_edit(db, map_id, "accept_update", u)
    return proposal_view(p), touched
