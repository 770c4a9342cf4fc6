"""What the Ask agent reads from the library: the top passages of a question (within the
pinned scope, a shared collection searched in its owner's library), each whose last sentence
a page or column break cut continued from the next passage, and the passages' sentences ranked
for the question (what the model is told to read first)."""

from __future__ import annotations

from typing import Any

from bayes_app.chat import prompts, tools
from bayes_app.llm.offline import Passage, select_sentences

TOP_K = tools.SEARCH_TOP_K


def search_library(
    sessions: Any, owner_id: str, query: str, scope: dict[str, Any] | None, k: int = TOP_K
) -> list[dict[str, Any]]:
    """Top passages of the owner's library (within the scope) as citations."""
    from bayes_app.errors import DomainError
    from bayes_app.search import runtime
    from bayes_app.sharing.collections import scope_owner
    from bayes_app.zotero.annotations import prefer_highlighted

    scope = scope or {}
    with sessions() as db:
        try:  # a collection shared with the user is searched in its owner's library
            library = scope_owner(db, owner_id, scope.get("collection_ids") or None)
        except DomainError:  # no longer shared with them: nothing to search
            return []
        hits = runtime.search_library(
            db, library, query, k, scope.get("document_ids") or None, scope.get("collection_ids") or None
        )
        return prefer_highlighted(db, with_continuations(db, [h.model_dump() for h in hits]))


def ranked_sentences(question: str, citations: list[dict[str, Any]], limit: int = prompts.RANKED_SENTENCES) -> str:
    """The passages' sentences most relevant to the question (`llm.choose`), one a line with
    its passage's marker: what the model is told to read first."""
    passages = [Passage(int(c["n"]), str(c.get("text") or "")) for c in citations]
    picked = select_sentences(question, passages, limit)
    return "\n".join(f"- {' '.join(s.split())} [{n}]" for s, n in picked)


def without_marks(sessions: Any, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hits with footnote and reference marks set as superscripts taken out of their text
    ("Hitchcock 92" → "Hitchcock", `library.marks`): what an offline answer quotes to a reader
    (the citations keep the stored text, so "Open at page" still finds the sentence)."""
    from sqlmodel import col, select

    from bayes_app.library.marks import chunk_marks, strip_marks
    from bayes_app.models import Chunk

    ids = [h["chunk_id"] for h in hits if h.get("chunk_id")]
    if not ids:
        return hits
    with sessions() as db:
        chunks = list(db.exec(select(Chunk).where(col(Chunk.id).in_(ids))))
        marks = chunk_marks(db, chunks)
    return [
        {**h, "text": strip_marks(" ".join(str(h.get("text") or "").split()), marks[h["chunk_id"]])}
        if marks.get(h.get("chunk_id") or "")
        else h
        for h in hits
    ]


def with_continuations(db: Any, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hits, each whose last sentence a page or column break cut given the rest of it from
    the next passage (`library.continuation`): the whole sentence can be quoted."""
    from sqlmodel import col, select

    from bayes_app.library.continuation import continued_chunk, is_cut
    from bayes_app.models import Chunk

    cut = [h["chunk_id"] for h in hits if is_cut(h.get("text") or "")]
    if not cut:
        return hits
    chunks = {c.id: c for c in db.exec(select(Chunk).where(col(Chunk.id).in_(cut)))}
    out = []
    for h in hits:
        c = chunks.get(h["chunk_id"])
        out.append({**h, "text": continued_chunk(db, c)} if c is not None and c.text == h.get("text") else h)
    return out
