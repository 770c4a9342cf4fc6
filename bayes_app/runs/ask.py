"""The "ask" run kind (minimal): search the user's library, send the citations, then
stream the model's answer from the numbered passages.

The full Ask agent (tools, two phases, conversations) replaces the body later; the
contract stays: `metadata` (citations) before the first `text` token.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlmodel import select

from bayes_app.llm.offline import format_passages
from bayes_app.llm.types import ChatRequest, ReasoningDelta, StreamEvent, TextDelta
from bayes_app.runs.executor import RunContext, run_kind

log = logging.getLogger("bayes.runs.ask")
TOP_K = 7
MAX_TOKENS = 1_000
SYSTEM = ("You answer questions from the user's research library. Use only the numbered "
          "passages given; cite them as [n]. If they do not answer the question, say so.")


def search_library(sessions: Any, owner_id: str, query: str, scope: dict[str, Any] | None) -> list[dict]:
    """Top passages of the owner's library as citations (empty without documents)."""
    from bayes_app.models import Document
    from bayes_app.search import runtime
    from bayes_app.search.hybrid import search

    scope = scope or {}
    with sessions() as db:
        if db.exec(select(Document.id).where(Document.owner_id == owner_id)).first() is None:
            return []
        hits = search(db, runtime.index(), runtime.embedder(), owner_id, query, k=TOP_K,
                      document_ids=scope.get("document_ids") or None,
                      collection_ids=scope.get("collection_ids") or None)
    return [{"n": i, "document_id": h.document_id, "chunk_id": h.chunk_id, "title": h.title,
             "page": h.page, "char_start": h.char_start, "char_end": h.char_end,
             "text": h.text, "score": round(h.score, 6)} for i, h in enumerate(hits, 1)]


def build_request(model: str, prompt: str, citations: list[dict]) -> ChatRequest:
    passages = format_passages(citations) if citations else "(no passages found)"
    user = f"Passages:\n{passages}\n\nQuestion: {prompt}"
    return ChatRequest(model=model, messages=[{"role": "system", "content": SYSTEM},
                                              {"role": "user", "content": user}],
                       max_tokens=MAX_TOKENS)


@run_kind("ask")
async def ask(ctx: RunContext) -> None:
    import asyncio

    prompt = str(ctx.run.input.get("prompt", ""))
    try:
        citations = await asyncio.to_thread(search_library, ctx.sessions, ctx.run.owner_id,
                                            prompt, ctx.run.input.get("scope"))
        note = None
    except Exception as err:  # noqa: BLE001 - an index outage should not lose the answer
        log.warning("run %s: library search failed: %s", ctx.run.id, err)
        citations, note = [], "search_unavailable"
    ctx.check_abort()
    ctx.emit("metadata", {"citations": citations, **({"note": note} if note else {})})

    def on_event(ev: StreamEvent) -> None:
        if isinstance(ev, TextDelta) and ev.text:
            ctx.emit("text", {"delta": ev.text})
        elif isinstance(ev, ReasoningDelta) and ev.text:
            ctx.emit("thinking", {"delta": ev.text})

    await ctx.stream_model(build_request(ctx.run.model, prompt, citations), "answer", on_event)
