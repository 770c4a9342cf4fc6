"""The research pipeline: planner → researchers → critic → writer, at most 3 passes per run.

Pass 1 researches every aspect; an aspect that yielded no verified claim is researched
again with a broader query over passages not seen yet (passes 2 and 3). An aspect still
without a claim then gets the extractive path: sentences of its passages that share terms
with it, quoted verbatim and marked as such on the node (citation agent "extractive"). A
theme that ends with no claim at all is removed: a theme never stays empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bayes_app.agents import critic, planner, researcher
from bayes_app.agents.retrieval import Passage, retrieve
from bayes_app.agents.writer import Writer
from bayes_app.llm.offline import select_sentence_ids
from bayes_app.llm.sentences import sentences_of
from bayes_app.runs.executor import RunContext
from bayes_app.search.sparse import tokens

MAX_PASSES = 3
PASSAGES_PER_ASPECT = 6
EXTRACTIVE_CLAIMS = 3
EXTRACTIVE_NOTE = ("Quoted from the library: the model gave no usable claim for this aspect, so this "
                   "sentence was picked by term overlap and is shown verbatim.")


@dataclass
class Written:
    """A claim on the map the critic compares new claims against."""

    node_id: str
    parent_id: str
    text: str


@dataclass
class Research:
    """State of one run's research: what was seen and written."""

    ctx: RunContext
    writer: Writer
    question: str
    seen_chunks: set[str] = field(default_factory=set)
    seen_quotes: set[tuple[str, str]] = field(default_factory=set)
    claims: list[Written] = field(default_factory=list)
    rejected: int = 0
    accepted: int = 0
    extractive: int = 0
    reasons: dict[str, int] = field(default_factory=dict)  # rejected claims by reason

    async def write_claims(self, parent_id: str, checked: list[critic.Checked], pairs: list[tuple[int, int]],
                           context: list[Written], only_contradicting: bool = False, body: str = "") -> int:
        """Write verified claims under `parent_id`; a claim contradicting one written before
        becomes a counterpoint sibling right after it, linked by `contradicts`."""
        placed: list[Written | None] = list(context)  # a snapshot: self.claims grows below
        base = len(placed)
        written = 0
        for k, c in enumerate(checked):
            idx = base + k
            key = (c.citation["chunk_id"], c.citation["quote"])
            if key in self.seen_quotes:
                placed.append(None)
                continue
            target = next((placed[a] for a, b in pairs if b == idx and a < idx and placed[a] is not None), None)
            if only_contradicting and target is None:
                placed.append(None)
                continue
            self.seen_quotes.add(key)
            if target is not None:
                ev = await self.writer.node(target.parent_id, "counterpoint", c.claim.text,
                                            citations=[c.citation], confidence=c.support,
                                            after_id=target.node_id)
                await self.writer.relation(ev["id"], target.node_id)
            else:
                ev = await self.writer.node(parent_id, "claim", c.claim.text, body, citations=[c.citation],
                                            confidence=c.support)
            w = Written(ev["id"], ev["parent_id"], c.claim.text)
            placed.append(w)
            self.claims.append(w)
            written += 1
        return written

    async def research_aspect(self, parent_id: str, aspect: str, passages: list[Passage],
                              context: list[Written] | None = None, only_contradicting: bool = False,
                              step: str = "researcher") -> int:
        self.seen_chunks.update(p.chunk_id for p in passages)
        claims = await researcher.research(self.ctx, self.question, aspect, passages, step)
        verdict = await critic.verify_async(self.ctx, claims)
        self._count(verdict)
        ctx_claims = list(self.claims if context is None else context)
        pairs = await critic.judge(self.ctx, verdict.accepted, [w.text for w in ctx_claims])
        return await self.write_claims(parent_id, verdict.accepted, pairs, ctx_claims, only_contradicting)

    def _count(self, verdict: critic.Verdict) -> None:
        self.rejected += len(verdict.rejected)
        self.accepted += len(verdict.accepted)
        for x in verdict.rejected:
            self.reasons[x["reason"]] = self.reasons.get(x["reason"], 0) + 1

    async def extract(self, parent_id: str, aspect: planner.Aspect, passages: list[Passage]) -> int:
        """The extractive path for an aspect the model gave nothing usable on: up to
        EXTRACTIVE_CLAIMS sentences of its passages sharing terms with the aspect, verbatim."""
        about = f"{aspect.title} {aspect.query}"
        terms = set(tokens(about))
        by_n = {i: p for i, p in enumerate(passages, 1)}  # passes number from 1 each: renumber
        sentences = [s for i, p in by_n.items() for s in sentences_of(i, p.text)]
        picked = select_sentence_ids(about, sentences, EXTRACTIVE_CLAIMS, min_overlap=1 if len(terms) <= 2 else 2)
        claims = [researcher.Claim(text, text, by_n[int(sid.split(".")[0])], aspect.title, [sid], origin="extractive")
                  for text, sid in picked]
        if not claims:
            return 0
        verdict = await critic.verify_async(self.ctx, claims)
        self._count(verdict)
        n = await self.write_claims(parent_id, verdict.accepted, [], list(self.claims), body=EXTRACTIVE_NOTE)
        self.extractive += n
        return n

    async def passages_for(self, query: str, k: int = PASSAGES_PER_ASPECT) -> list[Passage]:
        return await retrieve(self.ctx, query, k, exclude=self.seen_chunks)

    def summary(self) -> dict[str, Any]:
        return {"claims_accepted": self.accepted, "claims_rejected": self.rejected,
                "claims_extractive": self.extractive, "rejected_by_reason": dict(self.reasons),
                "nodes": len(self.writer.written)}


async def research_aspects(r: Research, parent_id: str, aspects: list[planner.Aspect]) -> int:
    """One theme node per aspect under `parent_id`, then up to MAX_PASSES research passes, the
    extractive path for aspects still without a claim, and the removal of themes left empty.
    Returns the number of themes kept."""
    themes: list[tuple[planner.Aspect, str]] = []
    for a in aspects:
        ev = await r.writer.node(parent_id, "theme", a.title)
        themes.append((a, ev["id"]))
    written = {theme_id: 0 for _, theme_id in themes}
    seen: dict[str, list[Passage]] = {theme_id: [] for _, theme_id in themes}
    pending = themes
    for pass_no in range(1, MAX_PASSES + 1):
        r.ctx.emit("agent", {"role": "researcher", "pass": pass_no, "aspects": [a.title for a, _ in pending]})
        still: list[tuple[planner.Aspect, str]] = []
        for a, theme_id in pending:
            if pass_no == 1 and a.passages:
                passages = a.passages
            else:
                query = a.query if pass_no == 1 else (a.title if pass_no == 2 else f"{r.question} {a.title}")
                passages = await r.passages_for(query)
            seen[theme_id] += passages
            written[theme_id] += await r.research_aspect(theme_id, a.title, passages)
            if written[theme_id] == 0 and passages:
                still.append((a, theme_id))
        pending = still
        if not pending:
            break
    for a, theme_id in themes:
        if written[theme_id] == 0 and seen[theme_id]:
            written[theme_id] += await r.extract(theme_id, a, seen[theme_id])
            r.ctx.emit("agent", {"role": "researcher", "extractive": a.title, "claims": written[theme_id]})
    for a, theme_id in themes:
        if written[theme_id] == 0:
            await r.writer.remove(theme_id)
    return sum(1 for n in written.values() if n)
