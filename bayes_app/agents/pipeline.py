"""The research pipeline: planner → researchers → critic → writer, at most 3 passes per run.

Pass 1 researches every aspect; an aspect that yielded no verified claim is researched
again with a broader query over passages not seen yet (passes 2 and 3). A theme node is
written with its first claim, so no theme stays empty. A verified claim that repeats one
already on the map (or earlier in the run) is merged into it: its citation is added to that
node instead of a second node (`extractive.duplicate_of`). With a model, an aspect still
without a claim after the passes gets the extractive path: sentences of its passages that
share terms with it, quoted verbatim and marked as such on the node (citation agent
"extractive"); offline research is extractive throughout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from bayes_app.agents import critic, extractive, planner, researcher, themes
from bayes_app.agents.extractive import Candidate
from bayes_app.agents.llm_json import is_offline
from bayes_app.agents.retrieval import Passage, retrieve
from bayes_app.agents.writer import Writer
from bayes_app.llm.offline import select_sentence_ids
from bayes_app.llm.sentences import sentences_of
from bayes_app.maps import sentences as sent
from bayes_app.maps.support import disagree
from bayes_app.runs.executor import RunContext
from bayes_app.search.sparse import tokens

MAX_PASSES = 3
PASSAGES_PER_ASPECT = 6
EXTRACTIVE_CLAIMS = 3
EXTRACTIVE_NOTE = (
    "Quoted from the library: the model gave no usable claim for this aspect, so this "
    "sentence was picked by term overlap and is shown verbatim."
)


@dataclass
class Written:
    """A claim on the map the critic compares new claims against."""

    node_id: str
    parent_id: str
    text: str


class Theme:
    """A theme node written when its first claim is (never an empty theme)."""

    def __init__(self, writer: Writer, parent_id: str, title: str) -> None:
        self.writer, self.parent_id, self.title = writer, parent_id, title
        self.node_id: str | None = None

    async def id(self) -> str:
        if self.node_id is None:
            ev = await self.writer.node(self.parent_id, "theme", self.title)
            self.node_id = ev["id"]
        return self.node_id


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
    merged: int = 0
    extractive: int = 0
    reasons: dict[str, int] = field(default_factory=dict)  # rejected claims by reason
    # Expand / Dive deeper: (the node's wording and claims, every other theme's): claims not
    # about the node are left out (themes.on_topic)
    topic: tuple[list[str], list[list[str]]] | None = None

    async def write_claims(
        self,
        parent: str | Theme,
        checked: list[critic.Checked],
        pairs: list[tuple[int, int]],
        context: list[Written],
        only_contradicting: bool = False,
        body: str = "",
    ) -> int:
        """Write verified claims under `parent`; a claim contradicting one written before
        becomes a counterpoint sibling right after it, linked by `contradicts`; a claim that
        repeats one written before is merged into it."""
        placed: list[Written | None] = list(context)  # a snapshot: self.claims grows below
        base = len(placed)
        earlier = list({w.node_id: w for w in [*context, *self.claims]}.values())
        dup_of = await asyncio.to_thread(
            extractive.duplicate_of, [c.claim.text for c in checked], [w.text for w in earlier]
        )
        batch: list[Written | None] = []
        written = 0
        merged: list[dict[str, Any]] = []
        for k, c in enumerate(checked):
            idx = base + k
            key = (c.citation["chunk_id"], c.citation["quote"])
            target = next((placed[a] for a, b in pairs if b == idx and a < idx and placed[a] is not None), None)
            if key in self.seen_quotes or (only_contradicting and target is None):
                placed.append(None)
                batch.append(None)
                continue
            d = dup_of[k]
            same = (earlier[d] if d < len(earlier) else batch[d - len(earlier)]) if d is not None else None
            if same is not None and target is None:
                self.seen_quotes.add(key)
                await self.writer.cite(same.node_id, [c.citation])
                merged.append({"text": c.claim.text, "into": same.node_id})
                placed.append(same)
                batch.append(None)
                continue
            self.seen_quotes.add(key)
            if await self.writer.refused([c.citation]):  # a member's run: a paper not readable to the map
                await self._divert(parent, target, c)
                placed.append(None)
                batch.append(None)
                continue
            ev = await self._write_claim(parent, target, c, body)
            if ev["id"] is None:  # kept for the owner's decision
                placed.append(None)
                batch.append(None)
                continue
            w = Written(ev["id"], ev["parent_id"], c.claim.text)
            placed.append(w)
            batch.append(w)
            self.claims.append(w)
            written += 1
        if merged:
            self.merged += len(merged)
            self.ctx.emit("agent", {"role": "critic", "merged": merged})
        return written

    async def _divert(self, parent: str | Theme, target: Written | None, c: critic.Checked) -> None:
        """A claim citing a paper the map's readers cannot open: set aside for the owner."""
        theme = parent if isinstance(parent, Theme) else None
        await self.writer.divert(
            c.claim.text,
            [c.citation],
            parent_id=target.parent_id if target else (theme.node_id if theme else str(parent)),
            theme_title=theme.title if theme is not None and theme.node_id is None and not target else None,
            kind="counterpoint" if target else "claim",
            confidence=c.support,
        )

    async def _write_claim(
        self, parent: str | Theme, target: Written | None, c: critic.Checked, body: str
    ) -> dict[str, Any]:
        """A claim under `parent`, or a counterpoint right after the claim it contradicts (`target`)."""
        if target is not None:
            ev = await self.writer.node(
                target.parent_id,
                "counterpoint",
                c.claim.text,
                citations=[c.citation],
                confidence=c.support,
                after_id=target.node_id,
            )
            if ev["id"] is not None:
                await self.writer.relation(ev["id"], target.node_id)
            return ev
        parent_id = await parent.id() if isinstance(parent, Theme) else parent
        return await self.writer.node(
            parent_id, "claim", c.claim.text, body, citations=[c.citation], confidence=c.support
        )

    async def research_aspect(
        self,
        parent: str | Theme,
        aspect: str,
        passages: list[Passage],
        context: list[Written] | None = None,
        only_contradicting: bool = False,
        step: str = "researcher",
        chosen: list[Candidate] | None = None,
        keep: Callable[[list[Candidate]], list[Candidate]] | None = None,
    ) -> int:
        self.seen_chunks.update(p.chunk_id for p in passages)
        ctx_claims = list(self.claims if context is None else context)
        if only_contradicting and is_offline(self.ctx):
            targets = [w.text for w in ctx_claims]

            def contradicting(cands: list[Candidate]) -> list[Candidate]:
                # offline, only sentences that contradict the claim are written out at all
                return [c for c in cands if any(disagree(t, c.text) for t in targets)]

            keep = contradicting

        claims = await researcher.research(
            self.ctx,
            self.question,
            aspect,
            passages,
            step,
            chosen=chosen,
            avoid=[w.text for w in [*ctx_claims, *self.claims]],
            keep=keep,
        )
        if not claims:
            return 0
        verdict = await critic.verify_async(self.ctx, claims)
        await self._off_topic(verdict)
        self._count(verdict)
        pairs = await critic.judge(self.ctx, verdict.accepted, [w.text for w in ctx_claims])
        return await self.write_claims(parent, verdict.accepted, pairs, ctx_claims, only_contradicting)

    async def _off_topic(self, verdict: critic.Verdict) -> None:
        """Move accepted claims that are not about the run's node to the rejected ones."""
        if self.topic is None or not verdict.accepted:
            return
        keep = await asyncio.to_thread(themes.on_topic, [c.claim.text for c in verdict.accepted], *self.topic)
        verdict.rejected.extend(
            {"text": c.claim.text, "quote": c.claim.quote, "reason": "off_topic"}
            for c, k in zip(verdict.accepted, keep)
            if not k
        )
        verdict.accepted[:] = [c for c, k in zip(verdict.accepted, keep) if k]

    def _count(self, verdict: critic.Verdict) -> None:
        self.rejected += len(verdict.rejected)
        self.accepted += len(verdict.accepted)
        for x in verdict.rejected:
            self.reasons[x["reason"]] = self.reasons.get(x["reason"], 0) + 1

    async def extract(self, parent: str | Theme, aspect: planner.Aspect, passages: list[Passage]) -> int:
        """The extractive path for an aspect the model gave nothing usable on: up to
        EXTRACTIVE_CLAIMS complete sentences of its body-text and caption passages sharing
        terms with the aspect, verbatim (checked by the critic like any claim)."""
        about = f"{aspect.title} {aspect.query}"
        terms = set(tokens(about))
        quotable = [p for p in passages if sent.role_allows_claims(p.role)]
        by_n = dict(enumerate(quotable, 1))  # passes number from 1 each: renumber
        sentences = [s for i, p in by_n.items() for s in sentences_of(i, p.text) if sent.claim_problem(s.text) is None]
        picked = select_sentence_ids(about, sentences, EXTRACTIVE_CLAIMS, min_overlap=1 if len(terms) <= 2 else 2)
        claims = extractive_claims(picked, by_n, aspect.title)
        if not claims:
            return 0
        verdict = await critic.verify_async(self.ctx, claims)
        self._count(verdict)
        n = await self.write_claims(parent, verdict.accepted, [], list(self.claims), body=EXTRACTIVE_NOTE)
        self.extractive += n
        return n

    async def passages_for(self, query: str, k: int = PASSAGES_PER_ASPECT) -> list[Passage]:
        return await retrieve(self.ctx, query, k, exclude=self.seen_chunks)

    def summary(self) -> dict[str, Any]:
        return {
            "claims_accepted": self.accepted,
            "claims_rejected": self.rejected,
            "claims_merged": self.merged,
            "claims_extractive": self.extractive,
            "rejected_by_reason": dict(self.reasons),
            "claims_written": len(self.claims),
            "nodes": len(self.writer.written),
        }


