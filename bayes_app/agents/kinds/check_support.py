"""The map run kind `check_support`: the model judges how well each of a node's quotes supports
its wording."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel
from sqlmodel import select

from bayes_app.agents import prompts
from bayes_app.agents.kinds import common
from bayes_app.agents.kinds.common import RESOURCE
from bayes_app.agents.llm_json import ask_json, is_offline
from bayes_app.llm import structured
from bayes_app.models import Citation
from bayes_app.runs.executor import RunAborted, RunContext
from bayes_app.runs.kinds import RunKind


class QuoteScore(BaseModel):
    """The model's judgement of one quote (`quote`: its number in the listing)."""

    quote: int
    support: float
    rewrite: str | None = None
    reason: str = ""


class Scores(BaseModel):
    """The check_support step's reply."""

    scores: list[QuoteScore]


async def check_support(ctx: RunContext) -> None:
    """The model judges how well each of a node's quotes supports its wording (one billed call);
    quotes the reply leaves out keep the instant offline score."""
    from bayes_app.maps import citations as cit
    from bayes_app.maps.support import score_support

    loaded, _w = await common.start(ctx)
    node = loaded["node"]
    with ctx.sessions() as db:
        cits = list(db.exec(select(Citation).where(Citation.node_id == node.id)))
    wording = cit.wording(node)
    if not cits or not wording:
        raise RunAborted("bad_target")
    listing = "\n".join(f'{i}. "{" ".join(c.quote.split())}"' for i, c in enumerate(cits, 1))
    data = {}
    if not is_offline(ctx):
        data = await ask_json(
            ctx,
            "check_support",
            prompts.CHECK_SUPPORT,
            f"ROLE: check_support\nClaim: {wording}\nQuotes:\n{listing}",
            Scores,
            max_tokens=600,
        )
    judged: dict[int, tuple[float, str | None]] = {}
    for s in structured.items_as(QuoteScore, data, "scores"):
        k, score = s.quote - 1, s.support
        rewrite = s.rewrite if s.rewrite and s.rewrite.strip() else None
        if 0 <= k < len(cits) and 0 <= score <= 1:
            judged[k] = (score, " ".join(rewrite.split())[:2000] if rewrite else None)
    out = []
    for k, c in enumerate(cits):
        if k in judged:
            score, rewrite, agent = *judged[k], "critic"
        else:  # the model skipped it (or there is no model): the instant scorer
            r = await asyncio.to_thread(score_support, wording, c.quote)
            score, rewrite, agent = r.score, r.rewrite, "support"

        def write(cid: str = c.id, sc: float = score, rw: str | None = rewrite, ag: str = agent) -> Any:
            with ctx.sessions() as db:
                return cit.set_support(db, loaded["map"].id, cid, sc, rw, ag)

        row = await asyncio.to_thread(write)
        if row is not None:
            out.append(
                {
                    "citation_id": row.id,
                    "support_score": row.support_score,
                    "support_label": row.support_label,
                    "suggested_rewrite": row.suggested_rewrite,
                    "judged_by": "model" if k in judged else "offline",
                }
            )
    ctx.emit(
        "node",
        {
            "id": node.id,
            "map_id": loaded["map"].id,
            "updated": True,
            "run_id": ctx.run.id,
            "support": min((x["support_score"] for x in out), default=None),
        },
    )
    ctx.emit("agent", {"role": "critic", "done": True, "checked": out})


KIND = RunKind(
    "check_support", "Check support", check_support, RESOURCE, needs_node=True, prompt_budget=4_000, role="critic"
)
