"""The sync engine: Zotero Web API v3 incremental sync (and the local API by diffing keys).

One pass (Web API):
  1. `last_modified_version()` — one cheap request; equal to the stored version and no
     unfinished work → done (a no-op sync costs exactly one request).
  2. `collections?since=V&format=versions`, `items?since=V&format=versions&includeTrashed=1`.
  3. changed collections and items fetched by key, ≤ 50 per request; each batch is
     committed as `zotero_items` rows marked dirty (a killed sync keeps what it fetched).
  4. `deleted?since=V` (a 409 means the delete log no longer reaches V → full resync:
     since=0 and every stored object Zotero no longer lists is deleted).
  5. if the library version moved during the pass, start it again (bounded).
  6. collections → Bayes collections; dirty items → documents (download changed files,
     up to 4 at a time, through the normal upload/ingestion path); store the new version.

The version is stored only after everything up to it is committed, so a sync killed at
any point restarts from the last complete version; rows already fetched at their current
version are not fetched again, and documents are keyed by (library, attachment key), so
nothing is duplicated.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx2
from pyzotero import errors as ze
from sqlalchemy import bindparam, insert, or_, update
from sqlmodel import Session, col, select

from bayes_app.library import documents as lib
from bayes_app.library import storage
from bayes_app.models import (
    Collection,
    Document,
    DocumentCollection,
    SyncStatus,
    ZoteroCollection,
    ZoteroItem,
    ZoteroLibrary,
    new_id,
    utcnow,
)
from bayes_app.zotero import mapping
from bayes_app.zotero.client import Clients, Target, ZoteroAccessError, describe_error
from bayes_app.zotero.http import MAX_CONCURRENCY, Policy, RateLimited
from bayes_app.zotero.keys import decrypt_key

log = logging.getLogger("bayes.zotero")

KEY_BATCH = 50  # Zotero takes at most 50 keys per itemKey=/collectionKey= request
RECONCILE_BATCH = 40
MAX_RESTARTS = 5


@dataclass
class Hooks:
    """What the sync asks of the rest of the app after each commit (the broker, in the app)."""

    enqueue_ingest: Callable[[str, int], None]
    purge_document: Callable[[str, str | None], None]  # document id, file sha to remove or None
    collections_changed: Callable[[str], None]  # document id


@dataclass
class SyncOptions:
    files_root: Path | storage.FileStore
    max_file_bytes: int
    web_api_url: str
    local_api_url: str
    lease_s: float = 60.0
    policy: Policy | None = None
    transport: httpx2.BaseTransport | None = None  # tests may wrap the real one
    secret: str | None = None


@dataclass
class SyncResult:
    outcome: str  # "unchanged" | "synced" | "busy" | "error" | "rate_limited"
    version: int = 0
    requests: int = 0
    items_changed: int = 0
    items_deleted: int = 0
    collections_changed: int = 0
    documents_added: int = 0
    documents_updated: int = 0
    documents_removed: int = 0
    files_downloaded: int = 0
    problems: int = 0
    restarts: int = 0
    full_resync: bool = False
    seconds: float = 0.0
    error: str | None = None
    retry_in_s: float | None = None

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


class _Restart(Exception):
    """The library changed while we read it: run the pass again."""


class _FullResync(Exception):
    """The delete log does not reach our version (409): resync from 0."""


@dataclass
class _Ctx:
    sf: Callable[[], Session]
    library_id: str
    owner_id: str
    api: str
    token: str
    opts: SyncOptions
    hooks: Hooks
    clients: Clients
    result: SyncResult
    progress: dict = field(default_factory=dict)
    pool: ThreadPoolExecutor | None = None  # file downloads, ≤ 4 at a time


# ---- lease -----------------------------------------------------------------------------------
def claim(sf: Callable[[], Session], library_id: str, lease_s: float) -> str | None:
    """Take the library's sync lease (one sync per library at a time); None when held."""
    token = new_id()
    now = utcnow()
    with sf() as db:
        res = db.exec(update(ZoteroLibrary).where(
            ZoteroLibrary.id == library_id,
            or_(col(ZoteroLibrary.lease_until).is_(None), col(ZoteroLibrary.lease_until) < now),
        ).values(lease_token=token, lease_until=now + timedelta(seconds=lease_s),
                 status=SyncStatus.SYNCING))
        db.commit()
        return token if res.rowcount == 1 else None