def extractive_claims(picked: list[tuple[str, Any]], by_n: dict[int, Passage], aspect: str) -> list[researcher.Claim]:
    """Claims quoting sentences picked by id ("3.2"); a sentence quoted with the one it leans on
    comes with both ids (a tuple, same passage)."""
    out = []
    for text, sid in picked:
        ids = list(sid) if isinstance(sid, tuple) else [sid]
        out.append(researcher.Claim(text, text, by_n[int(ids[0].split(".")[0])], aspect, ids, origin="extractive"))
    return out


def _naming(title: str, cands: list[Candidate]) -> list[Candidate]:
    return [c for c in cands if themes.shared(title, [c.text])]


async def research_aspects(r: Research, parent_id: str, aspects: list[planner.Aspect]) -> int:
    """One theme per aspect under `parent_id` (written with its first claim), then up to
    MAX_PASSES research passes and, with a model, the extractive path for aspects still
    without a claim. Returns the number of themes written."""
    placed = await asyncio.to_thread(place_aspects, r, parent_id, aspects)
    written = {id(t): 0 for _, t in placed}
    seen: dict[int, list[Passage]] = {id(t): [] for _, t in placed}
    pending = placed
    for pass_no in range(1, MAX_PASSES + 1):
        r.ctx.emit("agent", {"role": "researcher", "pass": pass_no, "aspects": [a.title for a, _ in pending]})
        still: list[tuple[planner.Aspect, Theme]] = []
        for a, theme in pending:
            chosen = None
            if pass_no == 1 and a.passages:
                passages, chosen = a.passages, a.claims
            else:
                query = a.query if pass_no == 1 else (a.title if pass_no == 2 else f"{r.question} {a.title}")
                passages = await r.passages_for(query)
            seen[id(theme)] += passages
            keep = None
            if chosen is None and is_offline(r.ctx):
                # a theme's later claims are found by its name: offline, only sentences that say
                # it, so the name stays its claims' own
                keep = partial(_naming, theme.title)
            written[id(theme)] += await r.research_aspect(theme, a.title, passages, chosen=chosen, keep=keep)
            if written[id(theme)] == 0 and passages:
                still.append((a, theme))
        pending = still
        if not pending:
            break
    if not is_offline(r.ctx):
        for a, theme in placed:
            if written[id(theme)] == 0 and seen[id(theme)]:
                written[id(theme)] += await r.extract(theme, a, seen[id(theme)])
                r.ctx.emit("agent", {"role": "researcher", "extractive": a.title, "claims": written[id(theme)]})
    await rename_themes(r, [t for a, t in placed if a.claims is not None])
    return len({t.node_id for _, t in placed if t.node_id is not None})


