"""Hybrid search over one owner's library: dense + BM25 sparse, fused by RRF in the index;
in a library with non-English documents, plus one multilingual list per language
(:mod:`bayes_app.search.crosslang`), fused here."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from sqlmodel import Session, col, select

from bayes_app.library import chunking, structure
from bayes_app.library.hyphens import join_broken_words
from bayes_app.models import Chunk, Document
from bayes_app.search import crosslang, relevance, sparse
from bayes_app.search.embeddings import Embedder, get_embedder
from bayes_app.search.points import RRF_K, Hit

if TYPE_CHECKING:
    from bayes_app.search.index import IndexClient

MAX_K = 100
TIE_SLACK = 8  # hits fetched beyond k, so a tie at the k-th place is broken here, not by the index


class SearchHit(BaseModel):
    """A passage found, as a reader is shown it and the HTTP API answers it: `score` is the fused
    rank score, `relevance` the query-passage cosine of the dense vectors, `weak` under the
    relevance floor (the closest passage, not a strong match), `language` ISO 639-1 ("" =
    unknown). With "my highlights", `highlighted` and `highlight` (the Zotero highlight over the
    passage: page rectangles, colour) are set."""

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
    role: str | None
    role_label: str | None
    section: str | None
    relevance: float | None
    weak: bool
    language: str
    highlighted: bool | None = None
    highlight: dict[str, Any] | None = None


def role_label(role: str) -> str:
    """ "Figure text", "Caption", ... for roles worth flagging; "" for body text and headings."""
    return structure.ROLE_LABELS.get(role, "") if role != structure.Role.HEADING else ""


def display_text(text: str) -> str:
    """A hit's text as shown and quoted: line-broken words joined (keeping a hyphen that belongs to
    the word, `library.hyphens`), whitespace collapsed."""
    return " ".join(join_broken_words(text).split())


def excluded_roles(include_roles: Collection[str] | None = None, all_roles: bool = False) -> list[str]:
    """Roles to leave out: by default reference lists, running heads and title blocks;
    ``include_roles`` brings some back, ``all_roles`` all of them."""
    if all_roles:
        return []
    keep = set(include_roles or ())
    return sorted(r for r in structure.SEARCH_EXCLUDED if r not in keep)


def foreign_languages(db: Session, owner_id: str) -> list[str]:
    """Languages other than English that some of the owner's documents are in."""
    rows = db.exec(
        select(Document.language)
        .where(Document.owner_id == owner_id, col(Document.language).not_in(("", crosslang.ENGLISH)))
        .distinct()
    )
    return sorted(r for r in rows if r)


def search(
    db: Session,
    index: IndexClient,
    embedder: Embedder,
    owner_id: str,
    query: str,
    k: int = 10,
    document_ids: list[str] | None = None,
    collection_ids: list[str] | None = None,
    include_roles: Collection[str] | None = None,
    all_roles: bool = False,
    cross_embedder: Embedder | None = None,
    keep_headings: bool = True,
) -> list[SearchHit]:
    """Top-k passages of `owner_id`'s documents for `query` (optionally narrowed).

    Reference lists, running heads and title blocks are left out unless asked for (see
    :func:`excluded_roles`); each hit says whether it clears the relevance floor. When the
    library holds documents in other languages than English (and the index has a
    cross-language collection), each such language adds a ranked list of its passages by
    multilingual cosine (``cross_embedder``, default the cross-language model).
    ``keep_headings=False`` (the Search page and API): a passage that opens with its section's
    heading lines is shown and highlighted from its first sentence; ``section`` names them. The
    agents keep them: a heading is context for the passage's first sentence."""
    query = (query or "").strip()
    if not query:
        return []
    k = max(1, min(int(k), MAX_K))
    langs = foreign_languages(db, owner_id) if index.cross_collection else []
    per_side = max(40, 2 * k)
    exclude = excluded_roles(include_roles, all_roles)
    dense = embedder.embed_query(query)
    sv = sparse.query_vector(query)
    hits = index.hybrid_search(
        dense,
        (sv.indices, sv.values),
        owner_id=owner_id,
        document_ids=document_ids,
        collection_ids=collection_ids,
        limit=per_side if langs else min(per_side, k + TIE_SLACK),
        prefetch_limit=per_side,
        exclude_roles=exclude,
        with_cosine=True,
    )
    hits = _tie_broken(hits)[: per_side if langs else k]
    cross: dict[str, Hit] = {}
    if langs:
        xq = (cross_embedder or get_embedder(crosslang.CROSS_MODEL)).embed_query(query)
        ranked = [
            index.cross_search(
                xq,
                owner_id,
                lang,
                document_ids,
                collection_ids,
                limit=per_side,
                exclude_roles=exclude,
                score_threshold=crosslang.CROSS_FLOOR,
            )
            for lang in langs
        ]
        hits, cross = _fused(hits, ranked, k)
    if not hits:
        return []
    return _search_hits(db, owner_id, hits, cross, embedder, keep_headings, relevance.names_in(query))