def _renew(ctx: _Ctx, **progress) -> None:
    """Extend the lease and publish progress; raise if another sync took the library over."""
    ctx.progress.update(progress)
    with ctx.sf() as db:
        res = db.exec(update(ZoteroLibrary).where(
            ZoteroLibrary.id == ctx.library_id, ZoteroLibrary.lease_token == ctx.token,
        ).values(lease_until=utcnow() + timedelta(seconds=ctx.opts.lease_s), progress=dict(ctx.progress)))
        db.commit()
    if res.rowcount != 1:
        raise RuntimeError("lost the sync lease of this Zotero library (deleted or taken over)")


def _finish(ctx: _Ctx, status: str, *, version: int | None = None, error: str | None = None) -> None:
    with ctx.sf() as db:
        values: dict = dict(lease_token=None, lease_until=None, status=status, last_error=error,
                            last_sync_at=utcnow(), last_result=ctx.result.to_json(),
                            progress=dict(ctx.progress, phase="done" if status == SyncStatus.IDLE else status))
        if version is not None:
            values["version"] = version
        db.exec(update(ZoteroLibrary).where(ZoteroLibrary.id == ctx.library_id,
                                            ZoteroLibrary.lease_token == ctx.token).values(**values))
        db.commit()


# ---- entry point -------------------------------------------------------------------------------
def target_of(library: ZoteroLibrary, opts: SyncOptions) -> Target:
    if library.api == "local":
        return Target("local", opts.local_api_url, "user", "0")
    key = decrypt_key(library.api_key_encrypted or "", opts.secret)
    return Target("web", opts.web_api_url, library.library_type, library.library_key, key)


def sync_library(sf: Callable[[], Session], library_id: str, hooks: Hooks, opts: SyncOptions,
                 *, full: bool = False) -> SyncResult:
    """Bring one library up to date. Safe to run again at any time (and after a crash)."""
    t0 = time.monotonic()
    with sf() as db:
        library = db.get(ZoteroLibrary, library_id)
        if library is None:
            return SyncResult("error", error="no such library")
        owner_id, api, since = library.owner_id, library.api, library.version
        try:
            target = target_of(library, opts)
        except ValueError as err:
            return _fail_unclaimed(sf, library_id, str(err))
    token = claim(sf, library_id, opts.lease_s)
    if token is None:
        return SyncResult("busy", version=since)
    policy = opts.policy or Policy()
    before = policy.requests
    ctx = _Ctx(sf, library_id, owner_id, api, token, opts, hooks,
               Clients(target, policy, opts.transport), SyncResult("synced", version=since))
    try:
        version = _run(ctx, since, full)
        ctx.result.version = version
        ctx.result.requests = policy.requests - before
        ctx.result.seconds = round(time.monotonic() - t0, 3)
        _finish(ctx, SyncStatus.IDLE, version=version)
    except RateLimited as err:
        ctx.result.outcome, ctx.result.error, ctx.result.retry_in_s = "rate_limited", str(err), err.wait_s
        ctx.result.requests = policy.requests - before
        _finish(ctx, SyncStatus.QUEUED, error=str(err))
    except ZoteroAccessError as err:
        ctx.result.outcome, ctx.result.error = "error", err.message
        _finish(ctx, SyncStatus.ERROR, error=err.message)
    except httpx2.TransportError as err:
        if api != "local":
            _finish(ctx, SyncStatus.ERROR, error=f"Cannot reach Zotero ({type(err).__name__}); "
                                                 "the sync will be retried.")
            raise
        # The server's own Zotero is not running: say so once; the next sync tries again.
        message = ("The server's Zotero does not answer: start Zotero 7 on the server and enable "
                   "its local API, then press Sync.")
        ctx.result.outcome, ctx.result.error = "error", message
        _finish(ctx, SyncStatus.ERROR, error=message)
    except ze.PyZoteroError as err:
        mapped = describe_error(err)
        if mapped is None:
            _finish(ctx, SyncStatus.ERROR, error=f"Zotero answered with an error ({type(err).__name__}); "
                                                 "the sync will be retried.")
            raise
        ctx.result.outcome, ctx.result.error = "error", mapped.message
        _finish(ctx, SyncStatus.ERROR, error=mapped.message)
    except BaseException as err:
        _finish(ctx, SyncStatus.ERROR, error=f"The sync failed ({type(err).__name__}); it will be retried.")
        raise
    finally:
        if ctx.pool is not None:
            ctx.pool.shutdown(wait=True)
        ctx.clients.close()
    return ctx.result


