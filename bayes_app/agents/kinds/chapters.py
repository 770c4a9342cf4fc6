"""The map run kind `chapters`: propose chapters grouping the top-level themes (a preview the
user accepts or rejects)."""

from __future__ import annotations

from bayes_app.agents import regroup
from bayes_app.agents.kinds import common
from bayes_app.agents.kinds.common import RESOURCE
from bayes_app.runs.executor import RunContext
from bayes_app.runs.kinds import RunKind


async def chapters(ctx: RunContext) -> None:
    """Propose chapters grouping the top-level themes (a preview the user accepts or rejects)."""
    loaded, _w = await common.start(ctx)
    await regroup.propose(ctx, loaded, "chapters")


KIND = RunKind("chapters", "Chapters", chapters, RESOURCE, whole_map=True, prompt_budget=4_000, role="planner")
