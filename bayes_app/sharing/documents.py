"""Which documents of another library a user may open: exactly those a map shared with them
cites or the map's owner added to it in the share dialog (maps of that library's owner), those
in a collection shared with them, and the rows of a table shared with them. Opening means
the viewer at any page, the quote's highlight and the file; everything else of that library
(other documents, its search, chunks, references) stays 404."""

from __future__ import annotations

from sqlmodel import Session, col, select

from bayes_app.models import (
    Citation,
    CollectionMember,
    Document,
    DocumentCollection,
    MapDocument,
    MapMember,
    Mindmap,
)
from bayes_app.tables.service import row_of_shared_table


def cited_in_shared_map(db: Session, user_id: str, doc: Document) -> bool:
    """A map of the document's owner that the user is a member of cites it."""
    q = (
        select(Citation.id)
        .join(MapMember, MapMember.map_id == Citation.map_id)  # type: ignore[arg-type]
        .join(Mindmap, Mindmap.id == Citation.map_id)  # type: ignore[arg-type]
        .where(Citation.document_id == doc.id, MapMember.user_id == user_id, Mindmap.owner_id == doc.owner_id)
        .limit(1)
    )
    return db.exec(q).first() is not None


def added_to_shared_map(db: Session, user_id: str, doc: Document) -> bool:
    """The document's owner added it to a map of theirs that the user is a member of."""
    q = (
        select(MapDocument.map_id)
        .join(MapMember, col(MapMember.map_id) == col(MapDocument.map_id))
        .join(Mindmap, col(Mindmap.id) == col(MapDocument.map_id))
        .where(MapDocument.document_id == doc.id, MapMember.user_id == user_id, Mindmap.owner_id == doc.owner_id)
        .limit(1)
    )
    return db.exec(q).first() is not None


def in_shared_collection(db: Session, user_id: str, document_id: str) -> bool:
    q = (
        select(DocumentCollection.document_id)
        .join(CollectionMember, col(CollectionMember.collection_id) == col(DocumentCollection.collection_id))
        .where(DocumentCollection.document_id == document_id, CollectionMember.user_id == user_id)
        .limit(1)
    )
    return db.exec(q).first() is not None


def readable(db: Session, user_id: str, document_id: str) -> Document | None:
    """The document when the user owns it, a map shared with them cites it (or its owner added
    it to the map), or it is in a collection shared with them; None otherwise (answer 404)."""
    doc = db.get(Document, document_id)
    if doc is None:
        return None
    if (
        doc.owner_id == user_id
        or cited_in_shared_map(db, user_id, doc)
        or added_to_shared_map(db, user_id, doc)
        or in_shared_collection(db, user_id, doc.id)
    ):
        return doc
    if row_of_shared_table(db, user_id, doc):
        return doc
    return None