def _fail_unclaimed(sf, library_id: str, message: str) -> SyncResult:
    with sf() as db:
        row = db.get(ZoteroLibrary, library_id)
        row.status, row.last_error, row.last_sync_at = SyncStatus.ERROR, message, utcnow()
        db.add(row)
        db.commit()
    return SyncResult("error", error=message)


def _pending_work(ctx: _Ctx) -> bool:
    with ctx.sf() as db:
        return db.exec(select(ZoteroItem.key).where(ZoteroItem.library_id == ctx.library_id,
                                                    ZoteroItem.dirty == True)).first() is not None  # noqa: E712


def _run(ctx: _Ctx, since: int, full: bool) -> int:
    ctx.progress = {"phase": "checking", "items_seen": 0, "to_fetch": 0, "fetched": 0,
                    "files_to_download": 0, "files_downloaded": 0, "ingest_queued": 0}
    _renew(ctx)
    if ctx.api == "local":
        version = _local_pass(ctx)
        _apply_collections(ctx)
        _reconcile(ctx)
        return version
    z = ctx.clients.get()
    if not full and since > 0:
        current = z.last_modified_version()
        if current == since and not _pending_work(ctx):
            ctx.result.outcome = "unchanged"
            return since
    for attempt in range(MAX_RESTARTS + 1):
        try:
            version = _web_pass(ctx, 0 if full else since, full)
            break
        except _Restart:
            ctx.result.restarts += 1
            log.info("zotero library %s changed during the sync; starting the pass again", ctx.library_id)
        except _FullResync:
            full, ctx.result.full_resync = True, True
    else:
        raise RuntimeError("the Zotero library kept changing during the sync; try again later")
    _apply_collections(ctx)
    _reconcile(ctx)
    return version


