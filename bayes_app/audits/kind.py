"""The run kind `audit`: check every sentence of a draft, with live progress (done/total),
cancellable between sentences; with a model configured the model judges each citation on the
passages the scorer selected (one billed call per cited sentence), offline the scorer decides."""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel

from bayes_app.agents import prompts
from bayes_app.agents.llm_json import ask_json, is_offline
from bayes_app.audits import check, store
from bayes_app.audits.draft import Draft
from bayes_app.audits.judge import CachedEmbed, Judgement
from bayes_app.audits.library import DbLibrary
from bayes_app.audits.resolve import Resolver
from bayes_app.audits.result import SentenceResult, summarize
from bayes_app.llm import structured
from bayes_app.models import Audit
from bayes_app.runs.executor import RunAborted, RunContext
from bayes_app.runs.kinds import RunKind

SAVE_EVERY = 5  # sentences between saves of the findings so far


class CitationVerdict(BaseModel):
    """The model's verdict on one citation, resting on one of its numbered passages."""

    citation: int
    passage: int
    verdict: Literal["supported", "partial", "unsupported", "contradicted"]
    reason: str = ""


class Verdicts(BaseModel):
    items: list[CitationVerdict]


def _listing(claim: str, cands: list[check.Candidates | None]) -> str:
    lines = [f"Claim: {claim}"]
    for i, c in enumerate(cands, 1):
        if c is None or not c.passages:
            continue
        lines.append(f"Citation {i}:")
        lines.extend(f'  {k}. "{p.text}"' for k, p in enumerate(c.passages, 1))
    return "\n".join(lines)


async def _model_verdicts(
    ctx: RunContext, result: SentenceResult, claim: str, cands: list[check.Candidates | None]
) -> None:
    """Replace the scorer's verdicts by the model's where it gave a valid one (same passages)."""
    if not any(c is not None and c.passages for c in cands):
        return
    data = await ask_json(ctx, "critic", prompts.AUDIT_CITATIONS, _listing(claim, cands), Verdicts, max_tokens=400)
    for v in structured.items_as(CitationVerdict, data, "items"):
        i, k = v.citation - 1, v.passage - 1
        if not (0 <= i < len(cands)) or (c := cands[i]) is None or not (0 <= k < len(c.passages)):
            continue
        old = result.citations[i]
        reason = " ".join(v.reason.split())[:300]
        j = Judgement(v.verdict, c.judgements[k].score, reason)
        result.citations[i] = check.verdict_of(
            old.marker, old.reference, old.document_id or "", old.title, c, pick=k, judged=j, judged_by="model"
        )


async def audit(ctx: RunContext) -> None:
    """Check the draft of `ctx.run.input["audit_id"]` sentence by sentence."""
    audit_id = ctx.run.input["audit_id"]

    def load() -> tuple[Draft, str | None]:
        with ctx.sessions() as db:
            a = db.get(Audit, audit_id)
            if a is None:
                raise RunAborted("resource_deleted")
            return Draft.model_validate(a.draft), a.collection_id

    draft, collection_id = await asyncio.to_thread(load)
    embed = CachedEmbed()
    library = await asyncio.to_thread(DbLibrary, ctx.sessions, ctx.run.owner_id, collection_id, embed)
    resolver = Resolver(library.papers())
    offline = is_offline(ctx)
    total = len(draft.sentences)
    results: list[SentenceResult] = []

    def save(done: int) -> None:
        with ctx.sessions() as db:
            dumped = [r.model_dump() for r in results]
            store.save_progress(db, audit_id, done, dumped, summarize(results).model_dump())

    ctx.emit("progress", {"done": 0, "total": total})
    try:
        for s in draft.sentences:
            ctx.check_abort()
            result, cands = await asyncio.to_thread(check.check_sentence, s, draft, resolver, library, embed)
            if not offline:
                from bayes_app.audits.citations import strip_markers

                await _model_verdicts(ctx, result, strip_markers(s.text, s.cites), cands)
            results.append(result)
            done = len(results)
            if done % SAVE_EVERY == 0 or done == total:
                await asyncio.to_thread(save, done)
            else:
                await asyncio.to_thread(_progress_only, ctx, audit_id, done)
            ctx.emit("progress", {"done": done, "total": total})
    finally:
        if len(results) < total:  # stopped early: keep what was checked
            await asyncio.to_thread(save, len(results))
    ctx.emit("agent", {"role": "audit", "done": True, "summary": summarize(results).model_dump()})


def _progress_only(ctx: RunContext, audit_id: str, done: int) -> None:
    with ctx.sessions() as db:
        store.save_progress(db, audit_id, done)


KIND = RunKind(store.KIND, "Check a draft", audit, resource=store.RESOURCE, whole_map=False, role="critic")
