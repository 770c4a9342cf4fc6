"""The map run kind `build_map`: research a question: plan its aspects, research each, write themes and cited claims.
The map's root question is never rewritten: a prompt that differs from it becomes the run's own
question node (a theme under the root) with the research under it."""

from __future__ import annotations

from bayes_app.agents import planner
from bayes_app.agents.kinds import common
from bayes_app.agents.kinds.common import CLAIM_KINDS, RESOURCE
from bayes_app.agents.llm_json import is_offline
from bayes_app.agents.pipeline import Research, research_aspects
from bayes_app.agents.retrieval import retrieve
from bayes_app.maps.edits import MAX_NODE_TITLE
from bayes_app.models import NodeKind
from bayes_app.runs.executor import RunContext
from bayes_app.runs.kinds import RunKind


async def build_map(ctx: RunContext) -> None:
    """Research a question: plan aspects, research each, write themes and cited claims."""
    loaded, w = await common.start(ctx)
    root = loaded["root"]
    question = " ".join(str(ctx.run.input.get("prompt") or "").split()) or root.title
    r = Research(ctx, w, question)
    r.seen_chunks = set()
    # a second run never writes what the map already says: its quotes and its claims are left out
    r.seen_quotes = common.cited(ctx, loaded["map"].id)
    existing = [n.title for n in loaded["nodes"] if n.kind in CLAIM_KINDS]
    first = await retrieve(ctx, question, k=24 if is_offline(ctx) else 10)
    ctx.emit("agent", {"role": "planner", "passages": len(first)})
    if not first:
        raise await common.nothing_to_research(ctx)
    aspects = await planner.plan(ctx, question, first, avoid=existing)
    ctx.emit("agent", {"role": "planner", "aspects": [a.title for a in aspects]})
    # the root question is the map's: a prompt that asks something else becomes the run's own
    # question, a theme under the root (a run never rewrites a node it did not write)
    under = root.id
    if existing and not aspects:  # everything the library says on it is on the map already
        common.done(ctx, r, "no_new_evidence")
        return
    if question != root.title:
        under = (await w.node(root.id, NodeKind.THEME, question[:MAX_NODE_TITLE]))["id"]
    await research_aspects(r, under, aspects)
    if existing and not r.claims:
        common.done(ctx, r, "no_new_evidence")
        return
    common.done(ctx, r, "no_claims")
    common.require_claims(r)


KIND = RunKind("build_map", "Research", common.then_split(build_map), RESOURCE, prompt_budget=40_000, role="planner")