def _web_pass(ctx: _Ctx, since: int, full: bool) -> int:
    c = ctx.clients
    z = c.get()
    _renew(ctx, phase="listing")
    cver: dict[str, int] = z.collection_versions(since=since)
    v0 = c.last_version()
    iver: dict[str, int] = z.item_versions(since=since, includeTrashed=1)
    if c.last_version() != v0:
        raise _Restart
    with ctx.sf() as db:
        known_items = dict(db.exec(select(ZoteroItem.key, ZoteroItem.version).where(
            ZoteroItem.library_id == ctx.library_id)).all())
        known_cols = dict(db.exec(select(ZoteroCollection.key, ZoteroCollection.version).where(
            ZoteroCollection.library_id == ctx.library_id)).all())
    changed_items = [k for k, v in iver.items() if known_items.get(k) != v]
    changed_cols = [k for k, v in cver.items() if known_cols.get(k) != v]
    _renew(ctx, phase="fetching", items_seen=len(iver), to_fetch=len(changed_items), fetched=0)

    for i in range(0, len(changed_cols), KEY_BATCH):
        keys = changed_cols[i:i + KEY_BATCH]
        got = z.collections(collectionKey=",".join(keys), limit=KEY_BATCH)
        if c.last_version() != v0:
            raise _Restart
        _store_collections(ctx, got)
        ctx.result.collections_changed += len(got)

    fetched = 0
    for i in range(0, len(changed_items), KEY_BATCH):
        keys = changed_items[i:i + KEY_BATCH]
        got = z.items(itemKey=",".join(keys), includeTrashed=1, limit=KEY_BATCH)
        if c.last_version() != v0:
            raise _Restart
        _store_items(ctx, got)
        fetched += len(got)
        ctx.result.items_changed += len(got)
        _renew(ctx, fetched=fetched)

    gone_items: list[str] = []
    gone_cols: list[str] = []
    if full:
        gone_items = [k for k in known_items if k not in iver]
        gone_cols = [k for k in known_cols if k not in cver]
    elif since > 0:
        try:
            gone = z.deleted(since=since)
        except ze.ConflictError:  # 409: the delete log no longer reaches `since`
            raise _FullResync from None
        if c.last_version() != v0:
            raise _Restart
        gone_items, gone_cols = list(gone.get("items", [])), list(gone.get("collections", []))
    _delete_items(ctx, gone_items)
    _delete_collections(ctx, gone_cols)
    return v0


def _local_pass(ctx: _Ctx) -> int:
    """Zotero 7 local API: no /deleted and versions are last *synced* ones, so list every
    item (local, no rate limit), store those whose data changed, and diff keys for deletions."""
    z = ctx.clients.get()
    _renew(ctx, phase="listing")
    cols = z.everything(z.collections(limit=100))
    with ctx.sf() as db:
        known_cols = {r.key: r for r in db.exec(select(ZoteroCollection).where(
            ZoteroCollection.library_id == ctx.library_id))}
        known_items = {k: fp for k, fp in db.exec(select(ZoteroItem.key, ZoteroItem.data).where(
            ZoteroItem.library_id == ctx.library_id)).all()}
    changed_cols = [x for x in cols if not known_cols.get(x["key"]) or known_cols[x["key"]].name !=
                    x["data"].get("name") or known_cols[x["key"]].parent_key != (x["data"].get("parentCollection") or None)]
    _store_collections(ctx, changed_cols)
    seen: set[str] = set()
    start, fetched = 0, 0
    while True:
        page = z.items(includeTrashed=1, limit=100, start=start)
        if not page:
            break
        seen.update(x["key"] for x in page)
        fresh = [x for x in page if (known_items.get(x["key"]) or {}).get("_fp") != _fingerprint(x["data"])]
        _store_items(ctx, fresh)
        fetched += len(fresh)
        ctx.result.items_changed += len(fresh)
        _renew(ctx, phase="fetching", items_seen=len(seen), to_fetch=fetched, fetched=fetched)
        start += len(page)
        if len(page) < 100:
            break
    _delete_items(ctx, [k for k in known_items if k not in seen])
    _delete_collections(ctx, [k for k in known_cols if k not in {x["key"] for x in cols}])
    return max([0, *(x["version"] for x in cols)])


def _fingerprint(data: dict) -> str:
    return hashlib.sha1(repr(sorted(mapping.compact(data).items())).encode()
                        + str(data.get("dateModified", "")).encode()).hexdigest()