async def rename_themes(r: Research, made: list[Theme]) -> None:
    """Themes this run named from their planned claims are renamed from the claims written
    under them when the name no longer holds (the critic dropped or merged the claims that
    shared its words): every word of a name stays in two of its claims (`agents.naming`). When
    no name fits them all, the theme is split by meaning until each part's name holds
    (`themes.group`): the first part keeps the theme, the others become themes beside it."""
    created = {ev["id"] for ev in r.writer.written if ev["kind"] == "theme"}
    mine = {t.node_id: t for t in made if t.node_id is not None and t.node_id in created}
    if not mine:
        return
    from bayes_app.maps import service

    def regroup() -> list[tuple[Theme, str | None, list[tuple[str, list[str]]]]]:
        with r.ctx.sessions() as db:
            return _name_fixes(service._nodes(db, r.writer.map_id), mine)

    for theme, parent_id, parts in await asyncio.to_thread(regroup):
        (title, _), *others = parts
        if not themes.same_name(title, theme.title):
            await r.writer.update(theme.node_id or "", title=title)
            r.ctx.emit("agent", {"role": "writer", "renamed": {"from": theme.title, "to": title}})
            theme.title = title
        for name, ids in others:
            ev = await r.writer.node(parent_id or "", "theme", name, after_id=theme.node_id)
            for claim_id in ids:
                await r.writer.update(claim_id, parent_id=ev["id"])
            r.ctx.emit("agent", {"role": "writer", "split": {"from": theme.title, "to": name}})


