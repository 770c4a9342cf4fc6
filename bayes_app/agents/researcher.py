"""Researcher: for one aspect, claims from the passages, each with a verbatim quote and the
number of the passage it comes from (structured JSON output; the offline provider answers
the same format with quoted sentences)."""

from __future__ import annotations

from dataclasses import dataclass

from bayes_app.agents.llm_json import ask_json
from bayes_app.agents.retrieval import Passage
from bayes_app.llm.offline import format_passages
from bayes_app.runs.executor import RunContext

MAX_CLAIMS = 6
SYSTEM = ("You are a researcher. From the numbered passages, state the claims they make about the "
          "aspect. Every claim needs a quote copied VERBATIM from one passage (a full sentence or a "
          "contiguous part of it) and that passage's number. Answer JSON only: "
          '{"claims": [{"text": "the claim in your words", "quote": "verbatim quote", "passage": 1}]}. '
          "Never invent quotes; skip a claim you cannot quote.")


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


async def research(ctx: RunContext, question: str, aspect: str, passages: list[Passage],
                   step: str = "researcher") -> list[Claim]:
    """Claims about `aspect` from `passages` (unverified: the critic checks them)."""
    if not passages:
        return []
    text = format_passages([p.to_prompt() for p in passages])
    user = (f"ROLE: researcher\nASPECT: {aspect}\nResearch question: {question}\n\n"
            f"Passages:\n{text}\n\n{aspect}")
    data = await ask_json(ctx, step, SYSTEM, user)
    return parse_claims(data, passages, aspect)
