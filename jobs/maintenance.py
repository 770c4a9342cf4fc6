"""Periodic maintenance actors (scheduled in jobs/__init__.py through jobs.periodic)."""

from __future__ import annotations

import logging
from typing import cast

import dramatiq

log = logging.getLogger("bayes.jobs.maintenance")
REAP_INGESTION_EVERY_S = 30
RESTRUCTURE_EVERY_S = 60
SWEEP_FILES_EVERY_S = 3600
RELINK_CITATIONS_EVERY_S = 60


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=60_000)
def reap_ingestion() -> None:
    """Re-enqueue documents whose ingestion stopped making progress (its worker died)."""
    from bayes_app.db import session_scope
    from bayes_app.library.ingest import never_sent, stale_documents
    from bayes_app.redis_client import get_redis
    from jobs.library import enqueue_ingest
    from jobs.middleware import ENQUEUED_KEY

    with session_scope() as db:
        stale = stale_documents(db, older_than_s=90)
        queued = never_sent(db, lambda d, g: cast(int, get_redis().exists(ENQUEUED_KEY.format(d, g))) > 0)
    for doc_id, gen in stale + queued:
        log.info("enqueueing ingestion of %s (stalled or never sent)", doc_id)
        enqueue_ingest(doc_id, gen)


RESTRUCTURE_KEY = "bayes:restructure-sent:{}:{}:{}"
RESTRUCTURE_BATCH = 5


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=60_000)
def restructure_outdated() -> None:
    """Send a few documents analysed by older structure rules (or before roles existed) for
    background re-analysis; a document is sent once per hour at most."""
    from bayes_app.db import session_scope
    from bayes_app.library import structure
    from bayes_app.library.ingest import outdated_structure
    from bayes_app.redis_client import get_redis
    from jobs.library import restructure_document

    with session_scope() as db:
        outdated = outdated_structure(db, limit=50)
    sent = 0
    for doc_id, gen in outdated:
        if sent >= RESTRUCTURE_BATCH:
            break
        if get_redis().set(RESTRUCTURE_KEY.format(doc_id, gen, structure.VERSION), "1", nx=True, ex=3600):
            restructure_document.send(doc_id, gen)
            sent += 1
    if sent:
        log.info("sent %d document(s) for structure re-analysis", sent)


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=30 * 60_000)
def sweep_files() -> None:
    """Remove stored files no document refers to, older than BAYES_FILE_SWEEP_GRACE_HOURS."""
    from bayes_app.library import uploads

    uploads.sweep_unreferenced()


@dramatiq.actor(queue_name="default", max_retries=0, time_limit=120_000)
def relink_citations() -> None:
    """Link documents indexed before the citation graph existed (or by an older matcher)."""
    from bayes_app.db import session_scope
    from bayes_app.library import citation_graph

    with session_scope() as db:
        n = citation_graph.relink_outdated(db)
    if n:
        log.info("linked the citations of %d document(s)", n)