# ---- storing what was fetched ---------------------------------------------------------------
def _store_collections(ctx: _Ctx, got: list[dict]) -> None:
    with ctx.sf() as db:
        for obj in got:
            d = obj["data"]
            row = db.get(ZoteroCollection, (ctx.library_id, obj["key"])) or \
                ZoteroCollection(library_id=ctx.library_id, key=obj["key"])
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
        values.append({"k": obj["key"], "version": int(obj["version"]), "item_type": str(d.get("itemType", ""))[:40],
                       "parent_key": d.get("parentItem") or None, "trashed": mapping.is_trashed(d),
                       "data": mapping.compact(d) | ({"_fp": _fingerprint(d)} if ctx.api == "local" else {}),
                       "dirty": True})
    with ctx.sf() as db:
        known = set(db.exec(select(ZoteroItem.key).where(
            ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_([v["k"] for v in values]))))
        fresh = [{**{k: v for k, v in row.items() if k != "k"}, "key": row["k"], "library_id": ctx.library_id}
                 for row in values if row["k"] not in known]
        old = [row for row in values if row["k"] in known]
        if fresh:
            db.connection().execute(insert(ZoteroItem.__table__), fresh)
        if old:
            t = ZoteroItem.__table__
            db.connection().execute(
                update(t).where(t.c.library_id == ctx.library_id, t.c.key == bindparam("k"))
                .values(version=bindparam("version"), item_type=bindparam("item_type"),
                        parent_key=bindparam("parent_key"), trashed=bindparam("trashed"),
                        data=bindparam("data"), dirty=bindparam("dirty")), old)
        db.commit()


def _delete_items(ctx: _Ctx, keys: list[str]) -> None:
    """Items deleted in Zotero: remove their documents, then forget them."""
    for i in range(0, len(keys), RECONCILE_BATCH):
        batch = keys[i:i + RECONCILE_BATCH]
        purges: list[tuple[str, str | None]] = []
        with ctx.sf() as db:
            rows = list(db.exec(select(ZoteroItem).where(ZoteroItem.library_id == ctx.library_id,
                                                         col(ZoteroItem.key).in_(batch))))
            for row in rows:
                if row.document_id:
                    purges += _remove_document(db, ctx, row.document_id)
                # children of a deleted parent must be reconciled (Zotero deletes them too)
                db.exec(update(ZoteroItem).where(ZoteroItem.library_id == ctx.library_id,
                                                 ZoteroItem.parent_key == row.key).values(dirty=True))
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
        for row in db.exec(select(ZoteroCollection).where(ZoteroCollection.library_id == ctx.library_id,
                                                         col(ZoteroCollection.key).in_(keys))):
            if row.collection_id and row.created_collection:
                try:
                    touched += lib.delete_collection(db, ctx.owner_id, row.collection_id)
                except lib.NotFound:
                    pass
            db.delete(row)
        db.commit()
    for d in touched:
        ctx.hooks.collections_changed(d)


# ---- collections → Bayes collections -------------------------------------------------------------
def _apply_collections(ctx: _Ctx) -> None:
    """Create, rename (moved or renamed in Zotero) or remove (trashed) Bayes collections."""
    touched: list[str] = []
    with ctx.sf() as db:
        rows = {r.key: r for r in db.exec(select(ZoteroCollection).where(
            ZoteroCollection.library_id == ctx.library_id))}
        paths = mapping.collection_paths({k: (r.name, r.parent_key) for k, r in rows.items()})
        lib_name = (db.get(ZoteroLibrary, ctx.library_id).name or "Zotero")[:100]
        mapped_elsewhere = set(db.exec(select(ZoteroCollection.collection_id).join(
            ZoteroLibrary, ZoteroLibrary.id == ZoteroCollection.library_id).where(
            ZoteroLibrary.owner_id == ctx.owner_id, ZoteroCollection.library_id != ctx.library_id,
            col(ZoteroCollection.collection_id).is_not(None))))
        for key, row in sorted(rows.items(), key=lambda kv: paths[kv[0]]):
            if row.trashed:
                if row.collection_id and row.created_collection:
                    try:
                        touched += lib.delete_collection(db, ctx.owner_id, row.collection_id)
                    except lib.NotFound:
                        pass
                row.collection_id, row.created_collection = None, False
                db.add(row)
                continue
            want = paths[key]
            current = db.get(Collection, row.collection_id) if row.collection_id else None
            if current is not None and current.name == want:
                continue
            clash = db.exec(select(Collection).where(Collection.owner_id == ctx.owner_id,
                                                     Collection.name == want)).first()
            mine = {r.collection_id for r in rows.values() if r.collection_id}
            if clash is not None and (clash.id in mine or clash.id in mapped_elsewhere):
                want = f"{want} ({lib_name})"[:300]
                clash = db.exec(select(Collection).where(Collection.owner_id == ctx.owner_id,
                                                         Collection.name == want)).first()
                if clash is not None and (clash.id in mine or clash.id in mapped_elsewhere):
                    want = f"{paths[key][:280]} ({key})"
                    clash = None
            if current is not None and row.created_collection and clash is None:
                current.name = want
                db.add(current)
            elif clash is not None:  # the user already has this collection: use it, never delete it
                row.collection_id, row.created_collection = clash.id, False
            else:
                made = Collection(owner_id=ctx.owner_id, name=want)
                db.add(made)
                db.flush()
                row.collection_id, row.created_collection = made.id, True
            db.add(row)
            db.flush()
        db.commit()
    for d in touched:
        ctx.hooks.collections_changed(d)


