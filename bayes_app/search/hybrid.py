"""Hybrid search over one owner's library: dense + BM25 sparse, fused by RRF in the index."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlmodel import Session, col, select

from bayes_app.library import structure
from bayes_app.library.chunking import embedding_text
from bayes_app.models import Chunk, Document
from bayes_app.search import relevance, sparse
from bayes_app.search.embeddings import Embedder
from bayes_app.search.index import IndexClient

MAX_K = 100


@dataclass(frozen=True)
class SearchHit:
    chunk_id: str
    document_id: str
    title: str
    authors: list[str]
    year: int | None
    page: int
    char_start: int
    char_end: int
    text: str
    score: float
    role: str = structure.Role.BODY
    section: str = ""
    cosine: float | None = None  # query-passage cosine of the dense vectors
    weak: bool = False  # under the relevance floor: the closest passage, not a strong match

    @property
    def role_label(self) -> str:
        """"Figure text", "Caption", ... for roles worth flagging; "" for body text."""
        return structure.ROLE_LABELS.get(self.role, "") if self.role != structure.Role.HEADING else ""

    def to_json(self) -> dict:
        return {"chunk_id": self.chunk_id, "document_id": self.document_id, "title": self.title,
                "authors": self.authors, "year": self.year, "page": self.page,
                "char_start": self.char_start, "char_end": self.char_end,
                "text": self.text, "score": round(self.score, 6), "role": self.role,
                "role_label": self.role_label, "section": self.section,
                "relevance": None if self.cosine is None else round(self.cosine, 4),
                "weak": self.weak}


def all_weak(hits: list[SearchHit]) -> bool:
    """True when results exist but none is a strong match ("No strong matches")."""
    return bool(hits) and all(h.weak for h in hits)


def excluded_roles(include_roles: Collection[str] | None = None, all_roles: bool = False) -> list[str]:
    """Roles to leave out: by default reference lists, running heads and title blocks;
    ``include_roles`` brings some back, ``all_roles`` all of them."""
    if all_roles:
        return []
    keep = set(include_roles or ())
    return sorted(r for r in structure.SEARCH_EXCLUDED if r not in keep)


def search(db: Session, index: IndexClient, embedder: Embedder, owner_id: str, query: str,
           k: int = 10, document_ids: list[str] | None = None,
           collection_ids: list[str] | None = None, include_roles: Collection[str] | None = None,
           all_roles: bool = False) -> list[SearchHit]:
    """Top-k passages of `owner_id`'s documents for `query` (optionally narrowed).

    Reference lists, running heads and title blocks are left out unless asked for (see
    :func:`excluded_roles`); each hit says whether it clears the relevance floor."""
    query = (query or "").strip()
    if not query:
        return []
    k = max(1, min(int(k), MAX_K))
    dense = embedder.embed_query(query)
    sv = sparse.query_vector(query)
    hits = index.hybrid_search(dense, (sv.indices, sv.values), owner_id=owner_id,
                               document_ids=document_ids, collection_ids=collection_ids,
                               limit=k, prefetch_limit=max(40, 2 * k),
                               exclude_roles=excluded_roles(include_roles, all_roles),
                               with_cosine=True)
    if not hits:
        return []
    ids = [str(h.point_id) for h in hits]
    # Look chunks up by primary key only and check the owner here: with an owner condition
    # in SQL, SQLite may scan the owner's whole chunk index instead (40 ms at 30k chunks).
    chunks = [c for c in db.exec(select(Chunk).where(col(Chunk.id).in_(ids))) if c.owner_id == owner_id]
    docs = {d.id: d for d in db.exec(select(Document).where(
        col(Document.id).in_({c.document_id for c in chunks})))}
    by_id = {c.id: (c, docs[c.document_id]) for c in chunks if c.document_id in docs}
    out = []
    for h in hits:
        found = by_id.get(str(h.point_id))
        if found is None:  # vector without a committed chunk (ingest in flight): skip
            continue
        c, d = found
        out.append(SearchHit(c.id, d.id, d.title or d.filename, list(d.authors or []), d.year,
                             c.page, c.char_start, c.char_end, embedding_text(c.text), h.score,
                             c.role, c.section, h.dense, relevance.is_weak(h.dense, embedder.name)))
    return out
