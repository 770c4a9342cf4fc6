"""Researcher: for one aspect, claims from the passages, each selecting the sentences that
state it by id (provenance by selection: the passages are shown with numbered sentences and
the quote is taken from the ids, so it is verbatim by construction — `bayes_app.llm.sentences`).

The schema constrains the ids to those shown where the endpoint supports it. A reply that
copies a quote instead (`quote` + `passage`) is still read; the critic checks such quotes.
Claims whose wording is not words, repeats the instructions (a weak model echoing them) or
shares nothing with its quote are rejected with that reason.

Offline, the claims are chosen here (`agents.extractive`: complete sentences of body text and
captions, ranked by relevance to the aspect and centrality, near-duplicates merged) and the
offline provider writes them out (`extra_body["offline_claims"]`), so the run is billed and
paced like any model call — and a pass that chose nothing makes no call at all.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, Field, create_model

from bayes_app.agents import extractive, prompts
from bayes_app.agents.llm_json import ask_json, echoes, is_offline
from bayes_app.agents.retrieval import Passage
from bayes_app.llm import relevance
from bayes_app.llm import structured as st
from bayes_app.llm.offline import format_passages
from bayes_app.llm.sentences import Sentence, format_numbered, select, sentences_of
from bayes_app.runs.executor import RunContext
from bayes_app.search.crosslang import foreign_label
from bayes_app.search.sparse import tokens

RANKED_IDS = 8  # sentence ids listed for a model, best first
RANKED_NOTE = "The sentences that best answer the research question, best first:"
MIN_CLAIMS, MAX_CLAIMS = 2, 6  # per aspect: a small model's easy way out is one claim or none
MAX_TOKENS = 900
SYSTEM = prompts.RESEARCHER


def _header(p: Passage) -> str:
    """`title, p. 7` — with `; in German` for a passage in another language than English."""
    name = foreign_label(p.lang)
    return (
        f"{p.title}, p. {p.page}"
        + (f"; in {name}" if name else "")
        + ("; you highlighted this" if p.highlighted else "")
    )


def claims_model(ids: list[str]) -> type[BaseModel]:
    """The researcher step's reply: claims selecting sentences by id. The ids are limited to
    those shown (the model is built per call), and a small model cannot answer with a single
    claim or none (its easy way out) or an endless list."""
    sentence_id: Any = Literal[tuple(ids)] if ids else str
    claim = create_model(
        "ResearchedClaim",
        text=(str, ...),
        sentences=(Annotated[list[sentence_id], Field(min_length=1, max_length=3)], ...),
    )
    return create_model(
        "ResearchedClaims", claims=(Annotated[list[claim], Field(min_length=MIN_CLAIMS, max_length=MAX_CLAIMS)], ...)
    )


def claims_schema(ids: list[str]) -> dict[str, Any]:
    """The JSON schema of `claims_model(ids)` (strict: see `llm.structured.schema_of`)."""
    return st.schema_of(claims_model(ids))


@dataclass
class Claim:
    text: str
    quote: str
    passage: Passage | None
    aspect: str
    raw_passage: object = None  # what the model gave: sentence ids, or a passage number
    problem: str | None = None  # why the claim is unusable before any check (see critic.verify)
    origin: str = "researcher"  # "extractive": picked by the system when the model gave nothing


_LETTERS = re.compile(r"[^\W\d_]{2,}")


def wording_problem(text: str, quote: str, instructions: str) -> str | None:
    """Why a claim's wording is unusable: not words (ids, numbers), a piece of the
    instructions, or nothing in common with the quote it selected."""
    if len(_LETTERS.findall(text)) < 2:
        return "no_wording"
    if echoes(text, instructions):
        return "echoed_instructions"
    if quote and not set(tokens(text)) & set(tokens(quote)):
        return "wording_not_in_quote"
    return None


def numbered(passages: list[Passage]) -> tuple[str, dict[int, list[Sentence]]]:
    """The passages with numbered sentences, and the sentences per passage number."""
    by_passage = {p.n: sentences_of(p.n, p.text) for p in passages}
    text = format_numbered((p.n, _header(p), p.text) for p in passages)
    return text, by_passage


def parse_claims(
    data: object,
    passages: list[Passage],
    aspect: str,
    by_passage: dict[int, list[Sentence]] | None = None,
    instructions: str = SYSTEM,
) -> list[Claim]:
    by_n = {p.n: p for p in passages}
    by_passage = by_passage if by_passage is not None else {p.n: sentences_of(p.n, p.text) for p in passages}
    out: list[Claim] = []
    items = data.get("claims") if isinstance(data, dict) else None
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, dict):
            continue
        text = " ".join(str(it.get("text") or "").split())
        if "sentences" in it or "quote" not in it:
            sel = select(it.get("sentences"), by_passage, text)
            claim = Claim(
                text or sel.quote,
                sel.quote,
                by_n.get(sel.passage) if sel.passage else None,
                aspect,
                it.get("sentences"),
                sel.problem,
            )
        else:  # a copied quote (a model ignoring the ids): the critic checks it
            quote = " ".join(str(it.get("quote") or "").split())
            n = it.get("passage")
            try:
                p = by_n.get(int(n))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                p = None
            claim = Claim(text or quote, quote, p, aspect, n)
        if not claim.text and not claim.problem:
            continue
        if claim.problem is None:
            claim.problem = wording_problem(claim.text, claim.quote, instructions)
        claim.text = claim.text[:2000]
        out.append(claim)
    return out[:MAX_CLAIMS]


def ranked_ids(
    question: str, by_passage: dict[int, list[Sentence]], embed: Callable | None = None, limit: int = RANKED_IDS
) -> list[str]:
    """The ids of the `limit` sentences that best answer what `question` asks, best first (the
    learned relevance model offline claims are chosen by, `llm.relevance`)."""
    sentences = [s for ss in by_passage.values() for s in ss]
    if not sentences:
        return []
    texts = [s.text for s in sentences]
    scores = relevance.score(
        question,
        texts,
        relevance.passage_keys([s.passage for s in sentences], texts),
        [s.index for s in sentences],
        embed=embed,
    )
    return [sentences[int(i)].id for i in np.argsort(-scores, kind="stable")[:limit]]


def model_message(question: str, aspect: str, text: str, ranked: list[str]) -> str:
    """The researcher's user message with a model: the numbered passages, then the sentence ids
    ranked for the question (a small model reads the answer-bearing ones first)."""
    best = f"{RANKED_NOTE} {', '.join(ranked)}\n\n" if ranked else ""
    return (
        f"ROLE: researcher\nASPECT: {aspect}\nResearch question: {question}\n\n"
        f"Passages:\n{text}\n\n{best}Claims about: {aspect}"
    )


def _user_message(question: str, aspect: str, passages: list[Passage]) -> str:
    text = format_passages([p.to_prompt() for p in passages])
    return f"ROLE: researcher\nASPECT: {aspect}\nResearch question: {question}\n\nPassages:\n{text}\n\n{aspect}"


async def research(
    ctx: RunContext,
    question: str,
    aspect: str,
    passages: list[Passage],
    step: str = "researcher",
    *,
    chosen: list[extractive.Candidate] | None = None,
    avoid: Sequence[str] = (),
    keep: Callable[[list[extractive.Candidate]], list[extractive.Candidate]] | None = None,
) -> list[Claim]:
    """Claims about `aspect` from `passages` (unverified: the critic checks them).

    Offline: `chosen` (the planner's picks) or the best sentences for the aspect, minus
    near-duplicates of `avoid`, filtered by `keep` (e.g. only those contradicting a claim)."""
    if not passages:
        return []
    if not is_offline(ctx):
        text, by_passage = numbered(passages)
        ids = [s.id for ss in by_passage.values() for s in ss]
        ranked = await asyncio.to_thread(ranked_ids, question, by_passage)
        user = model_message(question, aspect, text, ranked)
        data = await ask_json(ctx, step, SYSTEM, user, claims_schema(ids), max_tokens=MAX_TOKENS)
        # wording that repeats the instructions, the aspect or the question is an echo, not a claim
        return parse_claims(data, passages, aspect, by_passage, f"{SYSTEM}\n{aspect}\n{question}")

    def choose() -> list[extractive.Candidate]:
        picks = (
            chosen
            if chosen is not None
            else extractive.on_question(
                question,
                extractive.select_claims(
                    f"{aspect} {question}" if aspect != question else question, passages, MAX_CLAIMS, avoid
                ),
            )
        )
        return keep(picks) if keep else picks

    picks = await asyncio.to_thread(choose)
    if not picks:
        return []
    by_chunk = {p.chunk_id: p for p in passages}
    used = [by_chunk.get(c.passage.chunk_id, c.passage) for c in picks]
    prompt_passages = list({p.chunk_id: p for p in used}.values())
    dictate = [{"quote": c.text, "text": c.extra.get("wording") or c.text, "passage": p.n} for c, p in zip(picks, used)]
    data = await ask_json(
        ctx,
        step,
        SYSTEM,
        _user_message(question, aspect, prompt_passages),
        claims_schema([]),
        extra_body={"offline_claims": dictate},
    )
    return parse_claims(data, prompt_passages, aspect)
