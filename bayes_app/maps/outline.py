"""The map as an outline: one-step moves (up, down, indent, outdent) over `move_node`, the
outline's rows (an indented tree in reading order) and a colour per first-level branch.

The rows are what the outline view (`components/mindmap_outline.py`) shows; the moves are what
its keys and buttons do. Both work on the node dicts `service.map_view` returns (id, parent_id,
kind, title, order, created_at, collapsed, citation_count) and the citation dicts beside them.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from bayes_app.maps.access import get_node
from bayes_app.maps.edits import move_node
from bayes_app.maps.errors import MapError
from bayes_app.models import MapNode

STEPS = ("up", "down", "indent", "outdent")
HUES = 8  # distinct branch colours; the canvas and the outline cycle through them
QUOTE_CHARS = 220  # the quote shown under a claim in the outline


def _siblings(db: Session, node: MapNode) -> list[MapNode]:
    return sorted(
        db.exec(select(MapNode).where(MapNode.parent_id == node.parent_id)), key=lambda n: (n.order_index, n.created_at)
    )


def move_step(db: Session, owner_id: str, map_id: str, node_id: str, step: str) -> dict[str, Any]:
    """Move a node one step in the outline: "up"/"down" among its siblings, "indent" (under
    the sibling above, as its last child), "outdent" (right after its parent). One undoable
    edit (`move_node`); a step that cannot apply raises MapError with the reason."""
    if step not in STEPS:
        raise MapError("bad_field", f"step must be one of {', '.join(STEPS)}.")
    node = get_node(db, owner_id, map_id, node_id)
    if node.parent_id is None:
        raise MapError("move_root", "The root question cannot be moved.")
    sibs = _siblings(db, node)
    i = next(k for k, s in enumerate(sibs) if s.id == node.id)
    if step == "up":
        if i == 0:
            raise MapError("move_edge", "This node is already first under its parent.")
        return move_node(db, owner_id, map_id, node.id, node.parent_id, sibs[i - 1].order_index)
    if step == "down":
        if i == len(sibs) - 1:
            raise MapError("move_edge", "This node is already last under its parent.")
        return move_node(db, owner_id, map_id, node.id, node.parent_id, sibs[i + 1].order_index + 1)
    if step == "indent":
        if i == 0:
            raise MapError("move_edge", "There is no node above to indent under.")
        return move_node(db, owner_id, map_id, node.id, sibs[i - 1].id)
    parent = get_node(db, owner_id, map_id, node.parent_id)
    if parent.parent_id is None:
        raise MapError("move_edge", "This node is already at the first level.")
    return move_node(db, owner_id, map_id, node.id, parent.parent_id, parent.order_index + 1)


def _children(nodes: dict[str, dict[str, Any]]) -> dict[str | None, list[dict[str, Any]]]:
    kids: dict[str | None, list[dict[str, Any]]] = {}
    for n in nodes.values():
        kids.setdefault(n["parent_id"], []).append(n)
    for lst in kids.values():
        lst.sort(key=lambda n: (n.get("order") or 0, n.get("created_at") or ""))
    return kids


def branch_hues(nodes: dict[str, dict[str, Any]]) -> dict[str, int]:
    """A colour index (0..HUES-1) per node: that of its first-level branch, in branch order;
    -1 for the root. Themes and their claims share their branch's colour."""
    kids = _children(nodes)
    hues: dict[str, int] = {}
    for root in kids.get(None, []):
        hues[root["id"]] = -1
        for k, top in enumerate(kids.get(root["id"], [])):
            stack = [top]
            while stack:
                n = stack.pop()
                hues[n["id"]] = k % HUES
                stack.extend(kids.get(n["id"], []))
    return hues


def outline_rows(nodes: dict[str, dict[str, Any]], first_citations: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The visible outline in reading order (depth first, children in their order, nothing under
    a collapsed node). Each row: id, parent_id, level (1 = root), kind, title, expanded ("true",
    "false", or "" for a leaf: the aria-expanded value), hue, citations (count), quote (of the
    first citation; "" when the title already says it), cite_quote (that quote in full, up to
    300 characters, for the link that opens the page highlighted), page, document_id (of the first
    citation, "" without one), challenged ("Superseded by <paper> (…)" or ""), posinset and setsize."""
    kids = _children(nodes)
    hues = branch_hues(nodes)
    rows: list[dict[str, Any]] = []
    stack: list[tuple[dict[str, Any], int, int, int]] = [
        (n, 1, k + 1, len(kids.get(None, []))) for k, n in reversed(list(enumerate(kids.get(None, []))))
    ]
    while stack:
        n, level, pos, size = stack.pop()
        children = kids.get(n["id"], [])
        cite = first_citations.get(n["id"]) or {}
        cite_quote = quote = " ".join(str(cite.get("quote") or "").split())
        title = " ".join(str(n["title"] or "").split())
        if title and title.casefold() in quote.casefold():  # the claim is its quote: show it once
            quote = ""
        rows.append(
            {
                "id": n["id"],
                "parent_id": n["parent_id"] or "",
                "level": level,
                "kind": n["kind"],
                "title": n["title"],
                "expanded": ("false" if n["collapsed"] else "true") if children else "",
                "hue": hues.get(n["id"], -1),
                "citations": n.get("citation_count") or 0,
                "quote": quote[:QUOTE_CHARS] + ("…" if len(quote) > QUOTE_CHARS else ""),
                "cite_quote": cite_quote[:300],
                "page": str(cite.get("page") or ""),
                "document_id": str(cite.get("document_id") or ""),
                "challenged": ((n.get("challenged_by") or [{}])[0]).get("line", ""),
                "posinset": pos,
                "setsize": size,
            }
        )
        if children and not n["collapsed"]:
            stack.extend((c, level + 1, k + 1, len(children)) for k, c in reversed(list(enumerate(children))))
    return rows
