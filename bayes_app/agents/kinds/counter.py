"""The map run kind `counter`: counter-evidence for a claim, as counterpoint siblings linked by `contradicts`."""

from __future__ import annotations

from bayes_app.agents.kinds import common
from bayes_app.agents.kinds.common import RESOURCE
from bayes_app.agents.pipeline import Research, Written
from bayes_app.runs.executor import RunAborted, RunContext
from bayes_app.runs.kinds import RunKind


async def counter(ctx: RunContext) -> None:
    """Counter-evidence for a claim: contradicting claims become counterpoint siblings
    linked to it by `contradicts`."""
    loaded, w = await common.start(ctx)
    node = loaded["node"]
    if node.parent_id is None:
        raise RunAborted("bad_target")  # the API refuses this; a race only
    r = Research(ctx, w, node.title)
    r.seen_quotes = common.cited(ctx, loaded["map"].id)
    r.seen_chunks = common.cited_chunks(ctx, loaded["map"].id)
    target = [Written(node.id, node.parent_id, node.title)]
    queries = [f"{node.title} not contrary limitations", f"evidence against {node.title}", node.title]
    found = 0
    for pass_no, query in enumerate(queries, 1):
        passages = await r.passages_for(query, k=8)
        ctx.emit("agent", {"role": "researcher", "pass": pass_no, "passages": len(passages)})
        if not passages:
            break
        found += await r.research_aspect(
            node.parent_id,
            f"Evidence against: {node.title}",
            passages,
            context=target,
            only_contradicting=True,
            step="counter",
        )
        if found:
            break
    common.done(ctx, r, "no_counter_evidence", counterpoints=found)


KIND = RunKind(
    "counter",
    "Counter-evidence",
    common.then_split(counter),
    RESOURCE,
    needs_node=True,
    prompt_budget=12_000,
    role="researcher",
)
