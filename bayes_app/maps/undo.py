"""The user's undo log: what an edit needs to be reversed, recorded with the edit; undo the latest."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete
from sqlmodel import Session, col, select

from bayes_app.db import atomic
from bayes_app.maps.access import _touch, get_map
from bayes_app.models import (
    Citation, MapEdit, MapNode, NodeRelation,
)

UNDO_KEEP = 200  # undo entries kept per map


# ---- undo log --------------------------------------------------------------------------------
_NODE_FIELDS = ("id", "map_id", "parent_id", "kind", "title", "body", "order_index", "pos_x", "pos_y",
                "collapsed", "created_by", "run_id", "confidence")
_CIT_FIELDS = ("id", "map_id", "node_id", "document_id", "chunk_id", "page", "quote", "char_start",
               "char_end", "origin", "agent", "support_score", "support_label", "suggested_rewrite",
               "source_title", "source_removed_at", "source_removed_reason")
_REL_FIELDS = ("id", "map_id", "source_id", "target_id", "kind", "created_by", "run_id")


def _snap(row: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    return {f: getattr(row, f) for f in fields}


class _Undo:
    """Collects, for one edit, the rows to delete and the rows to restore on undo."""

    def __init__(self) -> None:
        self.delete: dict[str, list[str]] = {"nodes": [], "citations": [], "relations": []}
        self.restore: dict[str, list[dict]] = {"nodes": [], "citations": [], "relations": []}
        self._seen: set[str] = set()

    def created(self, table: str, row_id: str) -> None:
        self.delete[table].append(row_id)

    def before(self, table: str, row: Any) -> None:
        if row.id in self._seen:
            return
        self._seen.add(row.id)
        fields = {"nodes": _NODE_FIELDS, "citations": _CIT_FIELDS, "relations": _REL_FIELDS}[table]
        self.restore[table].append(_snap(row, fields))

    def save(self, db: Session, map_id: str, action: str) -> None:
        db.add(MapEdit(map_id=map_id, action=action,
                       undo={"delete": self.delete, "restore": self.restore}))
        _touch(db, map_id)


def _prune_undo(db: Session, map_id: str) -> None:
    """Keep the newest UNDO_KEEP undo entries of a map."""
    old = list(db.exec(select(MapEdit.id).where(MapEdit.map_id == map_id)
                       .order_by(col(MapEdit.created_at).desc()).offset(UNDO_KEEP)))
    if old:
        db.exec(delete(MapEdit).where(col(MapEdit.id).in_(old)))  # type: ignore[call-overload]


def _commit_edit(db: Session, map_id: str, action: str, u: _Undo) -> None:
    with atomic(db):
        u.save(db, map_id, action)
        db.flush()
        _prune_undo(db, map_id)


def undo(db: Session, owner_id: str, map_id: str) -> str | None:
    """Reverse the latest user edit not yet undone; returns its action name (None: nothing)."""
    get_map(db, owner_id, map_id)
    edit = db.exec(select(MapEdit).where(MapEdit.map_id == map_id, col(MapEdit.undone).is_(False))
                   .order_by(col(MapEdit.created_at).desc())).first()
    if edit is None:
        return None
    with atomic(db):
        dele, rest = edit.undo.get("delete", {}), edit.undo.get("restore", {})
        if dele.get("relations"):
            db.exec(delete(NodeRelation).where(col(NodeRelation.id).in_(dele["relations"])))  # type: ignore[call-overload]
        if dele.get("citations"):
            db.exec(delete(Citation).where(col(Citation.id).in_(dele["citations"])))  # type: ignore[call-overload]
        if dele.get("nodes"):
            db.exec(delete(MapNode).where(col(MapNode.id).in_(dele["nodes"])))  # type: ignore[call-overload]
        edit_id = edit.id
        db.expunge_all()  # rows deleted in bulk (here or by an earlier delete) must not linger
        edit = db.get(MapEdit, edit_id)
        for table, model in (("nodes", MapNode), ("citations", Citation), ("relations", NodeRelation)):
            for data in rest.get(table, []):
                row = db.get(model, data["id"], populate_existing=True)
                if row is None:
                    if table == "nodes" and data.get("parent_id") and db.get(MapNode, data["parent_id"]) is None:
                        continue  # its parent is gone since: nothing to hang it on
                    db.add(model(**data))
                else:
                    for k, v in data.items():
                        setattr(row, k, v)
                    db.add(row)
                db.flush()
        edit.undone = True
        db.add(edit)
        _touch(db, map_id)
    return edit.action
