"""Critic: provenance, support and contradictions.

1. Provenance (always local, never delegated to a model): a claim is rejected unless its quote
   is found — after normalisation (library.quotes) — in the cited chunk AND on that chunk's page,
   the chunk is body text or a caption (not a reference list, author block, header/footer or
   figure text), the sentence quoted is a complete declarative one (not a citation entry,
   figure label, equation or prompt listing: `maps.sentences`), and the claim itself reads as
   a statement. Quotes selected by sentence id (the researcher's provenance by selection) are
   verbatim by construction, so they fail only when the chunk changed; claims with unusable
   ids or echoed instructions are rejected with their reason.
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

from pydantic import BaseModel

from bayes_app.agents import prompts
from bayes_app.agents.llm_json import ask_json, is_offline
from bayes_app.agents.researcher import Claim
from bayes_app.library.quotes import normalize
from bayes_app.library.structure import Span, roles_in
from bayes_app.llm import structured
from bayes_app.maps import sentences as sent
from bayes_app.maps.citations import locate
from bayes_app.maps.support import disagree, label_for, score_support
from bayes_app.models import Chunk, PageText
from bayes_app.runs.executor import RunContext
from bayes_app.zotero.annotations import highlights_on, region_of

# problems of a quoted sentence that no claim survives (fragments and short quotes are fine:
# a model may quote part of a sentence, and a chunk may start mid-sentence)
HARD_PROBLEMS = frozenset(
    {
        "contact_or_affiliation",
        "prompt_listing",
        "reference_entry",
        "question",
        "table_numbers",
        "figure_text",
        "equation_or_numbers",
        "instruction",
        "no_verb",
    }
)

SYSTEM = prompts.CRITIC


class ClaimScore(BaseModel):
    """The critic's judgement of one claim (`claim`: its number in the listing)."""

    claim: int
    support: float
    rewrite: str | None = None


class Contradiction(BaseModel):
    """Two claim numbers that contradict each other."""

    a: int
    b: int


class Verdicts(BaseModel):
    """The critic step's reply."""

    scores: list[ClaimScore]
    contradictions: list[Contradiction]


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


def _quoted_sentences(chunk_text: str, quote: str) -> list[str]:
    """The chunk's sentences the quote overlaps (lies in, covers or runs into)."""
    text = normalize(" ".join(sent.candidate_sentences(chunk_text))).text
    q = normalize(quote).text
    at = text.find(q) if q else -1
    if at < 0:
        return []
    out, pos = [], 0
    for s in sent.candidate_sentences(chunk_text):
        ns = normalize(s).text
        start = text.find(ns, pos)
        if start < 0:
            continue
        pos = start + len(ns)
        if start < at + len(q) and at < pos:
            out.append(s)
    return out


def quote_problem(chunk: Chunk, quote: str, page_roles: set[str] | None = None) -> str | None:
    """Why text of this chunk can't be quoted for a claim, or None. `page_roles`: the roles
    of the page spans the quote covers (structure-aware ingestion), when known."""
    role = getattr(chunk, "role", None)
    if not sent.role_allows_claims(role) or (page_roles and not sent.roles_allow_claims(page_roles)):
        return "not_body_text"
    if sent.looks_like_reference_list(chunk.text):
        return "reference_list"
    for s in _quoted_sentences(chunk.text, quote) or [quote]:
        problem = sent.claim_problem(s)
        if problem in HARD_PROBLEMS:
            return problem
    return None


def claim_text_problem(text: str) -> str | None:
    """A claim must read as a complete statement: not a question, citation entry, listing,
    label or fragment (a missing final full stop is forgiven)."""
    if len(text.split()) < 4:
        return "not_a_statement"
    t = text.strip()
    problem = sent.claim_problem(t if t[-1:] in ".!?" else t + ".")
    return problem if problem in HARD_PROBLEMS | {"fragment"} else None


def verify(sessions: Any, claims: list[Claim]) -> Verdict:
    """Keep the claims whose quote is in the cited chunk on the cited page, quotes body text
    or a caption, and whose wording reads as a statement."""
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
                else:
                    page = db.get(PageText, (chunk.document_id, chunk.page))
                    spans = [Span.from_json(x) for x in (page.spans or [])] if page is not None else []
                    reason = quote_problem(
                        chunk, c.quote, roles_in(spans, *span) if spans else None
                    ) or claim_text_problem(c.text)
            if reason:
                v.rejected.append({"text": c.text, "quote": c.quote, "passage": c.raw_passage, "reason": reason})
                continue
            # no reason: the quote was found in the chunk
            assert chunk is not None
            assert span is not None
            s = score_support(c.text, c.quote)
            cit = {
                "document_id": chunk.document_id,
                "chunk_id": chunk.id,
                "page": chunk.page,
                "quote": c.quote,
                "char_start": span[0],
                "char_end": span[1],
                "agent": c.origin,
                "support_score": s.score,
                "support_label": s.label,
                "suggested_rewrite": s.rewrite,
            }
            if (hl := highlights_on(db, [(chunk.document_id, chunk.page, c.quote)])[0]) is not None:
                cit["region"] = region_of(hl)  # "you highlighted this", at the highlight's rectangles
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


def heuristic_pairs(texts: list[str], first_new: int = 0) -> list[tuple[int, int]]:
    """Contradicting pairs (i < j, j ≥ first_new) by the offline detector (maps.support.disagree)."""
    return [(i, j) for j in range(max(1, first_new), len(texts)) for i in range(j) if disagree(texts[i], texts[j])]


async def judge(ctx: RunContext, checked: list[Checked], context: list[str] | None = None) -> list[tuple[int, int]]:
    """Score support (in place) and return contradicting pairs as indexes into
    `context + [claims]` (context: claims already on the map to compare against)."""
    context = context or []
    texts = context + [c.claim.text for c in checked]
    if len(texts) < 1 or not checked:
        return []
    if is_offline(ctx):
        return await asyncio.to_thread(heuristic_pairs, texts, len(context))
    listing = "\n".join(
        f"{i}. {t}"
        + (
            f'\n   quote: "{checked[i - 1 - len(context)].claim.quote}"'
            if i > len(context)
            else " (already on the map)"
        )
        for i, t in enumerate(texts, 1)
    )
    data = await ask_json(ctx, "critic", SYSTEM, f"ROLE: critic\nClaims:\n{listing}", Verdicts, max_tokens=800)
    if not isinstance(data, dict):
        return await asyncio.to_thread(heuristic_pairs, texts, len(context))
    for s in structured.items_as(ClaimScore, data, "scores"):
        k, score = s.claim - 1 - len(context), s.support
        if 0 <= k < len(checked) and 0 <= score <= 1:
            c = checked[k]
            rewrite = s.rewrite or None
            c.support, c.label, c.rewrite = round(score, 3), label_for(score), rewrite
            c.citation.update(support_score=c.support, support_label=c.label, suggested_rewrite=rewrite, agent="critic")
    if "contradictions" in data:  # the critic decides; the offline detector is only the fallback
        return _pairs(data.get("contradictions"), len(texts))
    return await asyncio.to_thread(heuristic_pairs, texts, len(context))


async def verify_async(ctx: RunContext, claims: list[Claim]) -> Verdict:
    v = await asyncio.to_thread(verify, ctx.sessions, claims)
    if v.rejected:
        ctx.emit("agent", {"role": "critic", "rejected": v.rejected})
    return v
