"""The map run kinds: build_map, expand, deepen, counter, restructure, chapters, synthesize,
check_support (the typed `message`: agents/map_message.py). Input: {"mindmap_id",
"node_id"?, "prompt"?}. Every node is written by the Writer (own transaction + `node` event);
deleting the map mid-run ends the run (resource_deleted)."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from sqlmodel import select

from bayes_app.agents import planner, regroup
from bayes_app.agents.llm_json import ask_json, is_offline, role_model
from bayes_app.agents.pipeline import Research, Written, research_aspects
from bayes_app.agents.retrieval import library_of, retrieve
from bayes_app.agents.writer import Writer
from bayes_app.library import documents
from bayes_app.llm import structured as st
from bayes_app.llm.types import ChatRequest, StreamEvent, TextDelta
from bayes_app.maps import export, service, synthesis
from bayes_app.maps.access import authorize
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.models import Citation, MapNode, NodeKind, Role, utcnow
from bayes_app.runs import lifecycle as lc
from bayes_app.runs.executor import RunAborted, RunContext, RunFailed

log = logging.getLogger("bayes.agents.kinds")
CLAIM_KINDS = (NodeKind.CLAIM, NodeKind.COUNTERPOINT)


# ---- shared ----------------------------------------------------------------------------------
def _load(ctx: RunContext) -> dict[str, Any]:
    """The map (owned by the run's owner) and the target node; RunAborted when it is gone."""
    inp = ctx.run.input
    with ctx.sessions() as db:
        try:
            # the starter must still be allowed to edit it (a removed or demoted editor's run ends)
            m = authorize(db, ctx.run.owner_id, inp["mindmap_id"], Role.EDITOR)
            root = service.root_of(db, m.id)
            node = service.get_node(db, m.owner_id, m.id, inp["node_id"]) if inp.get("node_id") else root
            nodes = service._nodes(db, m.id)
        except (MapNotFound, MapError):
            raise RunAborted(lc.RESOURCE_DELETED) from None
        if is_offline(ctx) and not m.offline:
            service.mark_offline(db, m.id)
    return {"map": m, "root": root, "node": node, "nodes": nodes}


def _path(nodes: list[MapNode], node: MapNode) -> str:
    """The node's wording with its ancestors' as context: 'question › theme › node'."""
    by_id = {n.id: n for n in nodes}
    parts, cur = [], node
    while cur is not None:
        parts.append(cur.title)
        cur = by_id.get(cur.parent_id) if cur.parent_id else None
    return " › ".join(reversed([p for p in parts if p]))


async def _start(ctx: RunContext) -> tuple[dict[str, Any], Writer]:
    loaded = await asyncio.to_thread(_load, ctx)
    ctx.emit(
        "metadata",
        {
            "mindmap_id": loaded["map"].id,
            "node_id": loaded["node"].id,
            "offline": is_offline(ctx),
            "kind": ctx.run.kind,
        },
    )
    return loaded, Writer(ctx, loaded["map"].id)


NOTES = {  # what a run that found nothing says (the `note` of its last `agent` event)
    "no_passages": "No passages in your library match this question.",
    "no_claims": "No claims found in your library for this question.",
    "no_counter_evidence": "No counter-evidence found in your library.",
    "no_new_evidence": "No new evidence found in your library.",
}


def _done(ctx: RunContext, r: Research | None, empty: str | None = None, **extra: Any) -> None:
    """The writer's last event; when the run wrote no claim, `note` says so in words."""
    if empty and (r is None or not r.claims):
        extra.update(note=NOTES[empty], note_code=empty)
    ctx.emit("agent", {"role": "writer", "done": True, **(r.summary() if r else {}), **extra})


NO_PASSAGES = "no_passages"
NO_CLAIMS = "no_usable_claims"
LIBRARY_EMPTY = "library_empty"


async def _nothing_to_research(ctx: RunContext) -> RunFailed:
    """Why a search found nothing, in plain words: an empty library, or nothing relevant in it."""

    def count() -> int:
        with ctx.sessions() as db:
            return documents.indexed_count(db, library_of(ctx))

    if await asyncio.to_thread(count) == 0:
        return RunFailed(LIBRARY_EMPTY, documents.EMPTY_LIBRARY)
    return RunFailed(NO_PASSAGES, documents.NOTHING_RELEVANT)


def _require_claims(r: Research) -> None:
    """A research run that wrote no claim ends FAILED with a clear reason, never as an empty
    success (its themes were removed; what the model calls cost is still charged)."""
    if not r.claims:
        raise RunFailed(
            NO_CLAIMS,
            "The model returned no usable claims, and no sentence of the passages "
            "found matches the question's aspects.",
        )


# ---- build / expand / deepen / counter ---------------------------------------------------------
async def build_map(ctx: RunContext) -> None:
    """Research a question: plan aspects, research each, write themes and cited claims."""
    loaded, w = await _start(ctx)
    root = loaded["root"]
    question = " ".join(str(ctx.run.input.get("prompt") or "").split()) or root.title
    if question != root.title:
        await w.update(root.id, title=question)
    r = Research(ctx, w, question)
    r.seen_chunks = set()
    first = await retrieve(ctx, question, k=24 if is_offline(ctx) else 10)
    ctx.emit("agent", {"role": "planner", "passages": len(first)})
    if not first:
        raise await _nothing_to_research(ctx)
    aspects = await planner.plan(ctx, question, first)
    ctx.emit("agent", {"role": "planner", "aspects": [a.title for a in aspects]})
    await research_aspects(r, root.id, aspects)
    _done(ctx, r, "no_claims")
    _require_claims(r)


def _topic(nodes: list[MapNode], node: MapNode) -> tuple[list[str], list[list[str]]] | None:
    """What Expand / Dive deeper keep claims close to: the node's wording with its claims, and
    every other theme of the map (not above or below the node) with its claims."""
    if node.parent_id is None:
        return None
    kids = service.children_index(nodes)

    def wording(n: MapNode) -> str:
        return n.title or n.body

    def claims(n: MapNode) -> list[str]:
        return [wording(k) for k in kids.get(n.id, []) if k.kind in CLAIM_KINDS and wording(k)]

    by_id = {n.id: n for n in nodes}
    near, cur = set(), node
    while cur is not None:
        near.add(cur.id)
        cur = by_id.get(cur.parent_id) if cur.parent_id else None
    near.update(n.id for n in service.subtree(nodes, node.id))
    others = [
        [wording(t), *claims(t)]
        for t in nodes
        if t.kind in (NodeKind.THEME, NodeKind.CHAPTER) and t.id not in near and wording(t)
    ]
    return [wording(node), *claims(node)], others


async def expand(ctx: RunContext) -> None:
    """Sub-aspects of a node, each researched, as children of the node."""
    loaded, w = await _start(ctx)
    node = loaded["node"]
    topic = " ".join(str(ctx.run.input.get("prompt") or "").split()) or _path(loaded["nodes"], node)
    r = Research(ctx, w, topic)
    r.topic = _topic(loaded["nodes"], node)
    r.seen_quotes = _cited(ctx, loaded["map"].id)
    first = await retrieve(ctx, topic, k=16 if is_offline(ctx) else 10)
    if not first:
        raise RunFailed(NO_PASSAGES, "The library has no passages on this topic.")
    aspects = (await planner.plan(ctx, topic, first))[:4]
    ctx.emit("agent", {"role": "planner", "aspects": [a.title for a in aspects]})
    await research_aspects(r, node.id, aspects)
    _done(ctx, r, "no_new_evidence")
    _require_claims(r)


def _cited(ctx: RunContext, map_id: str) -> set[tuple[str, str]]:
    with ctx.sessions() as db:
        return {(c.chunk_id, c.quote) for c in db.exec(select(Citation).where(Citation.map_id == map_id)) if c.chunk_id}


def _cited_chunks(ctx: RunContext, map_id: str) -> set[str]:
    return {chunk for chunk, _ in _cited(ctx, map_id)}


async def deepen(ctx: RunContext) -> None:
    """More evidence on one node, from passages the map does not cite yet (≤ 3 passes)."""
    loaded, w = await _start(ctx)
    node = loaded["node"]
    topic = _path(loaded["nodes"], node)
    focus = " ".join(str(ctx.run.input.get("prompt") or "").split())
    r = Research(ctx, w, topic)
    r.topic = _topic(loaded["nodes"], node)
    r.seen_chunks = _cited_chunks(ctx, loaded["map"].id)
    r.seen_quotes = _cited(ctx, loaded["map"].id)
    existing = [
        Written(n.id, n.parent_id or node.id, n.title)
        for n in loaded["nodes"]
        if n.parent_id == node.id and n.kind in CLAIM_KINDS
    ]
    for pass_no, query in enumerate([f"{focus} {node.title}".strip(), topic, f"{node.title} details evidence"], 1):
        passages = await r.passages_for(query, k=8)
        ctx.emit("agent", {"role": "researcher", "pass": pass_no, "passages": len(passages)})
        if not passages:
            break
        n = await r.research_aspect(node.id, node.title, passages, context=existing + r.claims)
        if n:
            break
    _done(ctx, r, "no_new_evidence")


async def counter(ctx: RunContext) -> None:
    """Counter-evidence for a claim: contradicting claims become counterpoint siblings
    linked to it by `contradicts`."""
    loaded, w = await _start(ctx)
    node = loaded["node"]
    if node.parent_id is None:
        raise RunAborted("bad_target")  # the API refuses this; a race only
    r = Research(ctx, w, node.title)
    r.seen_quotes = _cited(ctx, loaded["map"].id)
    r.seen_chunks = _cited_chunks(ctx, loaded["map"].id)
    target = [Written(node.id, node.parent_id, node.title)]
    queries = [f"{node.title} not contrary limitations", f"evidence against {node.title}", node.title]
    found = 0
    for pass_no, query in enumerate(queries, 1):
        passages = await r.passages_for(query, k=8)
        ctx.emit("agent", {"role": "researcher", "pass": pass_no, "passages": len(passages)})
        if not passages:
            break
        found += await r.research_aspect(
            node.parent_id,
            f"Evidence against: {node.title}",
            passages,
            context=target,
            only_contradicting=True,
            step="counter",
        )
        if found:
            break
    _done(ctx, r, "no_counter_evidence", counterpoints=found)


# ---- restructure / chapters ----------------------------------------------------------------
async def _regroup(ctx: RunContext, kind: str) -> None:
    loaded, _w = await _start(ctx)
    await regroup.propose(ctx, loaded, kind)


async def restructure(ctx: RunContext) -> None:
    """Propose a regrouping of the claims into themes (a preview the user accepts or rejects)."""
    await _regroup(ctx, "restructure")


async def chapters(ctx: RunContext) -> None:
    """Propose chapters grouping the top-level themes (a preview, like restructure)."""
    await _regroup(ctx, "chapters")


# ---- synthesize ------------------------------------------------------------------------------
SYNTH_SYSTEM = (
    "Write flowing prose (Markdown, no headings) that synthesises the claims of a research "
    "mindmap. Cite with the given markers like [1], each right after the sentence that uses "
    "the claims carrying it. Escaped brackets such as \\[5\\] are part of the quoted text, "
    "never citations: keep them escaped or leave them out. Keep contradictions explicit: "
    "present both sides, never average them. Use only the claims given."
)


def _copy_citation(c: Citation, k: int) -> dict[str, Any]:
    """A citation's passage, to cite it again on the synthesis note as its `k`-th citation
    (created_at in that order: the note's markers [k] number its citations)."""
    return {
        "document_id": c.document_id,
        "chunk_id": c.chunk_id,
        "page": c.page,
        "quote": c.quote,
        "char_start": c.char_start,
        "char_end": c.char_end,
        "agent": "synthesize",
        "source_title": c.source_title,
        "source_removed_at": c.source_removed_at,
        "source_removed_reason": c.source_removed_reason,
        "created_at": utcnow() + timedelta(microseconds=k),
    }


async def synthesize(ctx: RunContext) -> None:
    """A synthesis of a node or the whole map, streamed as `text` and saved as a note node whose
    markers [k] number its own citations (the export renumbers them by paper). Offline: the
    structured extractive summary (maps.synthesis.offline); with a model: prose over the export
    outline, markers checked against the claims and unmarked sentences dropped."""
    loaded, w = await _start(ctx)
    node = loaded["node"]
    if is_offline(ctx):

        def summarise() -> synthesis.Summary:
            with ctx.sessions() as db:
                return synthesis.offline(db, loaded["map"].owner_id, loaded["map"].id, node.id)

        summary = await asyncio.to_thread(summarise)
        ctx.emit("text", {"delta": summary.text})
    else:

        def outline() -> export.Outline:
            with ctx.sessions() as db:
                return export.outline(db, loaded["map"].owner_id, loaded["map"].id, node.id)

        o = await asyncio.to_thread(outline)
        parts: list[str] = []

        def on_event(ev: StreamEvent) -> None:
            if isinstance(ev, TextDelta) and ev.text:
                parts.append(ev.text)
                ctx.emit("text", {"delta": ev.text})

        req = ChatRequest(
            model=role_model(ctx, "synthesize"),
            max_tokens=1_500,
            messages=[
                {"role": "system", "content": SYNTH_SYSTEM},
                {"role": "user", "content": f"ROLE: synthesize\n{o.markdown}"},
            ],
        )
        await ctx.stream_model(req, "synthesize", on_event)
        # markers come from the writer only: one its sentence doesn't match is dropped, and so
        # is a sentence left without any
        summary, dropped, lost = synthesis.from_prose("".join(parts).strip(), o)
        if dropped or lost:
            ctx.emit("agent", {"role": "critic", "dropped_markers": dropped, "dropped_sentences": lost})
    if not summary.text.strip():
        _done(ctx, None, note="Nothing to synthesise: this part of the map has no claims yet.")
        return
    cits = [_copy_citation(c, k) for k, c in enumerate(summary.citations)]
    await w.node(node.id, NodeKind.NOTE, f"Synthesis: {node.title}"[:300], summary.text, citations=cits)
    _done(ctx, None)


# ---- check support with a model ---------------------------------------------------------------
CHECK_SYSTEM = (
    "You check citations. For each numbered quote, judge how well it supports the claim: 1 = the "
    "quote states it, 0.5 = it supports part of it or states it more cautiously, 0 = it does not "
    "say it or says the opposite. When the claim overstates a quote, give a faithful rewrite of "
    "the claim that keeps its names, acronyms and numbers exactly (null otherwise). Reply with a "
    "JSON object: key scores, a list of objects with keys quote (its number), support, rewrite "
    "and reason."
)
CHECK_SCHEMA = st.obj(
    scores=st.array(st.obj(quote=st.INTEGER, support=st.NUMBER, rewrite=st.nullable(st.STRING), reason=st.STRING))
)


async def check_support(ctx: RunContext) -> None:
    """The model judges how well each of a node's quotes supports its wording (one billed call);
    quotes the reply leaves out keep the instant offline score."""
    from bayes_app.maps import citations as cit
    from bayes_app.maps.support import score_support

    loaded, _w = await _start(ctx)
    node = loaded["node"]
    with ctx.sessions() as db:
        cits = list(db.exec(select(Citation).where(Citation.node_id == node.id)))
    wording = cit.wording(node)
    if not cits or not wording:
        raise RunAborted("bad_target")
    listing = "\n".join(f'{i}. "{" ".join(c.quote.split())}"' for i, c in enumerate(cits, 1))
    data = {}
    if not is_offline(ctx):
        data = await ask_json(
            ctx,
            "check_support",
            CHECK_SYSTEM,
            f"ROLE: check_support\nClaim: {wording}\nQuotes:\n{listing}",
            CHECK_SCHEMA,
            max_tokens=600,
        )
    judged: dict[int, tuple[float, str | None]] = {}
    for s in (data.get("scores") if isinstance(data, dict) else None) or []:
        try:
            k, score = int(s.get("quote")) - 1, float(s.get("support"))
        except (AttributeError, TypeError, ValueError):
            continue
        rewrite = s.get("rewrite") if isinstance(s.get("rewrite"), str) and s.get("rewrite").strip() else None
        if 0 <= k < len(cits) and 0 <= score <= 1:
            judged[k] = (score, " ".join(rewrite.split())[:2000] if rewrite else None)
    out = []
    for k, c in enumerate(cits):
        if k in judged:
            score, rewrite, agent = *judged[k], "critic"
        else:  # the model skipped it (or there is no model): the instant scorer
            r = await asyncio.to_thread(score_support, wording, c.quote)
            score, rewrite, agent = r.score, r.rewrite, "support"

        def write(cid: str = c.id, sc: float = score, rw: str | None = rewrite, ag: str = agent) -> Any:
            with ctx.sessions() as db:
                return cit.set_support(db, loaded["map"].id, cid, sc, rw, ag)

        row = await asyncio.to_thread(write)
        if row is not None:
            out.append(
                {
                    "citation_id": row.id,
                    "support_score": row.support_score,
                    "support_label": row.support_label,
                    "suggested_rewrite": row.suggested_rewrite,
                    "judged_by": "model" if k in judged else "offline",
                }
            )
    ctx.emit(
        "node",
        {
            "id": node.id,
            "map_id": loaded["map"].id,
            "updated": True,
            "run_id": ctx.run.id,
            "support": min((x["support_score"] for x in out), default=None),
        },
    )
    ctx.emit("agent", {"role": "critic", "done": True, "checked": out})
