"""Crowded branches split: a theme holding more than a set number of claims gets a split
proposal (like Restructure: previewed, then accepted or rejected), its claims grouped by meaning
into sub-themes named by their key phrases (the grouping Restructure uses offline,
`agents.themes.group`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sqlmodel import Session, select

from bayes_app.maps.access import _nodes
from bayes_app.maps.proposals import create_proposal
from bayes_app.models import MapNode, MapProposal, NodeKind

SPLIT = "split"
CLAIM_KINDS = (NodeKind.CLAIM, NodeKind.COUNTERPOINT)
Grouper = Callable[[list[str], Iterable[str]], list[tuple[str, list[int]]]]


def crowded(nodes: list[MapNode], threshold: int) -> list[tuple[MapNode, list[MapNode]]]:
    """The themes with more than `threshold` claims directly under them, with those claims."""
    claims: dict[str, list[MapNode]] = {}
    for n in sorted(nodes, key=lambda n: n.order_index):
        if n.kind in CLAIM_KINDS and n.parent_id:
            claims.setdefault(n.parent_id, []).append(n)
    return [
        (t, claims[t.id])
        for t in nodes
        if t.kind in (NodeKind.THEME, NodeKind.CHAPTER) and len(claims.get(t.id, [])) > threshold
    ]


def _default_grouper(texts: list[str], taken: Iterable[str]) -> list[tuple[str, list[int]]]:
    from bayes_app.agents import themes

    return themes.group(texts, taken=taken)


def propose_splits(
    db: Session, map_id: str, threshold: int, run_id: str | None = None, grouper: Grouper | None = None
) -> list[MapProposal]:
    """A split proposal for each crowded theme that has no pending one yet (a theme whose
    claims do not fall into two groups or more is left alone)."""
    grouper = grouper or _default_grouper
    nodes = _nodes(db, map_id)
    pending = {
        (p.payload or {}).get("parent_id")
        for p in db.exec(select(MapProposal).where(MapProposal.map_id == map_id, MapProposal.status == "pending"))
        if p.kind == SPLIT
    }
    out = []
    for theme, claims in crowded(nodes, threshold):
        if theme.id in pending:
            continue
        texts = [" ".join((c.title or c.body).split()) for c in claims]
        taken = [n.title for n in nodes if n.kind in (NodeKind.THEME, NodeKind.CHAPTER) and n.id != theme.id]
        groups: list[dict[str, Any]] = [
            {"title": title, "node_ids": [claims[i].id for i in idx]} for title, idx in grouper(texts, taken)
        ]
        if len([g for g in groups if g["node_ids"]]) < 2:
            continue
        out.append(create_proposal(db, map_id, SPLIT, groups, run_id=run_id, parent_id=theme.id))
    return out
