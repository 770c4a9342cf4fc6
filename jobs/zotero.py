"""Zotero actors (thin): sync one library; enqueue periodic syncs of libraries that are due."""

from __future__ import annotations

import logging

import dramatiq

from bayes_app.db import session_scope, sessions
from bayes_app.settings import get_settings

log = logging.getLogger("bayes.jobs.zotero")
PERIODIC_CHECK_S = 60


def _hooks():
    """The broker side of a sync. A failed send (Redis restarting) must not fail the sync: the
    database is the truth, and the ingestion reaper re-sends queued documents that were never sent."""
    from bayes_app.usecases import queue
    from bayes_app.zotero.engine import Hooks

    def safe(what: str, fn):
        def call(*args):
            try:
                fn(*args)
            except Exception as err:  # noqa: BLE001 - the broker may be briefly away
                log.warning(
                    "zotero sync: could not %s for %s (%s); left to the reaper", what, args[0], type(err).__name__
                )

        return call

    q = queue.get()
    return Hooks(
        enqueue_ingest=safe("enqueue ingestion", q.ingest),
        purge_document=safe("purge", q.purge),
        collections_changed=safe("update collections", q.sync_collections),
    )


def sync_options():
    from bayes_app.zotero.engine import SyncOptions
    from bayes_app.zotero.http import Policy

    s = get_settings()
    from bayes_app.library import storage

    return SyncOptions(
        files_root=storage.default_store(),
        max_file_bytes=s.max_upload_mb << 20,
        web_api_url=s.zotero_api_url,
        local_api_url=s.zotero_local_url,
        lease_s=s.zotero_lease_s,
        policy=Policy(max_wait_s=s.zotero_max_wait_s),
    )


@dramatiq.actor(queue_name="zotero", max_retries=8, min_backoff=2_000, max_backoff=300_000, time_limit=12 * 3600 * 1000)
def sync_zotero_library(library_id: str, full: bool = False) -> None:
    """Sync one library (idempotent; resumes from the last committed version after a crash)."""
    from bayes_app.zotero.engine import sync_library

    result = sync_library(sessions, library_id, _hooks(), sync_options(), full=full)
    log.info(
        "zotero sync %s: %s (version %s, %s requests)", library_id, result.outcome, result.version, result.requests
    )
    if result.outcome == "rate_limited" and result.retry_in_s:
        sync_zotero_library.send_with_options(args=(library_id, full), delay=int(result.retry_in_s * 1000) + 1000)
    elif result.outcome == "busy":
        # A live sync is running, or a killed worker's lease has not expired: try again after it.
        sync_zotero_library.send_with_options(
            args=(library_id, full), delay=int(get_settings().zotero_lease_s * 1000) + 1000
        )


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=60_000)
def sync_zotero_due() -> None:
    """Enqueue a sync of every library whose last sync is older than BAYES_ZOTERO_SYNC_MINUTES
    (a library with no changes then costs one request)."""
    from bayes_app.zotero.service import due_for_sync

    with session_scope() as db:
        due = due_for_sync(db, get_settings().zotero_sync_minutes)
    for library_id in due:
        sync_zotero_library.send(library_id)
