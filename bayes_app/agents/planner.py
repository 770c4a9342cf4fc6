"""Planner: split a research question into 3–8 aspects to research.

With a model: JSON `{"aspects": [{"title", "query"}]}` from the question and a first look at
the library. Offline: the retrieved passages are clustered by shared terms and each cluster
becomes an aspect titled by its most frequent words (its passages are researched directly).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from bayes_app.agents.llm_json import ask_json, echoes, is_offline
from bayes_app.agents.retrieval import Passage
from bayes_app.llm import structured as st
from bayes_app.llm.offline import format_passages
from bayes_app.runs.executor import RunContext
from bayes_app.search.sparse import STOPWORDS, tokens

MIN_ASPECTS, MAX_ASPECTS = 3, 8
SYSTEM = ("You are the planner of a research team. Split the user's research question into "
          f"{MIN_ASPECTS} to {MAX_ASPECTS} distinct aspects worth researching in their library. Reply "
          "with a JSON object: key aspects, a list of objects with key title (a few words naming the "
          "aspect) and key query (a search query for it).")
SCHEMA = st.obj(aspects=st.array(st.obj(title=st.STRING, query=st.STRING), MIN_ASPECTS, MAX_ASPECTS))
_WORD = re.compile(r"[A-Za-z][A-Za-z-]{3,}")
_GENERIC = frozenset("also however which their there these those been were have from with more most "
                     "than other such into using used based show shows shown paper study results "
                     "table figure section approach method methods data each both between while".split())


@dataclass
class Aspect:
    title: str
    query: str
    passages: list[Passage] = field(default_factory=list)  # offline: researched as given


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


def cluster(passages: list[Passage], threshold: float = 0.12) -> list[list[Passage]]:
    """Greedy clustering by term overlap (Jaccard with the cluster's terms), in rank order."""
    groups: list[tuple[set[str], list[Passage]]] = []
    for p in passages:
        terms = set(tokens(p.text))
        best, best_sim = None, 0.0
        for g in groups:
            sim = len(terms & g[0]) / (len(terms | g[0]) or 1)
            if sim > best_sim:
                best, best_sim = g, sim
        if best is not None and best_sim >= threshold:
            best[0].update(terms)
            best[1].append(p)
        else:
            groups.append((set(terms), [p]))
    return [g[1] for g in groups]


def _title(passages: list[Passage], question: str, taken: set[str]) -> str:
    q = {w.lower() for w in _WORD.findall(question)}
    counts: Counter[str] = Counter()
    for p in passages:
        counts.update(w.lower() for w in _WORD.findall(p.text))
    words = [w for w, _ in counts.most_common(40)
             if w not in q and w not in STOPWORDS and w not in _GENERIC and w not in taken]
    pick = words[:2] or [passages[0].title[:40]]
    taken.update(pick)
    return " and ".join(pick).capitalize()


def offline_aspects(question: str, passages: list[Passage]) -> list[Aspect]:
    groups = cluster(passages)
    if len(groups) < MIN_ASPECTS:  # too few clusters: fall back to single passages
        groups = [[p] for p in passages]
    groups = sorted(groups[:MAX_ASPECTS], key=lambda g: g[0].n)
    taken: set[str] = set()
    return [Aspect(t := _title(g, question, taken), f"{question} {t}", g) for g in groups]


async def plan(ctx: RunContext, question: str, passages: list[Passage]) -> list[Aspect]:
    """3–8 aspects of `question` (fewer only when the library has fewer passages)."""
    if is_offline(ctx):
        return offline_aspects(question, passages)
    overview = format_passages([p.to_prompt() for p in passages[:10]]) or "(no passages found)"
    data = await ask_json(ctx, "planner", SYSTEM,
                          f"ROLE: planner\nQuestion: {question}\n\nA first look at the library:\n{overview}",
                          SCHEMA, max_tokens=600)
    aspects = _clean((data or {}).get("aspects") if isinstance(data, dict) else None, question)
    if len(aspects) < MIN_ASPECTS:  # a poor plan: complete it from the passages
        have = {a.title.lower() for a in aspects}
        for a in offline_aspects(question, passages):
            if len(aspects) >= MIN_ASPECTS:
                break
            if a.title.lower() not in have:
                aspects.append(Aspect(a.title, a.query))
    return aspects
