"""What the owner of a shared map made readable to it — the one set its members' runs may read
and cite: the map's collection when it is scoped to one, else the documents the map cites plus
those the owner added in the share dialog (`MapDocument`). A member's run never widens it: a
claim it would cite from anything else becomes a proposal only the owner sees."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from bayes_app.db import atomic
from bayes_app.errors import NotFound
from bayes_app.models import Citation, DocStatus, Document, DocumentCollection, MapDocument, Mindmap


def added(db: Session, map_id: str) -> set[str]:
    """The documents the owner added to the map in the share dialog."""
    return set(db.exec(select(MapDocument.document_id).where(MapDocument.map_id == map_id)))


def cited(db: Session, m: Mindmap) -> set[str]:
    """The documents of the map's owner that the map cites."""
    rows = db.exec(
        select(Citation.document_id)
        .join(Document, col(Document.id) == col(Citation.document_id))
        .where(Citation.map_id == m.id, Document.owner_id == m.owner_id)
    )
    return {d for d in rows if d}


def member_scope(db: Session, m: Mindmap) -> set[str]:
    """The documents a member's run on the map may read and cite (see the module docstring)."""
    if m.collection_id:
        return set(
            db.exec(select(DocumentCollection.document_id).where(DocumentCollection.collection_id == m.collection_id))
        )
    return cited(db, m) | added(db, m.id)


def may_cite(db: Session, m: Mindmap, starter: str | None, document_ids: set[str]) -> set[str]:
    """Of `document_ids`, those a run started by `starter` may cite on the map: all for the owner
    (and for agent writes with no starter), only the member scope for a member."""
    if starter is None or starter == m.owner_id:
        return set(document_ids)
    return set(document_ids) & member_scope(db, m)


def _view(d: Document, how: str) -> dict[str, Any]:
    return {"document_id": d.id, "title": d.title, "year": d.year, "how": how}


def list_readable(db: Session, owner_id: str, m: Mindmap) -> dict[str, Any]:
    """For the share dialog: what members can open (cited, added by the owner) and the owner's
    other indexed documents that may be added."""
    cite, add = cited(db, m), added(db, m.id)
    docs = list(
        db.exec(
            select(Document)
            .where(Document.owner_id == owner_id, Document.status == DocStatus.INDEXED)
            .order_by(col(Document.title))
        )
    )
    return {
        "collection_id": m.collection_id,
        "documents": [_view(d, "cited" if d.id in cite else "added") for d in docs if d.id in cite | add],
        "addable": [_view(d, "") for d in docs if d.id not in cite | add],
    }


def add_document(db: Session, owner_id: str, m: Mindmap, document_id: Any) -> None:
    """The owner makes one of their documents readable to the map (NotFound: not theirs)."""
    doc = db.get(Document, document_id) if isinstance(document_id, str) else None
    if doc is None or doc.owner_id != owner_id:
        raise NotFound("document")
    if db.get(MapDocument, (m.id, doc.id)) is None:
        with atomic(db):
            db.add(MapDocument(map_id=m.id, document_id=doc.id, added_by=owner_id))


def remove_document(db: Session, m: Mindmap, document_id: str) -> None:
    """The owner takes a document back (it stays readable while the map cites it)."""
    row = db.get(MapDocument, (m.id, document_id))
    if row is None:
        raise NotFound("document")
    with atomic(db):
        db.delete(row)


def proposal_documents(payload: dict[str, Any]) -> set[str]:
    """Every document a proposal's payload names (its papers, its items' citations)."""
    docs = {str(d["id"]) for d in payload.get("documents", []) if isinstance(d, dict) and d.get("id")}
    for it in payload.get("items", []):
        if isinstance(it, dict):
            docs.update(str(x) for x in (it.get("document_id"), (it.get("citation") or {}).get("document_id")) if x)
    return docs


def proposal_visible(db: Session, user_id: str, m: Mindmap, payload: dict[str, Any]) -> bool:
    """The owner sees every proposal; a member only those naming no document they cannot open
    (and never one kept for the owner's decision, `owner_only`)."""
    from bayes_app.sharing.documents import readable

    if user_id == m.owner_id:
        return True
    if payload.get("owner_only"):
        return False
    return all(readable(db, user_id, d) is not None for d in proposal_documents(payload))
