"""Storing what a sync fetched (collections, items, deletions) in the mirror tables, and the
Zotero collections as Bayes collections."""

from __future__ import annotations

import contextlib
import hashlib
import logging

from sqlalchemy import bindparam, insert, update
from sqlmodel import Session, col, select

from bayes_app.library import documents as lib
from bayes_app.models import (
    Collection,
    ZoteroCollection,
    ZoteroItem,
    ZoteroLibrary,
)
from bayes_app.zotero import mapping
from bayes_app.zotero.reconcile import _remove_document
from bayes_app.zotero.sync_state import RECONCILE_BATCH, _Ctx

log = logging.getLogger("bayes.zotero")


# ---- storing what was fetched ---------------------------------------------------------------
def _store_collections(ctx: _Ctx, got: list[dict]) -> None:
    with ctx.sf() as db:
        for obj in got:
            d = obj["data"]
            row = db.get(ZoteroCollection, (ctx.library_id, obj["key"])) or ZoteroCollection(
                library_id=ctx.library_id, key=obj["key"]
            )
            row.version, row.name = int(obj["version"]), str(d.get("name", ""))[:300]
            row.parent_key = d.get("parentCollection") or None
            row.trashed = bool(d.get("deleted"))
            db.add(row)
        db.commit()


def _store_items(ctx: _Ctx, got: list[dict]) -> None:
    """Upsert a fetched batch (bulk statements: this runs for every item of a big library)."""
    if not got:
        return
    values = []
    for obj in got:
        d = obj["data"]
        values.append(
            {
                "k": obj["key"],
                "version": int(obj["version"]),
                "item_type": str(d.get("itemType", ""))[:40],
                "parent_key": d.get("parentItem") or None,
                "trashed": mapping.is_trashed(d),
                "data": mapping.compact(d) | ({"_fp": _fingerprint(d)} if ctx.api == "local" else {}),
                "dirty": True,
            }
        )
    with ctx.sf() as db:
        known = set(
            db.exec(
                select(ZoteroItem.key).where(
                    ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_([v["k"] for v in values])
                )
            )
        )
        fresh = [
            {**{k: v for k, v in row.items() if k != "k"}, "key": row["k"], "library_id": ctx.library_id}
            for row in values
            if row["k"] not in known
        ]
        old = [row for row in values if row["k"] in known]
        if fresh:
            db.connection().execute(insert(ZoteroItem.__table__), fresh)  # type: ignore[attr-defined]
        if old:
            t = ZoteroItem.__table__  # type: ignore[attr-defined]
            db.connection().execute(
                update(t)
                .where(t.c.library_id == ctx.library_id, t.c.key == bindparam("k"))
                .values(
                    version=bindparam("version"),
                    item_type=bindparam("item_type"),
                    parent_key=bindparam("parent_key"),
                    trashed=bindparam("trashed"),
                    data=bindparam("data"),
                    dirty=bindparam("dirty"),
                ),
                old,
            )
        db.commit()


def _delete_items(ctx: _Ctx, keys: list[str]) -> None:
    """Items deleted in Zotero: remove their documents, then forget them."""
    for i in range(0, len(keys), RECONCILE_BATCH):
        batch = keys[i : i + RECONCILE_BATCH]
        purges: list[tuple[str, str | None]] = []
        with ctx.sf() as db:
            rows = list(
                db.exec(
                    select(ZoteroItem).where(ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_(batch))
                )
            )
            for row in rows:
                if row.document_id:
                    purges += _remove_document(db, ctx, row.document_id)
                # children of a deleted parent must be reconciled (Zotero deletes them too)
                db.exec(
                    update(ZoteroItem)
                    .where(col(ZoteroItem.library_id) == ctx.library_id, col(ZoteroItem.parent_key) == row.key)
                    .values(dirty=True)
                )
                db.delete(row)
            db.commit()
        ctx.result.items_deleted += len(rows)
        for doc_id, sha in purges:
            ctx.hooks.purge_document(doc_id, sha)