def _name_fixes(
    nodes: list[Any], mine: dict[str, Theme]
) -> list[tuple[Theme, str | None, list[tuple[str, list[str]]]]]:
    """(theme, its parent, [(name, claim ids)] — the first part the theme's own) for each of
    `mine` whose name no longer holds over the claims under it."""
    claims: dict[str, list[tuple[str, str]]] = {}
    for n in nodes:
        if n.kind in ("claim", "counterpoint") and n.parent_id:
            claims.setdefault(n.parent_id, []).append((n.id, n.title))
    parent = {n.id: n.parent_id for n in nodes}
    names = [n.title for n in nodes if n.kind in ("theme", "chapter")]
    out = []
    for node_id, theme in mine.items():
        texts = [t for _, t in claims.get(node_id, [])]
        if not texts or themes.holds(theme.title, texts):
            continue
        taken = [x for x in names if x != theme.title]
        rest = [t for k, ts in claims.items() if k != node_id for _, t in ts]
        title = themes.name(texts, None, taken, others=rest)
        ids = [i for i, _ in claims[node_id]]
        if themes.holds(title, texts):
            parts = [(title, ids)]
        else:
            parts = [(t, [ids[k] for k in g]) for t, g in themes.group(texts, taken=taken, others=rest)]
        names += [t for t, _ in parts]
        out.append((theme, parent.get(node_id), parts))
    return out


def place_aspects(r: Research, parent_id: str, aspects: list[planner.Aspect]) -> list[tuple[planner.Aspect, Theme]]:
    """A theme per aspect, named so that no two themes of the map share a name and no theme
    sits under a node of its own name: an offline aspect whose name is taken gets another key
    phrase of its own claims; otherwise its claims go to the node of that name when it is the
    parent (or above it) or a theme beside it, or the name is qualified by the parent's."""
    from bayes_app.maps import service

    with r.ctx.sessions() as db:
        nodes = service._nodes(db, r.writer.map_id)
    by_id = {n.id: n for n in nodes}
    above: list[str] = []
    cur = by_id.get(parent_id)
    while cur is not None:
        above.append(cur.title)
        cur = by_id.get(cur.parent_id) if cur.parent_id else None
    taken = [n.title for n in nodes if n.kind in ("theme", "chapter")]
    beside = {n.title.lower(): n.id for n in nodes if n.parent_id == parent_id and n.kind == "theme"}
    made: list[tuple[planner.Aspect, Theme]] = []
    for a in aspects:
        names = above + taken + [t.title for _, t in made]
        title = a.title
        if any(themes.same_name(title, x) for x in names) and a.claims and all(c.vec is not None for c in a.claims):
            texts = [c.text for c in a.claims]
            other = themes.name(texts, np.stack([c.vector for c in a.claims]), names)
            # another name only when it is its claims' own (in two of them); else the claims join
            # the node of the taken name below, as a model's aspect does
            title = other if themes.shared(other, texts) else title
        same = next((t for _, t in made if themes.same_name(title, t.title)), None)
        theme = same or Theme(r.writer, parent_id, title)
        if same is None and any(themes.same_name(title, x) for x in above):
            theme.node_id = parent_id  # "Crawler" expanded: its findings go right under it
        elif same is None and (hit := next((i for t, i in beside.items() if themes.same_name(title, t)), None)):
            theme.node_id = hit
        elif same is None and any(themes.same_name(title, x) for x in taken):
            theme.title = f"{title} ({by_id[parent_id].title})"[:300] if parent_id in by_id else title
        made.append((a, theme))
    return made
