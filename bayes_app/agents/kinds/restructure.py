"""The map run kind `restructure`: propose a regrouping of the claims into themes (a preview the
user accepts or rejects)."""

from __future__ import annotations

from bayes_app.agents import regroup
from bayes_app.agents.kinds import common
from bayes_app.agents.kinds.common import RESOURCE
from bayes_app.runs.executor import RunContext
from bayes_app.runs.kinds import RunKind


async def restructure(ctx: RunContext) -> None:
    """Propose a regrouping of the claims into themes (a preview the user accepts or rejects)."""
    loaded, _w = await common.start(ctx)
    await regroup.propose(ctx, loaded, "restructure")


KIND = RunKind("restructure", "Restructure", restructure, RESOURCE, whole_map=True, prompt_budget=8_000, role="planner")
