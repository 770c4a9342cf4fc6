"""Researcher: for one aspect, claims from the passages, each with a verbatim quote and the
number of the passage it comes from (structured JSON output).

Offline, the claims are chosen here (`agents.extractive`: complete sentences of body text and
captions, ranked by relevance to the aspect and centrality, near-duplicates merged) and the
offline provider writes them out (`extra_body["offline_claims"]`), so the run is billed and
paced like any model call — and a pass that chose nothing makes no call at all."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bayes_app.agents import extractive
from bayes_app.agents.llm_json import ask_json, is_offline
from bayes_app.agents.retrieval import Passage
from bayes_app.llm.offline import format_passages
from bayes_app.runs.executor import RunContext

MAX_CLAIMS = 6
SYSTEM = ("You are a researcher. From the numbered passages, state the claims they make about the "
          "aspect. Every claim needs a quote copied VERBATIM from one passage (a full sentence or a "
          "contiguous part of it) and that passage's number. Answer JSON only: "
          '{"claims": [{"text": "the claim in your words", "quote": "verbatim quote", "passage": 1}]}. '
          "Never invent quotes; skip a claim you cannot quote. A passage may be in another language "
          "(its header says \"in German\", \"in French\", ...): copy its quote in that language, "
          "unchanged, and write the claim in English, naming the passage's language.")


@dataclass
class Claim:
    text: str
    quote: str
    passage: Passage | None
    aspect: str
    raw_passage: object = None  # what the model gave as the passage number


def parse_claims(data: object, passages: list[Passage], aspect: str) -> list[Claim]:
    by_n = {p.n: p for p in passages}
    out: list[Claim] = []
    items = data.get("claims") if isinstance(data, dict) else None
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        quote = " ".join(str(it.get("quote") or "").split())
        text = " ".join(str(it.get("text") or quote).split())
        n = it.get("passage")
        try:
            p = by_n.get(int(n))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            p = None
        if text:
            out.append(Claim(text[:2000], quote, p, aspect, n))
    return out[:MAX_CLAIMS]


def _user_message(question: str, aspect: str, passages: list[Passage]) -> str:
    text = format_passages([p.to_prompt() for p in passages])
    return (f"ROLE: researcher\nASPECT: {aspect}\nResearch question: {question}\n\n"
            f"Passages:\n{text}\n\n{aspect}")


async def research(ctx: RunContext, question: str, aspect: str, passages: list[Passage],
                   step: str = "researcher", *, chosen: list[extractive.Candidate] | None = None,
                   avoid: Sequence[str] = (),
                   keep: Callable[[list[extractive.Candidate]], list[extractive.Candidate]] | None = None,
                   ) -> list[Claim]:
    """Claims about `aspect` from `passages` (unverified: the critic checks them).

    Offline: `chosen` (the planner's picks) or the best sentences for the aspect, minus
    near-duplicates of `avoid`, filtered by `keep` (e.g. only those contradicting a claim)."""
    if not passages:
        return []
    if not is_offline(ctx):
        data = await ask_json(ctx, step, SYSTEM, _user_message(question, aspect, passages))
        return parse_claims(data, passages, aspect)

    def choose() -> list[extractive.Candidate]:
        picks = chosen if chosen is not None else extractive.select_claims(
            f"{aspect} {question}" if aspect != question else question, passages, MAX_CLAIMS, avoid)
        return keep(picks) if keep else picks
    picks = await asyncio.to_thread(choose)
    if not picks:
        return []
    by_chunk = {p.chunk_id: p for p in passages}
    used = [by_chunk.get(c.passage.chunk_id, c.passage) for c in picks]
    prompt_passages = list({p.chunk_id: p for p in used}.values())
    dictate = [{"quote": c.text, "passage": p.n} for c, p in zip(picks, used)]
    data = await ask_json(ctx, step, SYSTEM, _user_message(question, aspect, prompt_passages),
                          extra_body={"offline_claims": dictate})
    return parse_claims(data, prompt_passages, aspect)
