"""What the map run kinds share: loading the map and the target node, the writer, the
last event's note when a run found nothing, and the reasons a research run fails."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from sqlmodel import select

from bayes_app.agents.llm_json import is_offline
from bayes_app.agents.pipeline import Research
from bayes_app.agents.retrieval import search_scope
from bayes_app.agents.writer import Writer
from bayes_app.library import documents
from bayes_app.maps import runs as map_runs
from bayes_app.maps import service
from bayes_app.maps.access import authorize
from bayes_app.maps.crowding import propose_splits
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.models import Citation, MapNode, NodeKind, Role
from bayes_app.runs import lifecycle as lc
from bayes_app.runs.executor import RunAborted, RunContext, RunFailed

RESOURCE = map_runs.RESOURCE  # what every map kind runs on (deleting the map cancels its runs)
CLAIM_KINDS = (NodeKind.CLAIM, NodeKind.COUNTERPOINT)


def load(ctx: RunContext) -> dict[str, Any]:
    """The map (the run's starter may edit it) and the target node; RunAborted when it is gone."""
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


def path(nodes: list[MapNode], node: MapNode) -> str:
    """The node's wording with its ancestors' as context: 'question › theme › node'."""
    by_id = {n.id: n for n in nodes}
    parts: list[str] = []
    cur: MapNode | None = node
    while cur is not None:
        parts.append(cur.title)
        cur = by_id.get(cur.parent_id) if cur.parent_id else None
    return " › ".join(reversed([p for p in parts if p]))


async def start(ctx: RunContext) -> tuple[dict[str, Any], Writer]:
    """Load the map, announce it (`metadata`) and give the run its Writer."""
    loaded = await asyncio.to_thread(load, ctx)
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


def done(ctx: RunContext, r: Research | None, empty: str | None = None, **extra: Any) -> None:
    """The writer's last event; when the run wrote no claim, `note` says so in words."""
    if empty and (r is None or not r.claims):
        extra.update(note=NOTES[empty], note_code=empty)
    ctx.emit("agent", {"role": "writer", "done": True, **(r.summary() if r else {}), **extra})


NO_PASSAGES = "no_passages"
NO_CLAIMS = "no_usable_claims"
LIBRARY_EMPTY = "library_empty"


async def nothing_to_research(ctx: RunContext) -> RunFailed:
    """Why a search found nothing, in plain words: an empty library, or nothing relevant in it."""

    def count() -> int:
        with ctx.sessions() as db:
            return documents.indexed_count(db, search_scope(ctx)[0])

    if await asyncio.to_thread(count) == 0:
        return RunFailed(LIBRARY_EMPTY, documents.EMPTY_LIBRARY)
    return RunFailed(NO_PASSAGES, documents.NOTHING_RELEVANT)


def require_claims(r: Research) -> None:
    """A research run that wrote no claim ends FAILED with a clear reason, never as an empty
    success (its themes were removed; what the model calls cost is still charged)."""
    if not r.claims:
        raise RunFailed(
            NO_CLAIMS,
            "The model returned no usable claims, and no sentence of the passages "
            "found matches the question's aspects.",
        )


def topic(nodes: list[MapNode], node: MapNode) -> tuple[list[str], list[list[str]]] | None:
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
    near: set[str] = set()
    cur: MapNode | None = node
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


def cited(ctx: RunContext, map_id: str) -> set[tuple[str, str]]:
    """The (chunk, quote) pairs the map already cites."""
    with ctx.sessions() as db:
        return {(c.chunk_id, c.quote) for c in db.exec(select(Citation).where(Citation.map_id == map_id)) if c.chunk_id}


def cited_chunks(ctx: RunContext, map_id: str) -> set[str]:
    """The chunks the map already cites."""
    return {chunk for chunk, _ in cited(ctx, map_id)}


def then_split(kind: Callable[[RunContext], Awaitable[None]]) -> Callable[[RunContext], Awaitable[None]]:
    """The run kind, then a split proposal for each theme it left crowded (BAYES_SPLIT_THRESHOLD)."""

    async def run(ctx: RunContext) -> None:
        await kind(ctx)
        from bayes_app.settings import get_settings

        def split() -> list[Any]:
            with ctx.sessions() as db:
                return propose_splits(db, ctx.run.input["mindmap_id"], get_settings().split_threshold, ctx.run.id)

        try:
            made = await asyncio.to_thread(split)
        except Exception:  # noqa: BLE001 - the map went away: the run's own work is what counts
            return
        for p in made:
            ctx.emit("proposal", service.proposal_view(p))

    run.__name__ = run.__qualname__ = kind.__name__
    run.__doc__ = kind.__doc__
    return run
