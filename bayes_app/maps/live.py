"""The map as a live view holds it: nodes and relations in memory, changed by a run's events
and by this view's own edits without re-reading the map, and projected for the canvas.

A node item is the dict `service.map_view` returns per node (id, parent_id, kind, title, body,
order, position, collapsed, created_by, citation_count, support, created_at, …); a relation
item has id, source_id, target_id, kind. The editor (`state/mindmap.py`) keeps these in its
backend vars and hands them here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from sqlmodel import Session, col, select

from bayes_app.bidi import inert
from bayes_app.maps.layout import tree_layout
from bayes_app.maps.outline import branch_hues
from bayes_app.maps.tree import walk
from bayes_app.models import Mindmap, Run, RunStatus
from bayes_app.runs.events import RunEvent

LIVE_IDS_KEPT = 50  # newest run-written nodes marked "live" on the canvas
ROUTE_LABELS = {"answer": "answered from the map", "edit": "edited the map", "research": "researched the library"}


def support_level(score: float | None) -> str:
    """ "good" / "weak" / "poor" for a support score, "" when unknown."""
    if score is None:
        return ""
    return "good" if score >= 0.7 else "weak" if score >= 0.4 else "poor"


def _layout_of(nodes: dict[str, dict[str, Any]]) -> dict[str, tuple[float, float]]:
    return tree_layout(
        [
            SimpleNamespace(
                id=n["id"],
                parent_id=n["parent_id"],
                order_index=n.get("order") or 0,
                created_at=n.get("created_at") or "",
                collapsed=n["collapsed"],
            )
            for n in nodes.values()
        ]
    )


def build_graph(
    nodes: dict[str, dict[str, Any]],
    relations: list[dict[str, Any]],
    live_layout: bool,
    live_ids: set[str] | frozenset = frozenset(),
) -> dict[str, Any]:
    """The canvas projection: visible nodes (not under a collapsed node) with positions, and edges.
    `live_layout` (during a run) places every node by the tidy layout, not its stored spot."""
    kids: dict[str | None, list[dict]] = {}
    for n in nodes.values():
        kids.setdefault(n["parent_id"], []).append(n)
    for lst in kids.values():
        lst.sort(key=lambda n: (n.get("order") or 0, n.get("created_at") or ""))
    unplaced = any(n.get("position") is None for n in nodes.values())
    layout = _layout_of(nodes) if live_layout or unplaced else {}
    hues = branch_hues(nodes)

    def count(nid: str) -> int:
        """How many nodes are under `nid` (no recursion: a deep branch cannot break the view)."""
        return sum(1 for _ in walk(kids.get(nid, []), lambda c: kids.get(c["id"], [])))

    out_nodes: list[dict] = []
    edges: list[dict] = []
    visible: set[str] = set()
    stack = list(reversed(kids.get(None, [])))
    while stack:
        n = stack.pop()
        visible.add(n["id"])
        pos = n.get("position")
        if live_layout or pos is None:
            x, y = layout.get(n["id"], (0.0, 0.0))
            pos = {"x": x, "y": y}
        children = kids.get(n["id"], [])
        out_nodes.append(
            {
                "id": n["id"],
                "kind": n["kind"],
                "title": inert(n["title"] or ""),
                "position": pos,
                "citations": n.get("citation_count") or 0,
                "support": n.get("support"),
                "level": support_level(n.get("support")),
                # "Superseded by <paper> (evidence arrived <date>)": a newer paper contradicts it
                "challenged": ((n.get("challenged_by") or [{}])[0]).get("line", ""),
                "children": len(children),
                "hidden": count(n["id"]) if n["collapsed"] and children else 0,
                "collapsed": bool(n["collapsed"]),
                "live": n["id"] in live_ids,
                "hue": hues.get(n["id"], -1),
                "created": str(n.get("created_at") or ""),  # the canvas opens on the newest branch
            }
        )
        if n["parent_id"]:
            edges.append({"id": "t-" + n["id"], "source": n["parent_id"], "target": n["id"], "kind": "tree"})
        if not n["collapsed"]:
            stack.extend(reversed(children))
    for r in relations:
        if r["source_id"] in visible and r["target_id"] in visible:
            edges.append({"id": "r-" + r["id"], "source": r["source_id"], "target": r["target_id"], "kind": r["kind"]})
    return {"nodes": out_nodes, "edges": edges}


def probe(db: Session, owner_id: str, map_id: str) -> tuple[int | None, str | None]:
    """(map revision or None when gone or not the owner's, id of the newest active run on it)."""
    rev = db.exec(select(Mindmap.revision).where(Mindmap.id == map_id, Mindmap.owner_id == owner_id)).first()
    run = db.exec(
        select(Run.id)
        .where(
            Run.resource_type == "mindmap",
            Run.resource_id == map_id,
            Run.owner_id == owner_id,
            col(Run.status).in_(RunStatus.ACTIVE),
        )
        .order_by(col(Run.created_at).desc())
    ).first()
    return rev, run


def probe_for(db: Session, owner_id: str, map_id: str, user_id: str) -> tuple[int | None, str | None]:
    """`probe` for any member (authorized by the caller): the map's revision, and the newest
    active run `user_id` started on it (other members' runs reach them through the revision)."""
    rev, _ = probe(db, owner_id, map_id)
    return rev, probe(db, user_id, map_id)[1] if rev is not None else None


@dataclass
class Change:
    """What one run event changed beyond nodes and relations (for the view's labels)."""

    finished: bool = False
    note: str | None = None  # the run's progress line, when it changed
    finding: str | None = None  # what a run that found nothing says
    route: str | None = None  # how a message run was answered, in words
    text: str = ""  # streamed answer text
    proposal: dict[str, Any] | None = None  # a new restructure/chapters proposal


@dataclass
class LiveMap:
    """A map in memory: its nodes (by id), relations and proposal ids, and the run's writes."""

    nodes: dict[str, dict[str, Any]]
    relations: list[dict[str, Any]]
    proposal_ids: set[str] = field(default_factory=set)
    live_ids: list[str] = field(default_factory=list)  # newest run-written nodes, oldest first
    written: int = 0  # nodes the followed run wrote

    def counted_write(self, ev: RunEvent) -> bool:
        """Is `ev` a run write (one revision bump each) this map does not hold yet? Only those
        are counted into the revision; anything else leaves it behind, so the map is re-read."""
        data = ev.data if isinstance(ev.data, dict) else {}
        if not data.get("id"):
            return False
        if ev.type == "node":
            return not data.get("updated") and data["id"] not in self.nodes and data.get("parent_id") in self.nodes
        if ev.type == "relation":
            return not any(r["id"] == data["id"] for r in self.relations)
        if ev.type == "proposal":
            return data["id"] not in self.proposal_ids
        return False

    def apply(self, ev: RunEvent) -> Change:
        """Apply one run event; nodes and relations change in place (relations: a new list)."""
        data = ev.data if isinstance(ev.data, dict) else {}
        out = Change()
        if ev.type in ("node", "relation", "proposal"):
            if data.get("id"):
                self._write(ev, data, out)
        else:
            _progress(ev, data, out)
        return out

    def _write(self, ev: RunEvent, data: dict[str, Any], out: Change) -> None:
        """A node, relation or proposal the run wrote."""
        if ev.type == "node":
            self._node(ev, data, out)
        elif ev.type == "relation":
            if not any(r["id"] == data["id"] for r in self.relations):
                self.relations = [
                    *self.relations,
                    {
                        "id": data["id"],
                        "source_id": data["source_id"],
                        "target_id": data["target_id"],
                        "kind": data.get("kind", "contradicts"),
                    },
                ]
        elif data["id"] not in self.proposal_ids:
            self.proposal_ids.add(data["id"])
            out.proposal = data

    def _node(self, ev: RunEvent, data: dict[str, Any], out: Change) -> None:
        old = self.nodes.get(data["id"])
        if old is not None:  # an update of a node the map holds
            for k in ("title", "kind", "parent_id", "body"):
                if k in data:
                    old[k] = data[k]
        elif data.get("parent_id") in self.nodes:  # a new node under one the map holds
            self.nodes[data["id"]] = {
                "id": data["id"],
                "parent_id": data["parent_id"],
                "kind": data.get("kind", "claim"),
                "title": data.get("title", ""),
                "body": data.get("body", ""),
                "order": data.get("order", 0),
                "position": None,
                "collapsed": False,
                "created_by": "agent",
                "run_id": data.get("run_id"),
                "confidence": data.get("confidence"),
                "citation_count": data.get("citations", 0),
                "support": data.get("support"),
                "created_at": f"~{ev.id}",
            }
            self.live_ids = [*self.live_ids[-(LIVE_IDS_KEPT - 1) :], data["id"]]
            self.written += 1
            out.note = f"{self.written} node(s) written"

    def insert(self, node: dict[str, Any], expand_parent: bool) -> bool:
        """Show a node this view just added (add child / sibling) the way the service stored it:
        siblings from its place on shift down one, the parent expands. False when its parent
        is not in the map (the caller re-reads the map)."""
        parent = self.nodes.get(node.get("parent_id") or "")
        if parent is None:
            return False
        order = node.get("order") or 0
        for n in self.nodes.values():
            if n["parent_id"] == parent["id"] and (n.get("order") or 0) >= order:
                n["order"] = (n.get("order") or 0) + 1
        if expand_parent:
            parent["collapsed"] = False
        self.nodes[node["id"]] = dict(node)
        return True

    def patch(self, node: dict[str, Any]) -> None:
        """Take an edited node's changed fields (title, body, kind, collapsed, position, …)."""
        old = self.nodes.get(node["id"])
        if old is not None:
            old.update(
                {
                    k: node[k]
                    for k in ("title", "body", "kind", "collapsed", "position", "citation_count", "support")
                    if k in node
                }
            )


def _progress(ev: RunEvent, data: dict[str, Any], out: Change) -> None:
    """What the run is doing: its route, its text, its agents' steps, its status."""
    if ev.type == "route":
        out.route = ROUTE_LABELS.get(str(data.get("route")), str(data.get("route")))
    elif ev.type == "text":
        out.text = str(data.get("delta", ""))
    elif ev.type == "agent":
        role = data.get("role", "")
        if "aspects" in data:
            out.note = f"{role}: {len(data['aspects'])} aspect(s)"
        elif data.get("done"):
            out.finding = str(data.get("note") or "")
            out.note = out.finding or "writing done"
        elif "pass" in data:
            out.note = f"{role}: pass {data['pass']}"
    elif ev.type == "status" and data.get("status") == RunStatus.RUNNING:
        out.note = "Running…"
    elif ev.type == "status" and data.get("status") == RunStatus.STOPPED:
        out.note = "Settling…"
    elif ev.type == "done":
        out.finished = True