def _delete_collections(ctx: _Ctx, keys: list[str]) -> None:
    if not keys:
        return
    touched: list[str] = []
    with ctx.sf() as db:
        for row in db.exec(
            select(ZoteroCollection).where(
                ZoteroCollection.library_id == ctx.library_id, col(ZoteroCollection.key).in_(keys)
            )
        ):
            if row.collection_id and row.created_collection:
                with contextlib.suppress(lib.NotFound):
                    touched += lib.delete_collection(db, ctx.owner_id, row.collection_id)
            db.delete(row)
        db.commit()
    for d in touched:
        ctx.hooks.collections_changed(d)


# ---- collections → Bayes collections -------------------------------------------------------------
def _apply_collections(ctx: _Ctx) -> None:
    """Create, rename (moved or renamed in Zotero) or remove (trashed) Bayes collections."""
    touched: list[str] = []
    with ctx.sf() as db:
        rows = {
            r.key: r for r in db.exec(select(ZoteroCollection).where(ZoteroCollection.library_id == ctx.library_id))
        }
        paths = mapping.collection_paths({k: (r.name, r.parent_key) for k, r in rows.items()})
        library = db.get(ZoteroLibrary, ctx.library_id)
        assert library is not None  # the sync holds the library's lease
        lib_name = (library.name or "Zotero")[:100]
        mapped_elsewhere = set(
            db.exec(
                select(ZoteroCollection.collection_id)
                .join(ZoteroLibrary, col(ZoteroLibrary.id) == ZoteroCollection.library_id)
                .where(
                    ZoteroLibrary.owner_id == ctx.owner_id,
                    ZoteroCollection.library_id != ctx.library_id,
                    col(ZoteroCollection.collection_id).is_not(None),
                )
            )
        )
        for key, row in sorted(rows.items(), key=lambda kv: paths[kv[0]]):
            if row.trashed:
                if row.collection_id and row.created_collection:
                    with contextlib.suppress(lib.NotFound):
                        touched += lib.delete_collection(db, ctx.owner_id, row.collection_id)
                row.collection_id, row.created_collection = None, False
                db.add(row)
                continue
            current = db.get(Collection, row.collection_id) if row.collection_id else None
            if current is not None and current.name == paths[key]:
                continue
            taken = {r.collection_id for r in rows.values() if r.collection_id is not None}
            taken |= {c for c in mapped_elsewhere if c is not None}
            want, clash = _free_name(db, ctx.owner_id, key, paths[key], lib_name, taken)
            _link(db, ctx.owner_id, row, current, want, clash)
        db.commit()
    for d in touched:
        ctx.hooks.collections_changed(d)


def _free_name(
    db: Session, owner_id: str, key: str, path: str, lib_name: str, taken: set[str]
) -> tuple[str, Collection | None]:
    """The Bayes collection name for a Zotero collection (its path; with the library's name, or
    then its key, when a collection of that name is another Zotero collection's) and the user's
    collection of that name (None: there is none)."""

    def named(name: str) -> Collection | None:
        return db.exec(select(Collection).where(Collection.owner_id == owner_id, Collection.name == name)).first()

    want = path
    clash = named(want)
    if clash is not None and clash.id in taken:
        want = f"{want} ({lib_name})"[:300]
        clash = named(want)
        if clash is not None and clash.id in taken:
            want = f"{path[:280]} ({key})"
            clash = None
    return want, clash


def _link(
    db: Session, owner_id: str, row: ZoteroCollection, current: Collection | None, want: str, clash: Collection | None
) -> None:
    """The Zotero collection's Bayes collection: renamed, the user's own of that name, or a new one."""
    if current is not None and row.created_collection and clash is None:
        current.name = want
        db.add(current)
    elif clash is not None:  # the user already has this collection: use it, never delete it
        row.collection_id, row.created_collection = clash.id, False
    else:
        made = Collection(owner_id=owner_id, name=want)
        db.add(made)
        db.flush()
        row.collection_id, row.created_collection = made.id, True
    db.add(row)
    db.flush()


def _fingerprint(data: dict) -> str:
    return hashlib.sha1(
        repr(sorted(mapping.compact(data).items())).encode() + str(data.get("dateModified", "")).encode()
    ).hexdigest()
