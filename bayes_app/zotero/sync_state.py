"""What one Zotero sync carries: the hooks into the rest of the app, options, the result, and
the running context (sessions, clients, lease, progress)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx2
from pydantic import BaseModel
from sqlalchemy import or_, update
from sqlmodel import Session, col

from bayes_app.library import storage
from bayes_app.models import (
    SyncStatus,
    ZoteroLibrary,
    new_id,
    utcnow,
)
from bayes_app.zotero.client import Clients
from bayes_app.zotero.http import Policy

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


class ZoteroSyncResult(BaseModel):
    """The outcome of the last sync (fields an older sync did not record take their defaults)."""

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
    result: ZoteroSyncResult
    progress: dict = field(default_factory=dict)
    pool: ThreadPoolExecutor | None = None  # file downloads, ≤ 4 at a time


# ---- lease -----------------------------------------------------------------------------------
def claim(sf: Callable[[], Session], library_id: str, lease_s: float) -> str | None:
    """Take the library's sync lease (one sync per library at a time); None when held."""
    token = new_id()
    now = utcnow()
    with sf() as db:
        res = db.exec(
            update(ZoteroLibrary)
            .where(
                col(ZoteroLibrary.id) == library_id,
                or_(col(ZoteroLibrary.lease_until).is_(None), col(ZoteroLibrary.lease_until) < now),
            )
            .values(lease_token=token, lease_until=now + timedelta(seconds=lease_s), status=SyncStatus.SYNCING)
        )
        db.commit()
        return token if res.rowcount == 1 else None


def _renew(ctx: _Ctx, **progress) -> None:
    """Extend the lease and publish progress; raise if another sync took the library over."""
    ctx.progress.update(progress)
    with ctx.sf() as db:
        res = db.exec(
            update(ZoteroLibrary)
            .where(
                col(ZoteroLibrary.id) == ctx.library_id,
                col(ZoteroLibrary.lease_token) == ctx.token,
            )
            .values(lease_until=utcnow() + timedelta(seconds=ctx.opts.lease_s), progress=dict(ctx.progress))
        )
        db.commit()
    if res.rowcount != 1:
        raise RuntimeError("lost the sync lease of this Zotero library (deleted or taken over)")


def _finish(ctx: _Ctx, status: str, *, version: int | None = None, error: str | None = None) -> None:
    with ctx.sf() as db:
        values: dict = {
            "lease_token": None,
            "lease_until": None,
            "status": status,
            "last_error": error,
            "last_sync_at": utcnow(),
            "last_result": ctx.result.model_dump(),
            "progress": dict(ctx.progress, phase="done" if status == SyncStatus.IDLE else status),
        }
        if version is not None:
            values["version"] = version
        db.exec(
            update(ZoteroLibrary)
            .where(col(ZoteroLibrary.id) == ctx.library_id, col(ZoteroLibrary.lease_token) == ctx.token)
            .values(**values)
        )
        db.commit()
