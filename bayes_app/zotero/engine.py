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

import logging
import time
from collections.abc import Callable

import httpx2
from pyzotero import errors as ze
from sqlmodel import Session, select

from bayes_app.models import (
    SyncStatus,
    ZoteroCollection,
    ZoteroItem,
    ZoteroLibrary,
    utcnow,
)
from bayes_app.zotero.client import Clients, Target, ZoteroAccessError, describe_error
from bayes_app.zotero.http import Policy, RateLimited
from bayes_app.zotero.keys import decrypt_key
from bayes_app.zotero.mirror import (
    _apply_collections,
    _delete_collections,
    _delete_items,
    _fingerprint,
    _store_collections,
    _store_items,
)
from bayes_app.zotero.reconcile import _reconcile
from bayes_app.zotero.sync_state import (
    KEY_BATCH,
    MAX_RESTARTS,
    Hooks,
    SyncOptions,
    ZoteroSyncResult,
    _Ctx,
    _finish,
    _FullResync,
    _renew,
    _Restart,
    claim,
)

log = logging.getLogger("bayes.zotero")


# ---- entry point -------------------------------------------------------------------------------
def target_of(library: ZoteroLibrary, opts: SyncOptions) -> Target:
    if library.api == "local":
        return Target("local", opts.local_api_url, "user", "0")
    key = decrypt_key(library.api_key_encrypted or "", opts.secret)
    return Target("web", opts.web_api_url, library.library_type, library.library_key, key)


def sync_library(
    sf: Callable[[], Session], library_id: str, hooks: Hooks, opts: SyncOptions, *, full: bool = False
) -> ZoteroSyncResult:
    """Bring one library up to date. Safe to run again at any time (and after a crash)."""
    t0 = time.monotonic()
    with sf() as db:
        library = db.get(ZoteroLibrary, library_id)
        if library is None:
            return ZoteroSyncResult(outcome="error", error="no such library")
        owner_id, api, since = library.owner_id, library.api, library.version
        try:
            target = target_of(library, opts)
        except ValueError as err:
            return _fail_unclaimed(sf, library_id, str(err))
    token = claim(sf, library_id, opts.lease_s)
    if token is None:
        return ZoteroSyncResult(outcome="busy", version=since)
    policy = opts.policy or Policy()
    before = policy.requests
    ctx = _Ctx(
        sf,
        library_id,
        owner_id,
        api,
        token,
        opts,
        hooks,
        Clients(target, policy, opts.transport),
        ZoteroSyncResult(outcome="synced", version=since),
    )
    try:
        version = _run(ctx, since, full)
        ctx.result.version = version
        ctx.result.requests = policy.requests - before
        ctx.result.seconds = round(time.monotonic() - t0, 3)
        _finish(ctx, SyncStatus.IDLE, version=version)
    except BaseException as err:
        if not _failed(ctx, err, policy.requests - before):
            raise
    finally:
        if ctx.pool is not None:
            ctx.pool.shutdown(wait=True)
        ctx.clients.close()
    return ctx.result


def _failed(ctx: _Ctx, err: BaseException, requests: int) -> bool:
    """Record a failed sync: True when the failure is the sync's outcome (rate limited, key
    refused, the server's Zotero away, a Zotero error we can explain), False when it must
    propagate (the sync is then retried)."""
    if isinstance(err, RateLimited):
        ctx.result.outcome, ctx.result.error, ctx.result.retry_in_s = "rate_limited", str(err), err.wait_s
        ctx.result.requests = requests
        _finish(ctx, SyncStatus.QUEUED, error=str(err))
        return True
    if isinstance(err, ZoteroAccessError):
        ctx.result.outcome, ctx.result.error = "error", err.message
        _finish(ctx, SyncStatus.ERROR, error=err.message)
        return True
    if isinstance(err, httpx2.TransportError):
        if ctx.api != "local":
            _finish(ctx, SyncStatus.ERROR, error="Zotero could not be reached; the sync will be retried.")
            return False
        # The server's own Zotero is not running: say so once; the next sync tries again.
        message = (
            "The server's Zotero does not answer: start Zotero 7 on the server and enable "
            "its local API, then press Sync."
        )
        ctx.result.outcome, ctx.result.error = "error", message
        _finish(ctx, SyncStatus.ERROR, error=message)
        return True
    if isinstance(err, ze.PyZoteroError) and (mapped := describe_error(err)) is not None:
        ctx.result.outcome, ctx.result.error = "error", mapped.message
        _finish(ctx, SyncStatus.ERROR, error=mapped.message)
        return True
    if isinstance(err, ze.PyZoteroError):
        _finish(
            ctx,
            SyncStatus.ERROR,
            error=f"Zotero answered with an error ({type(err).__name__}); the sync will be retried.",
        )
        return False
    _finish(ctx, SyncStatus.ERROR, error=f"The sync failed ({type(err).__name__}); it will be retried.")
    return False


def _fail_unclaimed(sf, library_id: str, message: str) -> ZoteroSyncResult:
    with sf() as db:
        row = db.get(ZoteroLibrary, library_id)
        row.status, row.last_error, row.last_sync_at = SyncStatus.ERROR, message, utcnow()
        db.add(row)
        db.commit()
    return ZoteroSyncResult(outcome="error", error=message)


def _pending_work(ctx: _Ctx) -> bool:
    with ctx.sf() as db:
        return (
            db.exec(
                select(ZoteroItem.key).where(ZoteroItem.library_id == ctx.library_id, ZoteroItem.dirty == True)
            ).first()
            is not None
        )


def _run(ctx: _Ctx, since: int, full: bool) -> int:
    ctx.progress = {
        "phase": "checking",
        "items_seen": 0,
        "to_fetch": 0,
        "fetched": 0,
        "files_to_download": 0,
        "files_downloaded": 0,
        "ingest_queued": 0,
    }
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
    for _attempt in range(MAX_RESTARTS + 1):
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
        known_items = dict(
            db.exec(select(ZoteroItem.key, ZoteroItem.version).where(ZoteroItem.library_id == ctx.library_id)).all()
        )
        known_cols = dict(
            db.exec(
                select(ZoteroCollection.key, ZoteroCollection.version).where(
                    ZoteroCollection.library_id == ctx.library_id
                )
            ).all()
        )
    changed_items = [k for k, v in iver.items() if known_items.get(k) != v]
    changed_cols = [k for k, v in cver.items() if known_cols.get(k) != v]
    _renew(ctx, phase="fetching", items_seen=len(iver), to_fetch=len(changed_items), fetched=0)

    for i in range(0, len(changed_cols), KEY_BATCH):
        keys = changed_cols[i : i + KEY_BATCH]
        got = z.collections(collectionKey=",".join(keys), limit=KEY_BATCH)
        if c.last_version() != v0:
            raise _Restart
        _store_collections(ctx, got)
        ctx.result.collections_changed += len(got)

    fetched = 0
    for i in range(0, len(changed_items), KEY_BATCH):
        keys = changed_items[i : i + KEY_BATCH]
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
        known_cols = {
            r.key: r for r in db.exec(select(ZoteroCollection).where(ZoteroCollection.library_id == ctx.library_id))
        }
        known_items = dict(
            db.exec(select(ZoteroItem.key, ZoteroItem.data).where(ZoteroItem.library_id == ctx.library_id)).all()
        )
    changed_cols = [
        x
        for x in cols
        if not known_cols.get(x["key"])
        or known_cols[x["key"]].name != x["data"].get("name")
        or known_cols[x["key"]].parent_key != (x["data"].get("parentCollection") or None)
    ]
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
