"""JSON-ready views of maps, nodes, citations, relations and proposals, and the whole map."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from bayes_app.library import citation_graph
from bayes_app.maps.access import _nodes, get_map
from bayes_app.models import (
    Citation,
    Collection,
    Document,
    MapNode,
    MapProposal,
    Mindmap,
    NodeRelation,
    Operation,
)


# ---- serialisation ---------------------------------------------------------------------------
def _iso(d: datetime | None) -> str | None:
    return d.isoformat() if d else None


def map_summary(m: Mindmap) -> dict[str, Any]:
    return {
        "id": m.id,
        "title": m.title,
        "offline": m.offline,
        "watch_new_papers": m.watch_new_papers,
        "collection_id": m.collection_id,  # the map's scope (None: the owner's whole library)
        "revision": m.revision,
        "created_at": _iso(m.created_at),
        "updated_at": _iso(m.updated_at),
    }


def node_view(n: MapNode, citations: list[Citation] | None = None) -> dict[str, Any]:
    cits = citations or []
    scores = [c.support_score for c in cits if c.support_score is not None]
    return {
        "id": n.id,
        "map_id": n.map_id,
        "parent_id": n.parent_id,
        "kind": n.kind,
        "title": n.title,
        "body": n.body,
        "order": n.order_index,
        "position": _stored_position(n),
        "collapsed": n.collapsed,
        "created_by": n.created_by,
        "run_id": n.run_id,
        "author_id": n.author_id,  # the user who made it, or who started the run that wrote it
        "edited_by": n.edited_by,
        "confidence": n.confidence,
        "citation_count": len(cits),
        "support": round(min(scores), 3) if scores else None,
        "created_at": _iso(n.created_at),
        "updated_at": _iso(n.updated_at),
    }


def citation_view(c: Citation, doc: Document | None = None, cited_in_library: int = 0) -> dict[str, Any]:
    """A citation with its source's title; ``cited_in_library``: how many of the owner's
    documents cite that source (the citation graph)."""
    return {
        "id": c.id,
        "node_id": c.node_id,
        "document_id": c.document_id,
        "chunk_id": c.chunk_id,
        "page": c.page,
        "quote": c.quote,
        "char_start": c.char_start,
        "char_end": c.char_end,
        "origin": c.origin,
        "agent": c.agent,
        "support_score": c.support_score,
        "support_label": c.support_label,
        "suggested_rewrite": c.suggested_rewrite,
        "region": c.region,
        "title": (doc.title or doc.filename) if doc else c.source_title,
        "source_removed": c.source_removed_at is not None,
        "source_removed_reason": c.source_removed_reason,
        "authors": list(doc.authors or []) if doc else [],
        "year": doc.year if doc else None,
        "language": doc.language if doc else "",
        "cited_in_library": cited_in_library,
        "created_at": _iso(c.created_at),
    }


def relation_view(r: NodeRelation) -> dict[str, Any]:
    return {
        "id": r.id,
        "source_id": r.source_id,
        "target_id": r.target_id,
        "kind": r.kind,
        "created_by": r.created_by,
        "run_id": r.run_id,
    }


def proposal_view(p: MapProposal) -> dict[str, Any]:
    return {
        "id": p.id,
        "kind": p.kind,
        "status": p.status,
        "run_id": p.run_id,
        "payload": p.payload,
        "created_at": _iso(p.created_at),
    }


def map_citations(db: Session, map_id: str) -> list[tuple[Citation, Document | None]]:
    cits = list(db.exec(select(Citation).where(Citation.map_id == map_id).order_by(col(Citation.created_at))))
    docs = (
        {d.id: d for d in db.exec(select(Document).where(col(Document.id).in_({c.document_id for c in cits})))}
        if cits
        else {}
    )
    return [(c, docs.get(c.document_id or "")) for c in cits]


NO_LONGER_SHARED = "no_longer_shared"


def unshared_documents(db: Session, owner_id: str, cits: list[tuple[Citation, Document | None]]) -> set[str]:
    """Documents of other libraries the map cites that are no longer shared with its owner (a
    collection shared with them, unshared since): their citations keep the node but not the quote."""
    from bayes_app.sharing.documents import in_shared_collection

    foreign = {d.id for _, d in cits if d is not None and d.owner_id != owner_id}
    return {d for d in foreign if not in_shared_collection(db, owner_id, d)}


def _shown(view: dict[str, Any], unshared: set[str]) -> dict[str, Any]:
    if view["document_id"] not in unshared:
        return view
    return {
        **view,
        "quote": "",
        "char_start": None,
        "char_end": None,
        "region": None,
        "suggested_rewrite": None,
        "title": "No longer shared with you",
        "authors": [],
        "source_removed": True,
        "source_removed_reason": NO_LONGER_SHARED,
    }


def node_citation_views(db: Session, owner_id: str, map_id: str, node_id: str) -> list[dict[str, Any]]:
    """The citation views of one node, with how often the library cites each source."""
    cits = [(c, d) for c, d in map_citations(db, map_id) if c.node_id == node_id]
    counts = citation_graph.cited_by_counts(db, owner_id, (c.document_id for c, _ in cits if c.document_id))
    hidden = unshared_documents(db, owner_id, cits)
    return [_shown(citation_view(c, d, counts.get(c.document_id or "", 0)), hidden) for c, d in cits]


def map_view(db: Session, owner_id: str, map_id: str) -> dict[str, Any]:
    """The whole map: summary, nodes (display order), citations, relations, pending proposals."""
    m = get_map(db, owner_id, map_id)
    nodes = _nodes(db, map_id)
    cits = map_citations(db, map_id)
    by_node: dict[str, list[Citation]] = {}
    for c, _ in cits:
        by_node.setdefault(c.node_id, []).append(c)
    rels: Iterable[NodeRelation] = db.exec(select(NodeRelation).where(NodeRelation.map_id == map_id))
    props = db.exec(
        select(MapProposal)
        .where(MapProposal.map_id == map_id, MapProposal.status == "pending")
        .order_by(col(MapProposal.created_at))
    )
    root = next((n.id for n in nodes if n.parent_id is None), None)
    counts = citation_graph.cited_by_counts(db, m.owner_id, (c.document_id for c, _ in cits if c.document_id))
    hidden = unshared_documents(db, m.owner_id, cits)
    rels = list(rels)
    challenged = challenged_by(rels, cits)
    return {
        **map_summary(m),
        "collection_name": _collection_name(db, m.collection_id),
        "root_id": root,
        "nodes": [{**node_view(n, by_node.get(n.id)), "challenged_by": challenged.get(n.id, [])} for n in nodes],
        "citations": [_shown(citation_view(c, d, counts.get(c.document_id or "", 0)), hidden) for c, d in cits],
        "relations": [relation_view(r) for r in rels],
        "proposals": [{**proposal_view(p), "charged_credits": _charged(db, p)} for p in props],
    }


def _collection_name(db: Session, collection_id: str | None) -> str | None:
    c = db.get(Collection, collection_id) if collection_id else None
    return c.name if c is not None else None


def _charged(db: Session, p: MapProposal) -> int | None:
    """What the run that made an update proposal was charged (micro-credits; None: not settled)."""
    if p.kind != "update" or not p.run_id:
        return None
    op = db.get(Operation, p.run_id)
    return op.charged_credits if op is not None else None


def challenged_by(
    rels: list[NodeRelation], cits: list[tuple[Citation, Document | None]]
) -> dict[str, list[dict[str, Any]]]:
    """Node id → the newer papers that contradict it (counterpoints accepted from an update):
    "superseded" when that paper is more recent than every paper the node cites, else
    "contradicted"; with the date the evidence arrived in the library."""
    years: dict[str, list[int]] = {}
    for c, d in cits:
        if d is not None and d.year:
            years.setdefault(c.node_id, []).append(d.year)
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rels:
        if r.evidence_at is None:
            continue
        new_year = max(years.get(r.source_id, []), default=None)
        old_year = max(years.get(r.target_id, []), default=None)
        verb = "superseded" if new_year and old_year and new_year > old_year else "contradicted"
        title = r.evidence_title or "a newer paper"
        out.setdefault(r.target_id, []).append(
            {
                "verb": verb,
                "document_id": r.evidence_document_id,
                "title": title,
                "year": new_year,
                "arrived_at": _iso(r.evidence_at),
                "counterpoint_id": r.source_id,
                "line": f"{verb.capitalize()} by {title} (evidence arrived {r.evidence_at.date().isoformat()})",
            }
        )
    return out


def _stored_position(n: MapNode) -> dict[str, float] | None:
    """The node's saved position; one saved before positions were checked (Infinity, NaN)
    reads as "not placed yet" so the map stays readable and exportable."""
    if n.pos_x is None or n.pos_y is None or not (math.isfinite(n.pos_x) and math.isfinite(n.pos_y)):
        return None
    return {"x": n.pos_x, "y": n.pos_y}
