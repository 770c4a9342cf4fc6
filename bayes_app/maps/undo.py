"""The user's undo log: what an edit needs to be reversed, recorded with the edit; undo the latest."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete
from sqlmodel import Session, col, select

from bayes_app.db import atomic
from bayes_app.maps.access import _touch, actor, get_map
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.maps.tree import check_shape
from bayes_app.models import (
    Citation,
    MapEdit,
    MapNode,
    NodeRelation,
)

UNDO_KEEP = 200  # undo entries kept per map


# ---- undo log --------------------------------------------------------------------------------
_NODE_FIELDS = (
    "id",
    "map_id",
    "parent_id",
    "kind",
    "title",
    "body",
    "order_index",
    "pos_x",
    "pos_y",
    "collapsed",
    "created_by",
    "run_id",
    "confidence",
)
_CIT_FIELDS = (
    "id",
    "map_id",
    "node_id",
    "document_id",
    "chunk_id",
    "page",
    "quote",
    "char_start",
    "char_end",
    "origin",
    "agent",
    "support_score",
    "support_label",
    "suggested_rewrite",
    "source_title",
    "source_removed_at",
    "source_removed_reason",
)
_REL_FIELDS = ("id", "map_id", "source_id", "target_id", "kind", "created_by", "run_id")


def _snap(row: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    return {f: getattr(row, f) for f in fields}


class _Undo:
    """Collects, for one edit, the rows to delete and the rows to restore on undo."""

    def __init__(self) -> None:
        self.delete: dict[str, list[str]] = {"nodes": [], "citations": [], "relations": []}
        self.restore: dict[str, list[dict]] = {"nodes": [], "citations": [], "relations": []}
        self._seen: set[str] = set()
        self._nodes: list[Any] = []  # the node rows changed, to record what the edit set

    def created(self, table: str, row_id: str) -> None:
        self.delete[table].append(row_id)

    def before(self, table: str, row: Any) -> None:
        if row.id in self._seen:
            return
        self._seen.add(row.id)
        fields = {"nodes": _NODE_FIELDS, "citations": _CIT_FIELDS, "relations": _REL_FIELDS}[table]
        self.restore[table].append(_snap(row, fields))
        if table == "nodes":
            self._nodes.append(row)

    def after(self) -> dict[str, dict[str, Any]]:
        """node id → the fields this edit changed, with the values it set."""
        before = {r["id"]: r for r in self.restore["nodes"]}
        out: dict[str, dict[str, Any]] = {}
        for row in self._nodes:
            changed = {f: getattr(row, f) for f in _NODE_FIELDS if getattr(row, f) != before[row.id][f]}
            if changed:
                out[row.id] = changed
        return out

    def save(
        self, db: Session, map_id: str, action: str, user_id: str | None = None, run_id: str | None = None
    ) -> None:
        node_ids = list(dict.fromkeys(self.delete["nodes"] + [r["id"] for r in self.restore["nodes"]]))
        db.add(
            MapEdit(
                map_id=map_id,
                action=action,
                user_id=user_id or actor(),
                run_id=run_id,
                node_ids=node_ids,
                after=self.after(),
                undo={"delete": self.delete, "restore": self.restore},
            )
        )
        _touch(db, map_id)


def _prune_undo(db: Session, map_id: str) -> None:
    """Keep the newest UNDO_KEEP undo entries of a map."""
    old = list(
        db.exec(
            select(MapEdit.id)
            .where(MapEdit.map_id == map_id)
            .order_by(col(MapEdit.created_at).desc())
            .offset(UNDO_KEEP)
        )
    )
    if old:
        db.exec(delete(MapEdit).where(col(MapEdit.id).in_(old)))


def _commit_edit(db: Session, map_id: str, action: str, u: _Undo) -> None:
    with atomic(db):
        u.save(db, map_id, action)
        db.flush()
        _prune_undo(db, map_id)


def _amend_edit(db: Session, map_id: str, action: str, u: _Undo) -> bool:
    """Fold `u` into the map's latest edit when that one is `action` and not undone, so one
    undo reverts both (the canvas's layout right after an accepted regrouping). Rows the
    latest edit already restores or deletes keep its record. False when there is none."""
    who = actor()
    last = db.exec(
        select(MapEdit)
        .where(MapEdit.map_id == map_id, col(MapEdit.undone).is_(False))
        .where(col(MapEdit.user_id) == who if who else col(MapEdit.user_id).is_(None))
        .order_by(col(MapEdit.created_at).desc())
    ).first()
    if last is None or last.action != action:
        return False
    with atomic(db):
        _merge(db, map_id, last, u)
    return True


def _merge(db: Session, map_id: str, last: MapEdit, u: _Undo) -> None:
    """Fold `u` into the edit `last` (one undo reverts both); rows `last` already restores or
    deletes keep its record."""
    rec = {
        "delete": {k: list(v) for k, v in last.undo.get("delete", {}).items()},
        "restore": {k: list(v) for k, v in last.undo.get("restore", {}).items()},
    }
    for table, rows in u.restore.items():
        known = set(rec["delete"].get(table, [])) | {r["id"] for r in rec["restore"].get(table, [])}
        rec["restore"].setdefault(table, []).extend(r for r in rows if r["id"] not in known)
    for table, ids in u.delete.items():
        rec["delete"].setdefault(table, []).extend(ids)
    after = {k: dict(v) for k, v in last.after.items()}
    for node_id, fields in u.after().items():
        after.setdefault(node_id, {}).update(fields)
    last.undo = rec
    last.after = after
    last.node_ids = list(dict.fromkeys([*last.node_ids, *u.delete["nodes"], *after]))
    db.add(last)
    _touch(db, map_id)


def record_run_write(db: Session, map_id: str, run_id: str, user_id: str | None, action: str, u: _Undo) -> None:
    """Record an agent write in its run's one history entry (created by the run's first write,
    authored by the user who started the run), in the caller's transaction: the starter's undo
    reverses the run's writes, and the map's history shows them."""
    last = db.exec(
        select(MapEdit).where(MapEdit.map_id == map_id, MapEdit.run_id == run_id, col(MapEdit.undone).is_(False))
    ).first()
    if last is None:
        u.save(db, map_id, action, user_id=user_id, run_id=run_id)
        db.flush()
        _prune_undo(db, map_id)
    else:
        _merge(db, map_id, last, u)


def _mine(user_id: str, owner_id: str) -> Any:
    """The undo entries of `user_id` (the owner's include those recorded before authorship)."""
    if user_id == owner_id:
        return col(MapEdit.user_id).is_(None) | (col(MapEdit.user_id) == user_id)
    return col(MapEdit.user_id) == user_id


def _keep_others(db: Session, edit: MapEdit, user_id: str, rest: dict, dele: dict) -> tuple[dict, dict]:
    """What undoing `edit` may touch without reverting another user's change: of each node it
    changed, only the fields still holding the value it set; nodes it created are kept when
    another user has edited them or added under them since. Entries recorded before 0021 (no `after`) stay whole."""
    if not edit.after and not edit.user_id:
        return rest, dele
    nodes = []
    for snap in rest.get("nodes", []):
        row = db.get(MapNode, snap["id"], populate_existing=True)
        if row is None:
            nodes.append(snap)  # the edit deleted it: put it back whole
            continue
        mine = edit.after.get(snap["id"], {})
        fields = {f: snap[f] for f, v in mine.items() if getattr(row, f) == v}
        if fields:
            nodes.append({"id": snap["id"], **fields})
    created = dele.get("nodes", [])
    others: set[str | None] = {
        n.id
        for n in db.exec(select(MapNode).where(col(MapNode.id).in_(created)))
        if n.edited_by and n.edited_by != user_id
    }
    # ... or has children another user made under it (deleting it would take theirs along)
    others |= {
        n.parent_id
        for n in db.exec(select(MapNode).where(col(MapNode.parent_id).in_(created)))
        if n.author_id and n.author_id != user_id and n.id not in created
    }
    return {**rest, "nodes": nodes}, {**dele, "nodes": [i for i in dele.get("nodes", []) if i not in others]}


def undo(db: Session, owner_id: str, map_id: str) -> str | None:
    """Reverse the acting user's latest edit not yet undone (never another user's); returns
    its action name (None: nothing). A field another user changed since keeps their value."""
    get_map(db, owner_id, map_id)
    user_id = actor(owner_id) or owner_id
    edit = db.exec(
        select(MapEdit)
        .where(MapEdit.map_id == map_id, col(MapEdit.undone).is_(False), _mine(user_id, owner_id))
        .order_by(col(MapEdit.created_at).desc())
    ).first()
    if edit is None:
        return None
    return _reverse(db, map_id, edit, user_id)


def revert(db: Session, owner_id: str, map_id: str, edit_id: str) -> str:
    """Reverse one edit of the map's history: the owner any edit (an editor's, even after the
    editor was removed), a member only their own. A deleted subtree comes back with its
    citations and links; a field changed by someone since keeps their value. Returns its action.
    MapNotFound: no such edit; MapError 403 `not_your_edit`, 409 `already_undone`."""
    get_map(db, owner_id, map_id)
    user_id = actor(owner_id) or owner_id
    edit = db.get(MapEdit, edit_id, populate_existing=True)
    if edit is None or edit.map_id != map_id:
        raise MapNotFound("edit")
    author = edit.user_id or owner_id  # entries from before sharing are the owner's
    if user_id != owner_id and author != user_id:
        raise MapError("not_your_edit", "Only the map's owner can revert another member's edit.", 403)
    if edit.undone:
        raise MapError("already_undone", "This change was already undone.", 409)
    return _reverse(db, map_id, edit, author)


def _reverse(db: Session, map_id: str, edit: MapEdit, user_id: str) -> str:
    """Undo `edit` as recorded, keeping what users other than `user_id` (its author) changed since."""
    with atomic(db):
        rest, dele = _keep_others(db, edit, user_id, edit.undo.get("restore", {}), edit.undo.get("delete", {}))
        edit_id = edit.id
        db.expunge_all()
        edit = db.get_one(MapEdit, edit_id)
        # nodes first, parents before their children: a node moved under a node this edit
        # created is back under its old parent before that one is deleted (no cascade reaches it)
        _restore(db, MapNode, rest.get("nodes", []))
        if dele.get("relations"):
            db.exec(delete(NodeRelation).where(col(NodeRelation.id).in_(dele["relations"])))
        if dele.get("citations"):
            db.exec(delete(Citation).where(col(Citation.id).in_(dele["citations"])))
        if dele.get("nodes"):
            db.exec(delete(MapNode).where(col(MapNode.id).in_(dele["nodes"])))
        db.expunge_all()  # rows deleted in bulk (here or by an earlier delete) must not linger
        edit = db.get_one(MapEdit, edit_id)
        _restore(db, Citation, rest.get("citations", []))
        _restore(db, NodeRelation, rest.get("relations", []))
        check_shape(db, map_id)
        edit.undone = True
        db.add(edit)
        _touch(db, map_id)
    return edit.action


def _restore(db: Session, model: Any, rows: list[dict[str, Any]]) -> None:
    """Put rows back as recorded: update those that exist, re-add those that are gone (a node
    only while its parent exists; parents are put back before their children)."""
    if model is MapNode:
        rows = _parents_first(rows)
    for data in rows:
        row = db.get(model, data["id"], populate_existing=True)
        if row is None:
            if model is MapNode and data.get("parent_id") and db.get(MapNode, data["parent_id"]) is None:
                continue  # its parent is gone since: nothing to hang it on
            db.add(model(**data))
        else:
            for k, v in data.items():
                setattr(row, k, v)
            db.add(row)
        db.flush()


def _parents_first(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Node snapshots ordered so that a node whose parent is also restored comes after it."""
    pending = {r["id"]: r for r in rows}
    out: list[dict[str, Any]] = []
    while pending:
        ready = [r for r in pending.values() if r.get("parent_id") not in pending]
        if not ready:  # a cycle cannot be recorded; keep the rest as they are
            ready = list(pending.values())
        for r in ready:
            out.append(r)
            del pending[r["id"]]
    return out
