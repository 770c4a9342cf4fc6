"""Restructure and chapters proposals: the claims (or the top-level themes) grouped by the model
or, offline and when the model's grouping is unusable, by meaning (agents.themes); the preview
is stored for the user to accept or reject (maps.proposals)."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from bayes_app.agents import prompts, themes
from bayes_app.agents.llm_json import ask_json, is_offline
from bayes_app.llm import structured
from bayes_app.maps import service
from bayes_app.maps.proposals import clean_groups
from bayes_app.models import MapNode, NodeKind
from bayes_app.runs import lifecycle as lc
from bayes_app.runs.executor import RunAborted, RunContext

CLAIM_KINDS = (NodeKind.CLAIM, NodeKind.COUNTERPOINT)
REGROUP_SYSTEM = prompts.REGROUP


class Group(BaseModel):
    """One group of the regrouping step's reply (`nodes`: the node numbers it holds)."""

    title: str = "Group"
    nodes: list[int]


class Groups(BaseModel):
    """The restructure / chapters step's reply."""

    groups: list[Group]


def _offline_groups(items: list[MapNode], size: int | None) -> list[dict[str, Any]]:
    if size:  # chapters: consecutive runs of the top-level themes
        return [
            {
                "title": f"Chapter {i // size + 1}: {items[i].title}"[:200],
                "node_ids": [n.id for n in items[i : i + size]],
            }
            for i in range(0, len(items), size)
        ]
    # the claims' own wording: a theme's name is checked against it (a body holds notes)
    texts = [" ".join((n.title or n.body).split()) for n in items]
    groups = themes.group(texts)
    names = [t for t, _ in groups]
    parent = {n.id: n.parent_id for n in items}
    return [
        {
            "title": _own_name(title, idx, items, texts, names, parent)[:200],
            "node_ids": [items[i].id for i in idx],
        }
        for title, idx in groups
    ]


def _own_name(
    title: str,
    idx: list[int],
    items: list[MapNode],
    texts: list[str],
    names: list[str],
    parent: dict[str, str | None],
) -> str:
    """The group's name as its theme will hold it: a claim nested under another claim of the
    group (Deepen's) moves along with it, so the name must hold over the others, the theme's own
    children; when it does not, the key phrase those share (if one does). `parent`: each item's
    parent id."""
    ids = {items[i].id for i in idx}

    def nested(node_id: str) -> bool:  # an ancestor (through claims) in the group
        up = parent.get(node_id)
        while up is not None and up in parent:
            if up in ids:
                return True
            up = parent[up]
        return False

    own = [texts[i] for i in idx if not nested(items[i].id)]
    if len(own) == len(idx) or themes.holds(title, own):
        return title
    mine = set(idx)
    rest = [t for k, t in enumerate(texts) if k not in mine]
    other = themes.name(own, None, [n for n in names if n != title], others=rest)
    return other if themes.holds(other, own) else title


def _usable(groups: list[dict[str, Any]], items: list[MapNode], kind: str) -> list[dict[str, Any]]:
    """A model's grouping, each node in one group; for chapters the themes it left out join the
    last chapter. A restructure that leaves claims out or puts more than half of them in one of
    ≥ 4 groups is not used (the offline grouping is)."""
    groups = clean_groups(groups)
    placed = {i for g in groups for i in g["node_ids"]}
    missing = [n.id for n in items if n.id not in placed]
    if kind == "chapters":
        if groups and missing:
            groups[-1]["node_ids"].extend(missing)
        return groups
    too_big = len(groups) >= 4 and max(len(g["node_ids"]) for g in groups) > len(items) * themes.MAX_SHARE
    return [] if missing or too_big or len(groups) < 2 else groups


async def propose(ctx: RunContext, loaded: dict[str, Any], kind: str) -> None:
    """Group the map's claims (restructure) or top-level nodes (chapters) and emit the proposal."""
    nodes, root = loaded["nodes"], loaded["root"]
    if kind == "chapters":
        items = [n for n in nodes if n.parent_id == root.id and n.kind != NodeKind.NOTE]
        what, size = "3 to 7 chapters, in reading order", 3
    else:
        items = [n for n in nodes if n.kind in CLAIM_KINDS]
        what, size = "themes (3 to 8)", None
    if len(items) < 2:
        ctx.emit("agent", {"role": "planner", "note": "nothing_to_group"})
        return
    groups: list[dict[str, Any]] = []
    if not is_offline(ctx):
        listing = "\n".join(f"{i}. {n.title}" for i, n in enumerate(items, 1))
        data = await ask_json(
            ctx,
            kind,
            REGROUP_SYSTEM.format(what=what),
            f"ROLE: {kind}\nNodes:\n{listing}",
            Groups,
            max_tokens=800,
        )
        for g in structured.items_as(Group, data, "groups"):
            ids = [items[k - 1].id for k in g.nodes if 1 <= k <= len(items)]
            if ids:
                groups.append({"title": " ".join((g.title or "Group").split())[:200], "node_ids": ids})
    groups = _usable(groups, items, kind) if groups else []
    if not groups:
        groups = await asyncio.to_thread(_offline_groups, items, size)

    def write() -> Any:
        with ctx.sessions() as db:
            return service.create_proposal(db, loaded["map"].id, kind, groups, run_id=ctx.run.id)

    try:
        p = await asyncio.to_thread(write)
    except Exception:  # noqa: BLE001 - the map went away under us
        ctx.check_abort()
        raise RunAborted(lc.RESOURCE_DELETED) from None
    ctx.emit("proposal", service.proposal_view(p))
