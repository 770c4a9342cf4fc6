"""Restructure / chapters previews: created by a run, accepted (regrouping, undoable) or rejected."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from bayes_app.db import atomic
from bayes_app.maps.access import _nodes, _touch, actor, get_map, root_of
from bayes_app.maps.edits import MAX_NODE_TITLE, _insert
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.maps.tree import check_shape
from bayes_app.maps.undo import _commit_edit, _Undo
from bayes_app.maps.views import proposal_view
from bayes_app.models import (
    Citation,
    MapNode,
    MapProposal,
    NodeKind,
    NodeRelation,
    Origin,
)
from bayes_app.sharing.map_documents import proposal_visible


# ---- proposals (restructure / chapters previews) -------------------------------------------
def clean_groups(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Groups as a proposal may hold them: each node in the first group that lists it, groups
    with the same title (case-insensitive) merged, empty groups dropped."""
    out: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for i, g in enumerate(groups):
        title = " ".join(str(g.get("title") or "").split())[:MAX_NODE_TITLE] or f"Group {i + 1}"
        ids = [n for n in dict.fromkeys(g.get("node_ids") or []) if isinstance(n, str) and n not in seen]
        seen.update(ids)
        if ids:
            out.setdefault(title.lower(), {**g, "title": title, "node_ids": []})["node_ids"].extend(ids)
    return list(out.values())


def create_proposal(
    db: Session,
    map_id: str,
    kind: str,
    groups: list[dict[str, Any]],
    run_id: str | None = None,
    parent_id: str | None = None,
) -> MapProposal:
    """A regrouping preview; `parent_id`: the theme whose claims a split regroups (else the root)."""
    payload: dict[str, Any] = {
        "groups": clean_groups(groups),
        "node_kind": NodeKind.CHAPTER if kind == "chapters" else NodeKind.THEME,
    }
    if parent_id:
        payload["parent_id"] = parent_id
    p = MapProposal(map_id=map_id, kind=kind, run_id=run_id, payload=payload)
    with atomic(db):
        db.add(p)
        _touch(db, map_id)
    return p


def get_pending(db: Session, owner_id: str, map_id: str, proposal_id: str) -> MapProposal:
    """The map's pending proposal (MapNotFound; MapError 409 once decided)."""
    return _proposal(db, owner_id, map_id, proposal_id)


def _proposal(db: Session, owner_id: str, map_id: str, proposal_id: str) -> MapProposal:
    m = get_map(db, owner_id, map_id)
    p = db.get(MapProposal, proposal_id, populate_existing=True)
    if p is None or p.map_id != map_id or not proposal_visible(db, actor(owner_id) or owner_id, m, p.payload or {}):
        raise MapNotFound("proposal")  # a member never sees one about a paper they cannot open
    if p.status != "pending":
        raise MapError("proposal_decided", f"The proposal was already {p.status}.", 409)
    return p


def accept_proposal(db: Session, owner_id: str, map_id: str, proposal_id: str) -> dict[str, Any]:
    """Apply a regrouping as a move: each group's nodes go under the top-level theme/chapter of
    the group's title (the existing one of that name, else a new one); a theme or chapter left
    empty by the move is removed; the tree is laid out again. All of it is ONE undoable edit
    (nodes deleted since the proposal are skipped)."""
    p = _proposal(db, owner_id, map_id, proposal_id)
    if p.kind == "update":
        from bayes_app.maps.updates import accept_update

        return accept_update(db, p)[0]
    root = _regrouped_root(db, map_id, p)
    nodes = {n.id: n for n in _nodes(db, map_id)}
    u = _Undo()
    groups = clean_groups(p.payload.get("groups", []))
    moving = {i for g in groups for i in g["node_ids"] if i in nodes and i != root.id}
    # the old parents first: undo restores rows in order, a parent before the children it gets back
    old_parents = {pid for i in moving if (pid := nodes[i].parent_id) is not None and pid in nodes}
    for pid in old_parents:
        u.before("nodes", nodes[pid])
    used = _regroup(db, map_id, p, root, nodes, groups, moving, u)
    db.flush()
    check_shape(db, map_id)
    _drop_emptied(db, [nodes[pid] for pid in old_parents if pid != root.id and pid not in used], u)
    _synthesis_outdated(db, root, u)
    _lay_out(db, map_id, u)
    p.status = "accepted"
    db.add(p)
    _commit_edit(db, map_id, "accept_proposal", u)
    return proposal_view(p)


def _regrouped_root(db: Session, map_id: str, p: MapProposal) -> MapNode:
    """The node whose children the proposal regroups: the root, or the theme a split splits."""
    root = root_of(db, map_id)
    if p.payload.get("parent_id"):  # a split: the sub-themes go under the crowded theme
        theme = db.get(MapNode, p.payload["parent_id"], populate_existing=True)
        if theme is None or theme.map_id != map_id:
            raise MapError("proposal_stale", "The theme this proposal splits was removed.", 409)
        root = theme
    return root