# ---- items → documents ---------------------------------------------------------------------------
@dataclass
class _Plan:
    key: str
    remove: bool = False
    download: bool = False
    problem: tuple[str, str] | None = None
    blob: bytes | None = None


def _reconcile(ctx: _Ctx) -> None:
    """Turn every dirty item into document changes, a batch at a time (each committed)."""
    with ctx.sf() as db:
        # a dirty parent makes its PDF attachments dirty (metadata, trash and collections come from it)
        parents = list(db.exec(select(ZoteroItem.key).where(
            ZoteroItem.library_id == ctx.library_id, ZoteroItem.dirty == True,  # noqa: E712
            ZoteroItem.item_type != "attachment")))
        for i in range(0, len(parents), 500):
            db.exec(update(ZoteroItem).where(ZoteroItem.library_id == ctx.library_id,
                                             col(ZoteroItem.parent_key).in_(parents[i:i + 500]))
                    .values(dirty=True))
        db.commit()
        dirty_atts = list(db.exec(select(ZoteroItem.key).where(
            ZoteroItem.library_id == ctx.library_id, ZoteroItem.dirty == True,  # noqa: E712
            ZoteroItem.item_type == "attachment")))
    _renew(ctx, phase="files", files_to_download=len(dirty_atts))
    for i in range(0, len(dirty_atts), RECONCILE_BATCH):
        _reconcile_batch(ctx, dirty_atts[i:i + RECONCILE_BATCH])
    with ctx.sf() as db:  # everything else (regular items, notes) needs nothing more
        db.exec(update(ZoteroItem).where(ZoteroItem.library_id == ctx.library_id,
                                         ZoteroItem.dirty == True).values(dirty=False))  # noqa: E712
        db.commit()
    _renew(ctx)


def _reconcile_batch(ctx: _Ctx, keys: list[str]) -> None:
    plans: list[_Plan] = []
    with ctx.sf() as db:
        rows = {r.key: r for r in db.exec(select(ZoteroItem).where(
            ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_(keys)))}
        parent_keys = {r.parent_key for r in rows.values() if r.parent_key}
        parents = {r.key: r for r in db.exec(select(ZoteroItem).where(
            ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_(parent_keys)))} if parent_keys else {}
        for key, row in rows.items():
            parent = parents.get(row.parent_key) if row.parent_key else None
            plan = _Plan(key)
            if not mapping.is_pdf_attachment(row.data):
                plan.remove = bool(row.document_id)
            elif row.trashed or (parent is not None and parent.trashed):
                plan.remove = True
            elif not mapping.has_stored_file(row.data):
                plan.remove = bool(row.document_id)
                plan.problem = ("linked_file", "The PDF is a linked file on the owner's computer; Zotero "
                                "does not store it, so Bayes cannot download it.")
            elif row.document_id is None or row.file_md5 != row.data.get("md5"):
                plan.download = True
            plans.append(plan)
    downloads = [p for p in plans if p.download]
    if downloads:
        if ctx.pool is None:
            ctx.pool = ThreadPoolExecutor(max_workers=MAX_CONCURRENCY, thread_name_prefix="zotero-dl")
        list(ctx.pool.map(lambda p: _download(ctx, p), downloads))
    _apply_plans(ctx, plans)