def _tie_broken(hits: list[Hit]) -> list[Hit]:
    """The hits by fused score, ties by dense cosine, then by id. Reciprocal-rank fusion ties
    exactly when two passages swap ranks between the dense and sparse lists — typically two
    overlapping passages of one page — and the index orders a tie as it happens to: the same
    search must return the same passages in the same order."""
    return sorted(hits, key=lambda h: (-h.score, -(h.dense if h.dense is not None else -1.0), str(h.point_id)))


def _fused(hits: list[Hit], ranked: list[list[Hit]], k: int) -> tuple[list[Hit], dict[str, Hit]]:
    """The top k of the hybrid hits fused with one ranked list per other language, and the
    hits found across languages by id."""
    cross: dict[str, Hit] = {}
    fused = {str(h.point_id): h.score for h in hits}
    for lang_hits in ranked:
        for rank, h in enumerate(lang_hits):
            cid = str(h.point_id)
            fused[cid] = fused.get(cid, 0.0) + crosslang.cross_weight(h.score) / (RRF_K + rank + 1)
            cross[cid] = h
    main = {str(h.point_id): h for h in hits}
    order = sorted(fused, key=lambda cid: -fused[cid])[:k]
    top = [
        Hit(cid, fused[cid], (main.get(cid) or cross[cid]).payload, main[cid].dense if cid in main else None)
        for cid in order
    ]
    return top, cross


def _search_hits(
    db: Session,
    owner_id: str,
    hits: list[Hit],
    cross: dict[str, Hit],
    embedder: Embedder,
    keep_headings: bool,
    names: frozenset[str] | set[str] = frozenset(),
) -> list[SearchHit]:
    """The hits' passages and papers (the owner's only), with their relevance. A hit stating one
    of the query's `names` ("DESMOND", "SVCT2"), or from a paper whose title does, is not weak,
    whatever its cosine: the dense model barely knows such names."""
    ids = [str(h.point_id) for h in hits]
    # Look chunks up by primary key only and check the owner here: with an owner condition
    # in SQL, SQLite may scan the owner's whole chunk index instead (40 ms at 30k chunks).
    chunks = [c for c in db.exec(select(Chunk).where(col(Chunk.id).in_(ids))) if c.owner_id == owner_id]
    docs = {d.id: d for d in db.exec(select(Document).where(col(Document.id).in_({c.document_id for c in chunks})))}
    by_id = {c.id: (c, docs[c.document_id]) for c in chunks if c.document_id in docs}
    out = []
    for h in hits:
        found = by_id.get(str(h.point_id))
        if found is None:  # vector without a committed chunk (ingest in flight): skip
            continue
        c, d = found
        lead = 0 if keep_headings else chunking.heading_lead(c.text, c.section)
        x = cross.get(str(h.point_id))
        if x is not None:  # found across languages: the multilingual cosine is the relevance
            cosine, weak, lang = x.dense, False, str(x.payload.get("lang") or d.language)
        else:
            cosine, lang = h.dense, d.language
            weak = relevance.is_weak(h.dense, embedder.name) and not relevance.named_match(
                names, f"{d.title or ''}\n{c.text}"
            )
        out.append(
            SearchHit(
                chunk_id=c.id,
                document_id=d.id,
                title=d.title or d.filename,
                authors=list(d.authors or []),
                year=d.year,
                page=c.page,
                char_start=c.char_start + lead,
                char_end=c.char_end,
                text=display_text(c.text[lead:]),
                score=round(h.score, 6),
                role=c.role,
                role_label=role_label(c.role),
                section=c.section,
                relevance=None if cosine is None else round(cosine, 4),
                weak=weak,
                language=lang,
            )
        )
    return out
