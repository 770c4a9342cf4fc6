"""A node's history: every recorded edit that changed it, who made it, what it set and what was
there before — so that when two users change the same field, the one overwritten stays visible."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from bayes_app.maps.access import get_map, get_node
from bayes_app.maps.views import _iso
from bayes_app.models import MapEdit

_SHOWN = ("title", "body", "kind", "parent_id", "collapsed", "confidence")


def node_history(db: Session, owner_id: str, map_id: str, node_id: str) -> list[dict[str, Any]]:
    """The edits of the map's undo log that touched `node_id`, newest first."""
    get_node(db, owner_id, map_id, node_id)
    out = []
    edits = db.exec(select(MapEdit).where(MapEdit.map_id == map_id).order_by(col(MapEdit.created_at).desc()))
    for e in edits:
        if node_id not in (e.node_ids or []):
            continue
        restored = e.undo.get("restore", {}).get("nodes", [])
        before: dict[str, Any] = next((r for r in restored if r.get("id") == node_id), {})
        after = e.after.get(node_id, {})
        out.append(
            {
                "edit_id": e.id,
                "action": e.action,
                "user_id": e.user_id,
                "at": _iso(e.created_at),
                "undone": e.undone,
                "before": {f: before[f] for f in _SHOWN if f in before and (f in after or not after)},
                "after": {f: v for f, v in after.items() if f in _SHOWN},
            }
        )
    return out


def map_history(db: Session, owner_id: str, map_id: str) -> list[dict[str, Any]]:
    """The map's recorded changes, newest first (the undo log: the last `UNDO_KEEP`): who made
    each (a run's writes are one change, authored by who started the run), when, the nodes it
    touched, and whether it was undone."""
    from bayes_app.models import User

    get_map(db, owner_id, map_id)
    edits = list(db.exec(select(MapEdit).where(MapEdit.map_id == map_id).order_by(col(MapEdit.created_at).desc())))
    ids = {e.user_id or owner_id for e in edits}
    emails = {u.id: u.email for u in db.exec(select(User).where(col(User.id).in_(ids)))} if ids else {}
    return [
        {
            "edit_id": e.id,
            "action": e.action,
            "user_id": e.user_id or owner_id,
            "email": emails.get(e.user_id or owner_id),
            "at": _iso(e.created_at),
            "node_ids": list(e.node_ids or []),
            "run_id": e.run_id,
            "undone": e.undone,
        }
        for e in edits
    ]
