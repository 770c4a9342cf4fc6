"""The map run kind `synthesize`: a synthesis of a node or the whole map, saved as a note node."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from bayes_app.agents import prompts
from bayes_app.agents.kinds import common
from bayes_app.agents.kinds.common import RESOURCE
from bayes_app.agents.llm_json import is_offline, role_model
from bayes_app.llm.types import ChatRequest, StreamEvent, TextDelta
from bayes_app.maps import export, synthesis
from bayes_app.models import Citation, NodeKind, utcnow
from bayes_app.runs.executor import RunContext
from bayes_app.runs.kinds import RunKind


def _copy_citation(c: Citation, k: int) -> dict[str, Any]:
    """A citation's passage, to cite it again on the synthesis note as its `k`-th citation
    (created_at in that order: the note's markers [k] number its citations)."""
    return {
        "document_id": c.document_id,
        "chunk_id": c.chunk_id,
        "page": c.page,
        "quote": c.quote,
        "char_start": c.char_start,
        "char_end": c.char_end,
        "agent": "synthesize",
        "source_title": c.source_title,
        "source_removed_at": c.source_removed_at,
        "source_removed_reason": c.source_removed_reason,
        "created_at": utcnow() + timedelta(microseconds=k),
    }


async def synthesize(ctx: RunContext) -> None:
    """A synthesis of a node or the whole map, streamed as `text` and saved as a note node whose
    markers [k] number its own citations (the export renumbers them by paper). Offline: the
    structured extractive summary (maps.synthesis.offline); with a model: prose over the export
    outline, markers checked against the claims and unmarked sentences dropped."""
    loaded, w = await common.start(ctx)
    node = loaded["node"]
    if is_offline(ctx):

        def summarise() -> synthesis.Summary:
            with ctx.sessions() as db:
                return synthesis.offline(db, loaded["map"].owner_id, loaded["map"].id, node.id)

        summary = await asyncio.to_thread(summarise)
        ctx.emit("text", {"delta": summary.text})
    else:

        def outline() -> export.Outline:
            with ctx.sessions() as db:
                return export.outline(db, loaded["map"].owner_id, loaded["map"].id, node.id)

        o = await asyncio.to_thread(outline)
        parts: list[str] = []

        def on_event(ev: StreamEvent) -> None:
            if isinstance(ev, TextDelta) and ev.text:
                parts.append(ev.text)
                ctx.emit("text", {"delta": ev.text})

        req = ChatRequest(
            model=role_model(ctx, "synthesize"),
            max_tokens=1_500,
            messages=[
                {"role": "system", "content": prompts.SYNTHESIZE},
                {"role": "user", "content": f"ROLE: synthesize\n{o.markdown}"},
            ],
        )
        await ctx.stream_model(req, "synthesize", on_event)
        # markers come from the writer only: one its sentence doesn't match is dropped, and so
        # is a sentence left without any
        summary, dropped, lost = synthesis.from_prose("".join(parts).strip(), o)
        if dropped or lost:
            ctx.emit("agent", {"role": "critic", "dropped_markers": dropped, "dropped_sentences": lost})
    if not summary.text.strip():
        common.done(ctx, None, note="Nothing to synthesise: this part of the map has no claims yet.")
        return
    cits = [_copy_citation(c, k) for k, c in enumerate(summary.citations)]
    await w.node(node.id, NodeKind.NOTE, f"Synthesis: {node.title}"[:300], summary.text, citations=cits)
    common.done(ctx, None)


KIND = RunKind("synthesize", "Synthesize", synthesize, RESOURCE, prompt_budget=10_000, role="writer")
