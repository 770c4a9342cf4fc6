"""Periodic maintenance actors (scheduled by jobs.periodic)."""

from __future__ import annotations

import logging

import dramatiq

from jobs.periodic import periodic

log = logging.getLogger("bayes.jobs.maintenance")


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=60_000)
def reap_ingestion() -> None:
    """Re-enqueue documents whose ingestion stopped making progress (its worker died)."""
    from bayes_app.db import session_scope
    from bayes_app.library.ingest import never_sent, stale_documents
    from bayes_app.redis_client import get_redis
    from jobs.library import ENQUEUED_KEY, enqueue_ingest

    with session_scope() as db:
        stale = stale_documents(db, older_than_s=90)
        queued = never_sent(db, lambda d, g: get_redis().exists(ENQUEUED_KEY.format(d, g)))
    for doc_id, gen in stale + queued:
        log.info("enqueueing ingestion of %s (stalled or never sent)", doc_id)
        enqueue_ingest(doc_id, gen)


periodic.every(30, "reap_ingestion")
