"""Citation-graph use cases: who cites whom in the user's library, how often a map's cited
papers are cited there, and the papers the library (a collection, a map) cites but lacks."""

from __future__ import annotations

from sqlmodel import Session, col, select

from bayes_app.db import session_scope
from bayes_app.library import citation_graph as graph
from bayes_app.library import documents as lib
from bayes_app.library.citation_graph import DocumentCitations, LinkedPaper, MissingPaper
from bayes_app.library.documents import NotFound

__all__ = [
    "DocumentCitations",
    "LinkedPaper",
    "MissingPaper",
    "NotFound",
    "document_citations",
    "map_cited_by_counts",
    "map_missing",
    "missing",
    "rebuild",
]
from bayes_app.maps.access import authorize
from bayes_app.models import Citation, Role


def document_citations(user_id: str, document_id: str) -> DocumentCitations:
    """The library documents one document cites and is cited by (NotFound unless theirs)."""
    with session_scope() as db:
        lib.get_owned(db, user_id, document_id)
        return graph.citations_of(db, user_id, document_id)


def missing(user_id: str, collection_id: str | None = None) -> list[MissingPaper]:
    """Papers cited by ≥ 2 documents of the library (or of one collection) that it lacks."""
    with session_scope() as db:
        ids = None
        if collection_id:
            lib.get_collection(db, user_id, collection_id)
            ids = graph.collection_documents(db, collection_id)
        return graph.missing(db, user_id, ids)


def _map_documents(db: Session, user_id: str, map_id: str) -> list[str]:
    authorize(db, user_id, map_id, Role.OWNER)  # it reads the owner's library: members get 403
    return sorted(
        {
            d
            for d in db.exec(
                select(Citation.document_id).where(Citation.map_id == map_id, col(Citation.document_id).is_not(None))
            )
            if d
        }
    )


def map_missing(user_id: str, map_id: str) -> list[MissingPaper]:
    """Papers cited by ≥ 2 of the papers a map cites that are not in the library."""
    with session_scope() as db:
        return graph.missing(db, user_id, _map_documents(db, user_id, map_id))


def map_cited_by_counts(user_id: str, map_id: str) -> dict[str, int]:
    """For each document a map cites: how many library documents cite it."""
    with session_scope() as db:
        return graph.cited_by_counts(db, user_id, _map_documents(db, user_id, map_id))


def rebuild(user_id: str) -> int:
    """Rebuild the user's whole graph (after an upgrade, or on demand)."""
    with session_scope() as db:
        return graph.rebuild(db, user_id)
