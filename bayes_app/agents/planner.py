"""Planner: split a research question into 3–8 aspects to research.

With a model: JSON `{"aspects": [{"title", "query"}]}` from the question and a first look at
the library. Offline (`agents.extractive.plan`): the claim sentences of the retrieved passages
most relevant to the question are clustered by meaning; each cluster becomes an aspect titled
by its key phrase, with its ranked sentences as the claims to write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import BaseModel, Field

from bayes_app.agents import extractive, prompts
from bayes_app.agents.llm_json import ask_json, echoes, is_offline
from bayes_app.agents.prompts import MAX_ASPECTS, MIN_ASPECTS
from bayes_app.agents.retrieval import Passage
from bayes_app.llm import structured
from bayes_app.llm.offline import format_passages
from bayes_app.runs.executor import RunContext

SYSTEM = prompts.PLANNER


class PlannedAspect(BaseModel):
    """One aspect of the planner's reply."""

    title: str = ""
    query: str = ""


class Plan(BaseModel):
    """The planner step's reply."""

    aspects: Annotated[list[PlannedAspect], Field(min_length=MIN_ASPECTS, max_length=MAX_ASPECTS)]


@dataclass
class Aspect:
    title: str
    query: str
    passages: list[Passage] = field(default_factory=list)  # offline: researched as given
    claims: list[extractive.Candidate] | None = None  # offline: the sentences to write


def _clean(items: list[PlannedAspect], question: str) -> list[Aspect]:
    out: list[Aspect] = []
    seen: set[str] = set()
    for it in items:
        title = " ".join(it.title.split())[:200]
        query = " ".join((it.query or title).split())[:500]
        if title and title.lower() not in seen and not echoes(title, f"{SYSTEM}\n{question}"):
            seen.add(title.lower())
            out.append(Aspect(title, query or question))
    return out[:MAX_ASPECTS]


def offline_aspects(question: str, passages: list[Passage], avoid: Sequence[str] = ()) -> list[Aspect]:
    """Themes of the passages' claim sentences (see agents.extractive.plan), leaving out
    sentences that repeat a claim in `avoid` (the map's own)."""
    return [
        Aspect(title, f"{question} {title}", list({c.passage.chunk_id: c.passage for c in cands}.values()), cands)
        for title, cands in extractive.plan(question, passages, avoid=avoid)
    ]


async def plan(ctx: RunContext, question: str, passages: list[Passage], avoid: Sequence[str] = ()) -> list[Aspect]:
    """3–8 aspects of `question` (fewer only when the library has fewer passages); offline,
    none of the claims in `avoid` (already on the map) is planned again."""
    if is_offline(ctx):
        return await asyncio.to_thread(offline_aspects, question, passages, avoid)
    overview = format_passages([p.to_prompt() for p in passages[:10]]) or "(no passages found)"
    data = await ask_json(
        ctx,
        "planner",
        SYSTEM,
        f"ROLE: planner\nQuestion: {question}\n\nA first look at the library:\n{overview}",
        Plan,
        max_tokens=600,
    )
    # item by item: a plan shorter than MIN_ASPECTS is completed below, not thrown away
    aspects = _clean(structured.items_as(PlannedAspect, data, "aspects"), question)
    if len(aspects) < MIN_ASPECTS:  # a poor plan: complete it from the passages
        have = {a.title.lower() for a in aspects}
        for a in await asyncio.to_thread(offline_aspects, question, passages, avoid):
            if len(aspects) >= MIN_ASPECTS:
                break
            if a.title.lower() not in have:
                aspects.append(Aspect(a.title, a.query))
    return aspects
