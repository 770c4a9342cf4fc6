"""Critic: provenance, support and contradictions.

1. Provenance (always local, never delegated to a model): a claim is rejected unless its quote
   is found — after normalisation (library.quotes) — in the cited chunk AND on that chunk's page.
   Quotes come from the sentence ids the researcher selected, so they pass unless the chunk
   changed; claims with unusable ids or echoed instructions are rejected with their reason.
2. Support: each accepted claim gets a support score/label (and a rewrite when it overstates);
   the model's judgement when it gives one, else the extractive scorer (maps.support).
3. Contradictions: pairs of claims that disagree — the model's list when it gives one, else
   strong disagreement cues (negation, antonyms) on a shared topic. They become sibling
   counterpoint nodes linked by `contradicts`, never merged.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from bayes_app.agents.llm_json import ask_json, is_offline
from bayes_app.agents.researcher import Claim
from bayes_app.llm import structured as st
from bayes_app.maps.citations import locate
from bayes_app.maps.support import disagree, label_for, score_support
from bayes_app.models import Chunk
from bayes_app.runs.executor import RunContext

SYSTEM = ("You are the critic of a research team. For each numbered claim judge how well its quote "
          "supports it, from 0 (not at all) to 1 (fully), and give a more faithful wording when the "
          "claim overstates its quote (null otherwise). Then list the pairs of claims that contradict "
          "each other (none is a fine answer). Reply with a JSON object: key scores, a list of objects "
          "with keys claim (its number), support and rewrite; key contradictions, a list of objects "
          "with keys a and b (two claim numbers).")
SCHEMA = st.obj(scores=st.array(st.obj(claim=st.INTEGER, support=st.NUMBER, rewrite=st.nullable(st.STRING))),
                contradictions=st.array(st.obj(a=st.INTEGER, b=st.INTEGER)))


@dataclass
class Checked:
    claim: Claim
    citation: dict[str, Any]  # ready for maps.service.write_agent_node
    support: float
    label: str
    rewrite: str | None


@dataclass
class Verdict:
    accepted: list[Checked] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)


def verify(sessions: Any, claims: list[Claim]) -> Verdict:
    """Keep the claims whose quote is in the cited chunk on the cited page."""
    v = Verdict()
    with sessions() as db:
        for c in claims:
            reason = None
            chunk = db.get(Chunk, c.passage.chunk_id) if c.passage else None
            span = None
            if c.problem:
                reason = c.problem
            elif c.passage is None:
                reason = "unknown_passage"
            elif not c.quote:
                reason = "empty_quote"
            elif chunk is None or chunk.page != c.passage.page:
                reason = "passage_gone"
            else:
                span = locate(db, chunk, c.quote)
                if span is None:
                    reason = "quote_not_in_passage"
            if reason:
                v.rejected.append({"text": c.text, "quote": c.quote, "passage": c.raw_passage,
                                   "reason": reason})
                continue
            s = score_support(c.text, c.quote)
            cit = {"document_id": chunk.document_id, "chunk_id": chunk.id, "page": chunk.page,
                   "quote": c.quote, "char_start": span[0], "char_end": span[1], "agent": c.origin,
                   "support_score": s.score, "support_label": s.label, "suggested_rewrite": s.rewrite}
            v.accepted.append(Checked(c, cit, s.score, s.label, s.rewrite))
    return v


def _pairs(raw: object, n: int) -> list[tuple[int, int]]:
    out = []
    for p in raw if isinstance(raw, list) else []:
        if isinstance(p, dict):
            p = [p.get("a"), p.get("b")]
        if isinstance(p, (list, tuple)) and len(p) == 2:
            try:
                a, b = int(p[0]) - 1, int(p[1]) - 1
            except (TypeError, ValueError):
                continue
            if 0 <= a < n and 0 <= b < n and a != b:
                out.append((min(a, b), max(a, b)))
    return sorted(set(out))


def heuristic_pairs(texts: list[str]) -> list[tuple[int, int]]:
    return [(i, j) for i in range(len(texts)) for j in range(i + 1, len(texts)) if disagree(texts[i], texts[j])]


async def judge(ctx: RunContext, checked: list[Checked], context: list[str] | None = None) -> list[tuple[int, int]]:
    """Score support (in place) and return contradicting pairs as indexes into
    `context + [claims]` (context: claims already on the map to compare against)."""
    context = context or []
    texts = context + [c.claim.text for c in checked]
    if len(texts) < 1 or not checked:
        return []
    if is_offline(ctx):
        return heuristic_pairs(texts)
    listing = "\n".join(f"{i}. {t}" + (f'\n   quote: "{checked[i - 1 - len(context)].claim.quote}"'
                                       if i > len(context) else " (already on the map)")
                        for i, t in enumerate(texts, 1))
    data = await ask_json(ctx, "critic", SYSTEM, f"ROLE: critic\nClaims:\n{listing}", SCHEMA, max_tokens=800)
    if not isinstance(data, dict):
        return heuristic_pairs(texts)
    for s in data.get("scores") or []:
        try:
            k = int(s.get("claim")) - 1 - len(context)
            score = float(s.get("support"))
        except (AttributeError, TypeError, ValueError):
            continue
        if 0 <= k < len(checked) and 0 <= score <= 1:
            c = checked[k]
            rewrite = s.get("rewrite") if isinstance(s.get("rewrite"), str) and s.get("rewrite") else None
            c.support, c.label, c.rewrite = round(score, 3), label_for(score), rewrite
            c.citation.update(support_score=c.support, support_label=c.label, suggested_rewrite=rewrite,
                              agent="critic")
    if "contradictions" in data:
        return _pairs(data.get("contradictions"), len(texts))
    return heuristic_pairs(texts)


async def verify_async(ctx: RunContext, claims: list[Claim]) -> Verdict:
    v = await asyncio.to_thread(verify, ctx.sessions, claims)
    if v.rejected:
        ctx.emit("agent", {"role": "critic", "rejected": v.rejected})
    return v