def _regroup(
    db: Session,
    map_id: str,
    p: MapProposal,
    root: MapNode,
    nodes: dict[str, MapNode],
    groups: list[dict[str, Any]],
    moving: set[str],
    u: _Undo,
) -> list[str]:
    """Each group's members moved under its head (the theme or chapter of its title under `root`,
    made when there is none); returns the heads' ids."""
    kind = p.payload.get("node_kind", NodeKind.THEME)
    heads = {
        n.title.lower(): n
        for n in sorted(nodes.values(), key=lambda n: n.order_index)
        if n.parent_id == root.id and n.kind == kind
    }
    used: list[str] = []
    for gi, group in enumerate(groups):
        members = [nodes[i] for i in group["node_ids"] if i in moving]
        if not members:
            continue
        head = heads.get(group["title"].lower())
        if head is None or head.id in moving:
            head = _insert(
                db,
                map_id,
                root,
                kind,
                group["title"],
                str(group.get("summary") or ""),
                None,
                u,
                created_by=Origin.AGENT,
                run_id=p.run_id,
            )
        else:
            u.before("nodes", head)
            head.order_index = gi
            db.add(head)
        used.append(head.id)
        _move_under(db, head, members, nodes, u)
    return used


def _move_under(db: Session, head: MapNode, members: list[MapNode], nodes: dict[str, MapNode], u: _Undo) -> None:
    """The members under `head`, in order; a member nested under another member moves along with it."""
    member_ids = {m.id for m in members}
    k = 0
    for m in members:
        if _has_ancestor_in(m, member_ids, nodes):
            continue
        u.before("nodes", m)
        m.parent_id, m.order_index = head.id, k
        db.add(m)
        k += 1


def _lay_out(db: Session, map_id: str, u: _Undo) -> None:
    """The tree laid out again (the moved positions are part of the undoable edit)."""
    from bayes_app.maps.layout import tree_layout

    positions = tree_layout(_nodes(db, map_id))
    created = set(u.delete["nodes"])
    for n in _nodes(db, map_id):
        if n.id in positions:
            if n.id not in created:
                u.before("nodes", n)
            n.pos_x, n.pos_y = positions[n.id]
            db.add(n)


SYNTHESIS_PREFIX = "Synthesis: "  # the title the synthesize run gives its note
OUTDATED_PREFIX = "Outdated — "


def _synthesis_outdated(db: Session, root: MapNode, u: _Undo) -> None:
    """A regrouping makes the syntheses written over the old grouping outdated: each synthesis
    note under `root` is marked so in its title and moved after the new themes."""
    kids = sorted(db.exec(select(MapNode).where(MapNode.parent_id == root.id)), key=lambda n: n.order_index)
    notes = [n for n in kids if n.kind == NodeKind.NOTE and n.title.startswith((SYNTHESIS_PREFIX, OUTDATED_PREFIX))]
    last = max((n.order_index for n in kids), default=0)
    for k, n in enumerate(notes, start=1):
        u.before("nodes", n)
        if not n.title.startswith(OUTDATED_PREFIX):
            n.title = (OUTDATED_PREFIX + n.title)[:300]
        n.order_index = last + k
        db.add(n)
    db.flush()


def _drop_emptied(db: Session, parents: list[MapNode], u: _Undo) -> None:
    """Delete the themes and chapters (never claims or notes) the move left without children,
    and the themes above them that are left empty in turn."""
    frontier, gone = list(parents), set()
    while frontier:
        n = frontier.pop()
        if n.id in gone or n.kind not in (NodeKind.THEME, NodeKind.CHAPTER) or n.parent_id is None:
            continue
        if db.exec(select(MapNode.id).where(MapNode.parent_id == n.id)).first() is not None:
            continue
        u.before("nodes", n)
        if (up := db.get(MapNode, n.parent_id)) is not None:
            frontier.append(up)
        for c in db.exec(select(Citation).where(Citation.node_id == n.id)):
            u.before("citations", c)
        for r in db.exec(
            select(NodeRelation).where((NodeRelation.source_id == n.id) | (NodeRelation.target_id == n.id))
        ):
            u.before("relations", r)
        gone.add(n.id)
        db.delete(n)
        db.flush()


def _has_ancestor_in(n: MapNode, ids: set[str], nodes: dict[str, MapNode]) -> bool:
    cur = nodes.get(n.parent_id) if n.parent_id else None
    while cur is not None:
        if cur.id in ids:
            return True
        cur = nodes.get(cur.parent_id) if cur.parent_id else None
    return False


def reject_proposal(db: Session, owner_id: str, map_id: str, proposal_id: str) -> dict[str, Any]:
    p = _proposal(db, owner_id, map_id, proposal_id)
    p.status = "rejected"
    db.add(p)
    _touch(db, map_id)
    db.commit()
    return proposal_view(p)
