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
    from bayes_app.library.ingest import stale_documents
    from jobs.library import ingest_document

    with session_scope() as db:
        stale = stale_documents(db, older_than_s=90)
    for doc_id, gen in stale:
        log.info("re-enqueueing stalled ingestion of %s", doc_id)
        ingest_document.send(doc_id, gen)


periodic.every(30, "reap_ingestion")
