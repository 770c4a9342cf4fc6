"""The map run kind `deepen`: more evidence on one node, from passages the map does not cite yet."""

from __future__ import annotations

from bayes_app.agents.kinds import common
from bayes_app.agents.kinds.common import CLAIM_KINDS, RESOURCE
from bayes_app.agents.pipeline import Research, Written
from bayes_app.runs.executor import RunContext
from bayes_app.runs.kinds import RunKind


async def deepen(ctx: RunContext) -> None:
    """More evidence on one node, from passages the map does not cite yet (≤ 3 passes)."""
    loaded, w = await common.start(ctx)
    node = loaded["node"]
    topic = common.path(loaded["nodes"], node)
    focus = " ".join(str(ctx.run.input.get("prompt") or "").split())
    r = Research(ctx, w, topic)
    r.topic = common.topic(loaded["nodes"], node)
    r.seen_chunks = common.cited_chunks(ctx, loaded["map"].id)
    r.seen_quotes = common.cited(ctx, loaded["map"].id)
    existing = [
        Written(n.id, n.parent_id or node.id, n.title)
        for n in loaded["nodes"]
        if n.parent_id == node.id and n.kind in CLAIM_KINDS
    ]
    for pass_no, query in enumerate([f"{focus} {node.title}".strip(), topic, f"{node.title} details evidence"], 1):
        passages = await r.passages_for(query, k=8)
        ctx.emit("agent", {"role": "researcher", "pass": pass_no, "passages": len(passages)})
        if not passages:
            break
        n = await r.research_aspect(node.id, node.title, passages, context=existing + r.claims)
        if n:
            break
    common.done(ctx, r, "no_new_evidence")


KIND = RunKind(
    "deepen",
    "Dive deeper",
    common.then_split(deepen),
    RESOURCE,
    needs_node=True,
    prompt_budget=12_000,
    role="researcher",
)
