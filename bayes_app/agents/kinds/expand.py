"""The map run kind `expand`: sub-aspects of a node, each researched, as the node's children."""

from __future__ import annotations

from bayes_app.agents import planner
from bayes_app.agents.kinds import common
from bayes_app.agents.kinds.common import NO_PASSAGES, RESOURCE
from bayes_app.agents.llm_json import is_offline
from bayes_app.agents.pipeline import Research, research_aspects
from bayes_app.agents.retrieval import retrieve
from bayes_app.runs.executor import RunContext, RunFailed
from bayes_app.runs.kinds import RunKind


async def expand(ctx: RunContext) -> None:
    """Sub-aspects of a node, each researched, as children of the node."""
    loaded, w = await common.start(ctx)
    node = loaded["node"]
    topic = " ".join(str(ctx.run.input.get("prompt") or "").split()) or common.path(loaded["nodes"], node)
    r = Research(ctx, w, topic)
    r.topic = common.topic(loaded["nodes"], node)
    r.seen_quotes = common.cited(ctx, loaded["map"].id)
    first = await retrieve(ctx, topic, k=16 if is_offline(ctx) else 10)
    if not first:
        raise RunFailed(NO_PASSAGES, "The library has no passages on this topic.")
    aspects = (await planner.plan(ctx, topic, first))[:4]
    ctx.emit("agent", {"role": "planner", "aspects": [a.title for a in aspects]})
    await research_aspects(r, node.id, aspects)
    common.done(ctx, r, "no_new_evidence")
    if not r.seen_quotes:  # a map that cites nothing yet: nothing usable is a failure, as for Research
        common.require_claims(r)
    # otherwise what the library says on the node may all be on the map already: a success that
    # says so ("No new evidence found in your library."), as a second Research run does


KIND = RunKind(
    "expand", "Expand", common.then_split(expand), RESOURCE, needs_node=True, prompt_budget=20_000, role="planner"
)
