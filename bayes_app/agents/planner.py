"""Planner: split a research question into 3–8 aspects to research.

With a model: JSON `{"aspects": [{"title", "query"}]}` from the question and a first look at
the library. Offline (`agents.extractive.plan`): the claim sentences of the retrieved passages
most relevant to the question are clustered by meaning; each cluster becomes an aspect titled
by its key phrase, with its ranked sentences as the claims to write.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bayes_app.agents import extractive
from bayes_app.agents.llm_json import ask_json, echoes, is_offline
from bayes_app.agents.retrieval import Passage
from bayes_app.llm import structured as st
from bayes_app.llm.offline import format_passages
from bayes_app.runs.executor import RunContext

MIN_ASPECTS, MAX_ASPECTS = 3, 8
SYSTEM = (
    "You are the planner of a research team. Split the user's research question into "
    f"{MIN_ASPECTS} to {MAX_ASPECTS} distinct aspects worth researching in their library. Reply "
    "with a JSON object: key aspects, a list of objects with key title (a few words naming the "
    "aspect) and key query (a search query for it)."
)
SCHEMA = st.obj(aspects=st.array(st.obj(title=st.STRING, query=st.STRING), MIN_ASPECTS, MAX_ASPECTS))


@dataclass
class Aspect:
    title: str
    query: str
    passages: list[Passage] = field(default_factory=list)  # offline: researched as given
    claims: list[extractive.Candidate] | None = None  # offline: the sentences to write


def _clean(items: object, question: str) -> list[Aspect]:
    out: list[Aspect] = []
    seen: set[str] = set()
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        title = " ".join(str(it.get("title") or "").split())[:200]
        query = " ".join(str(it.get("query") or title).split())[:500]
        if title and title.lower() not in seen and not echoes(title, f"{SYSTEM}\n{question}"):
            seen.add(title.lower())
            out.append(Aspect(title, query or question))
    return out[:MAX_ASPECTS]


def offline_aspects(question: str, passages: list[Passage]) -> list[Aspect]:
    """Themes of the passages' claim sentences (see agents.extractive.plan)."""
    return [
        Aspect(title, f"{question} {title}", list({c.passage.chunk_id: c.passage for c in cands}.values()), cands)
        for title, cands in extractive.plan(question, passages)
    ]


async def plan(ctx: RunContext, question: str, passages: list[Passage]) -> list[Aspect]:
    """3–8 aspects of `question` (fewer only when the library has fewer passages)."""
    if is_offline(ctx):
        return await asyncio.to_thread(offline_aspects, question, passages)
    overview = format_passages([p.to_prompt() for p in passages[:10]]) or "(no passages found)"
    data = await ask_json(
        ctx,
        "planner",
        SYSTEM,
        f"ROLE: planner\nQuestion: {question}\n\nA first look at the library:\n{overview}",
        SCHEMA,
        max_tokens=600,
    )
    aspects = _clean((data or {}).get("aspects") if isinstance(data, dict) else None, question)
    if len(aspects) < MIN_ASPECTS:  # a poor plan: complete it from the passages
        have = {a.title.lower() for a in aspects}
        for a in await asyncio.to_thread(offline_aspects, question, passages):
            if len(aspects) >= MIN_ASPECTS:
                break
            if a.title.lower() not in have:
                aspects.append(Aspect(a.title, a.query))
    return aspects