def _download(ctx: _Ctx, plan: _Plan) -> None:
    z = ctx.clients.get()
    try:
        blob = z.file(plan.key)
    except ze.ResourceNotFoundError:
        plan.download, plan.problem = False, (
            "file_unavailable", "Zotero has no copy of this PDF in its storage (files synced with "
            "WebDAV, or not uploaded yet), so Bayes cannot download it.")
        return
    except ze.UserNotAuthorisedError:
        plan.download, plan.problem = False, (
            "file_forbidden", "The API key is not allowed to download files (give it file access).")
        return
    if not isinstance(blob, (bytes, bytearray)) or not blob:
        plan.download, plan.problem = False, ("file_empty", "Zotero returned an empty file.")
        return
    plan.blob = bytes(blob)
    ctx.result.files_downloaded += 1
    ctx.progress["files_downloaded"] = ctx.progress.get("files_downloaded", 0) + 1


def _apply_plans(ctx: _Ctx, plans: list[_Plan]) -> None:
    purges: list[tuple[str, str | None]] = []
    ingest: list[tuple[str, int]] = []
    regroup: list[str] = []
    with ctx.sf() as db:
        rows = {r.key: r for r in db.exec(select(ZoteroItem).where(
            ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_([p.key for p in plans])))}
        pkeys = [r.parent_key for r in rows.values() if r.parent_key]
        parents = {r.key: r for r in db.exec(select(ZoteroItem).where(
            ZoteroItem.library_id == ctx.library_id, col(ZoteroItem.key).in_(pkeys)))} if pkeys else {}
        colmap = {k: cid for k, cid in db.exec(select(ZoteroCollection.key, ZoteroCollection.collection_id)
                                               .where(ZoteroCollection.library_id == ctx.library_id)).all()}
        for plan in plans:
            row = rows.get(plan.key)
            if row is None:
                continue
            parent = parents.get(row.parent_key) if row.parent_key else None
            row.problem_code, row.problem_message = plan.problem or (None, None)
            if plan.remove and row.document_id:
                purges += _remove_document(db, ctx, row.document_id)
                row.document_id, row.file_md5 = None, None
            elif plan.problem is None and mapping.is_pdf_attachment(row.data) and not plan.remove:
                meta = mapping.metadata(parent.data if parent else None, row.data)
                doc = db.get(Document, row.document_id) if row.document_id else None
                if plan.blob is not None:
                    try:
                        queued = _store_file(db, ctx, row, parent, doc, plan.blob)
                    except _ItemProblem as problem:
                        row.problem_code, row.problem_message = problem.code, problem.message
                        queued = None
                    if queued is not None:
                        ingest.append(queued)
                    doc = db.get(Document, row.document_id) if row.document_id else None
                if doc is not None:
                    if _set_metadata(db, doc, row, parent, meta, colmap):
                        regroup.append(doc.id)
            if row.problem_code:
                ctx.result.problems += 1
            row.dirty = False
            db.add(row)
        db.commit()
    for doc_id, sha in purges:
        ctx.hooks.purge_document(doc_id, sha)
    for doc_id, gen in ingest:
        ctx.hooks.enqueue_ingest(doc_id, gen)
    for doc_id in dict.fromkeys(regroup):
        if doc_id not in {d for d, _ in ingest}:
            ctx.hooks.collections_changed(doc_id)
    ctx.progress["ingest_queued"] = ctx.progress.get("ingest_queued", 0) + len(ingest)
    _renew(ctx)


