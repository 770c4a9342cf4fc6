"""Library retrieval for the agents: hybrid search → numbered passages with their chunks."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import select

from bayes_app.library.continuation import continued_chunk
from bayes_app.library.hyphens import join_broken_words
from bayes_app.library.marks import chunk_marks
from bayes_app.runs.executor import RunContext


def prompt_text(raw: str) -> str:
    """A passage as shown to the model: hyphenation marks joined with the next line (the hyphen
    kept where it belongs to the word, `library.hyphens`),
    whitespace collapsed (so a quote copied from it matches after quote normalisation)."""
    return " ".join(join_broken_words(raw).split())


@dataclass
class Passage:
    n: int
    chunk_id: str
    document_id: str
    title: str
    authors: list[str]
    year: int | None
    page: int
    text: str
    role: str | None = None  # the chunk's role from structure-aware ingestion, when known
    raw: str = ""  # the chunk's text as extracted (line breaks kept)
    lang: str = ""  # ISO 639-1 code of the passage's language ("" = unknown)
    highlighted: bool = False  # the user highlighted it in Zotero: preferred evidence
    marks: dict[str, str] = field(default_factory=dict)  # superscript marks: "ar5iv8" → "ar5iv" (library.marks)

    def to_prompt(self) -> dict[str, Any]:
        return {"n": self.n, "title": self.title, "page": self.page, "text": self.text, "language": self.lang}


def passage_texts(db: Any, chunks: dict[str, Any]) -> dict[str, str]:
    """Each chunk's text by id, a last sentence cut by a page or column break given the rest of
    it from the next chunk (`library.continuation`): the whole sentence can be a claim."""
    return {cid: continued_chunk(db, c) for cid, c in chunks.items()}


def _search(
    sessions: Any,
    owner_id: str,
    query: str,
    k: int,
    collection_ids: list[str] | None = None,
    member_map: str | None = None,
) -> list[Any]:
    from bayes_app.models import Chunk, Mindmap
    from bayes_app.search import runtime
    from bayes_app.sharing.map_documents import member_scope
    from bayes_app.zotero.annotations import highlights_on

    with sessions() as db:
        document_ids = None
        if member_map is not None:  # read at every search: the owner may add or take back papers meanwhile
            m = db.get(Mindmap, member_map)
            document_ids = sorted(member_scope(db, m)) if m is not None else []
        hits = runtime.search_library(db, owner_id, query, k, document_ids=document_ids, collection_ids=collection_ids)
        if not hits:
            return []
        chunks = {c.id: c for c in db.exec(select(Chunk).where(Chunk.id.in_([h.chunk_id for h in hits])))}  # type: ignore[attr-defined]
        texts = passage_texts(db, chunks)
        marks = chunk_marks(db, chunks.values())
        highlighted = highlights_on(
            db, [(h.document_id, h.page, chunks[h.chunk_id].text if h.chunk_id in chunks else h.text) for h in hits]
        )
    found = [
        (
            h,
            texts.get(h.chunk_id, h.text),
            getattr(chunks.get(h.chunk_id), "role", None),
            m is not None,
            marks.get(h.chunk_id, {}),
        )
        for h, m in zip(hits, highlighted)
    ]
    if not any(f[3] for f in found):
        return found
    # the user's highlighted passages are preferred evidence: strong ones first
    return sorted(found, key=lambda f: (bool(getattr(f[0], "weak", False)), not f[3]))


def library_of(ctx: RunContext) -> str:
    """Whose library a map run researches: the map owner's (an editor's run on a shared map is
    charged to the editor, `ctx.run.owner_id`, but reads the owner's papers)."""
    return str(ctx.run.input.get("library_owner") or ctx.run.owner_id)


def member_run(ctx: RunContext) -> bool:
    """The run was started by a member of a shared map, not its owner: it reads only what the
    owner made readable to the map (`sharing.map_documents.member_scope`)."""
    return library_of(ctx) != ctx.run.owner_id


def search_scope(ctx: RunContext) -> tuple[str, list[str] | None]:
    """Whose library a map run searches, and in which collections: a map scoped to a collection
    (`maps.runs.start_map_run`) searches only it, in its owner's library; else the map owner's
    whole library."""
    cid = ctx.run.input.get("collection_id")
    if not cid:
        return library_of(ctx), None
    return str(ctx.run.input.get("search_owner") or library_of(ctx)), [str(cid)]


async def retrieve(
    ctx: RunContext, query: str, k: int = 6, exclude: set[str] | None = None, start: int = 1
) -> list[Passage]:
    """Up to `k` passages of the map owner's library for `query` (a member's run: of what the
    owner made readable to the map), skipping `exclude` chunk ids; numbered from `start`."""
    exclude = exclude or set()
    owner, collection_ids = search_scope(ctx)
    # a scoped map's collection is already what its owner made readable to it
    member = member_run(ctx) and not collection_ids and ctx.run.input.get("mindmap_id")
    member_map = str(ctx.run.input["mindmap_id"]) if member else None
    found = await asyncio.to_thread(_search, ctx.sessions, owner, query, k + len(exclude), collection_ids, member_map)
    out: list[Passage] = []
    for h, raw, role, highlighted, marks in found:
        if h.chunk_id in exclude:
            continue
        out.append(
            Passage(
                start + len(out),
                h.chunk_id,
                h.document_id,
                h.title,
                list(h.authors or []),
                h.year,
                h.page,
                prompt_text(raw),
                role,
                raw,
                h.language,
                highlighted,
                marks,
            )
        )
        if len(out) >= k:
            break
    ctx.check_abort()
    return out