class _ItemProblem(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def _store_file(db: Session, ctx: _Ctx, row: ZoteroItem, parent: ZoteroItem | None,
                doc: Document | None, blob: bytes) -> tuple[str, int] | None:
    """Store a downloaded PDF and create or update its document. Returns (doc id, generation)
    to enqueue, or None when nothing needs ingesting; raises _ItemProblem."""
    name = str(row.data.get("filename") or f"{row.key}.pdf")[:500]
    if len(blob) > ctx.opts.max_file_bytes:
        raise _ItemProblem("too_large", f"{name}: larger than the {ctx.opts.max_file_bytes >> 20} MB "
                           "limit (BAYES_MAX_UPLOAD_MB).")
    try:
        lib.check_upload_head(blob[:1024], name)
    except lib.LibraryError as err:
        raise _ItemProblem(err.code, err.message) from None
    md5 = hashlib.md5(blob).hexdigest()
    stored = storage.store_bytes(ctx.opts.files_root, blob, ctx.opts.max_file_bytes)
    if doc is not None:
        try:
            doc, old = lib.replace_file(db, ctx.owner_id, doc.id, stored)
        except lib.LibraryError as err:
            raise _ItemProblem(err.code, err.message) from None
        row.file_md5 = doc.zotero_md5 = md5
        db.add(doc)
        ctx.result.documents_updated += 1
        return (doc.id, doc.ingest_generation) if old is not None else None
    doc, created = lib.add_upload(db, ctx.owner_id, name, stored)
    adopted = False
    if not created:
        if doc.zotero_attachment_key == row.key and doc.zotero_library_id in (None, ctx.library_id):
            adopted = True  # kept from an earlier connection of this library: adopt it again
        else:
            title = doc.title or doc.filename
            raise _ItemProblem("duplicate_file", f"The same PDF is already in the library as “{title}”.")
    doc.source = "zotero"
    doc.zotero_library_id, doc.zotero_attachment_key = ctx.library_id, row.key
    doc.zotero_item_key = parent.key if parent else row.key
    doc.zotero_md5 = row.file_md5 = md5
    db.add(doc)
    db.flush()
    row.document_id = doc.id
    if adopted:
        ctx.result.documents_updated += 1
        return None
    ctx.result.documents_added += 1
    return doc.id, doc.ingest_generation


def _set_metadata(db: Session, doc: Document, row: ZoteroItem, parent: ZoteroItem | None,
                  meta: mapping.Metadata, colmap: dict[str, str | None]) -> bool:
    """Zotero is the source of truth for a synced document's metadata and Zotero collections
    (`colmap`: Zotero collection key → Bayes collection id). True when collections changed."""
    changed = False
    if meta.title:
        doc.title = meta.title
    doc.authors, doc.year, doc.doi = meta.authors, meta.year, meta.doi
    doc.metadata_edited = bool(meta.title)  # ingestion must not overwrite Zotero's title
    doc.zotero_version = (parent or row).version
    doc.updated_at = utcnow()
    db.add(doc)
    managed = {cid for cid in colmap.values() if cid}
    want = {colmap[k] for k in meta.collection_keys if colmap.get(k)}
    have = set(lib.collection_ids_of(db, doc.id))
    new = (have - managed) | want
    if new != have:
        for cid in have - new:
            link = db.get(DocumentCollection, (doc.id, cid))
            if link is not None:
                db.delete(link)
        for cid in new - have:
            db.add(DocumentCollection(document_id=doc.id, collection_id=cid))
        changed = True
    return changed


def _remove_document(db: Session, ctx: _Ctx, document_id: str) -> list[tuple[str, str | None]]:
    """Delete a synced document through the library's delete path (removal hooks run there)."""
    try:
        sha, still_used = lib.delete_document(db, ctx.owner_id, document_id, reason="source_removed")
    except lib.NotFound:
        return []
    ctx.result.documents_removed += 1
    return [(document_id, None if still_used else sha)]
