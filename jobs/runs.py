"""Run actors (thin): execute a run, finalize it, reap abandoned runs (their worker
middleware is `jobs.middleware.RunControl`)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import dramatiq

from bayes_app.db import sessions
from bayes_app.redis_client import get_redis
from bayes_app.runs import control

log = logging.getLogger("bayes.jobs.runs")
FINALIZE_RETRIES = 60  # with 100 ms .. 1 s backoff: ~1 min, then the reaper takes over
REAP_EVERY_S = 5
LEASE_MARGIN_MS = 200


@dramatiq.actor(queue_name="agent", max_retries=0, time_limit=3_600_000)
async def run_operation(op_id: str) -> None:
    """Execute one run (idempotent: does nothing unless the run can start now). An async actor:
    the worker's runs share the event loop of Dramatiq's `AsyncIO` middleware."""
    from bayes_app.llm import get_provider
    from bayes_app.runs.executor import execute

    r = get_redis()
    listener = control.get_listener()
    result = await execute(op_id, r=r, sessions=sessions, listener=listener, provider_factory=get_provider)
    if not result.started:
        log.info("run %s not started: %s", op_id, result.detail)
        if result.detail == "lease_held":
            return
    await asyncio.to_thread(_settle_or_enqueue, r, op_id)


def _settle_or_enqueue(r: Any, op_id: str) -> None:
    """Settle the run now, or leave it to the finalizer (then the reaper) when that fails."""
    from bayes_app.runs.service import settle

    # Settle at once (the lease is released); the actor is only the backup.
    try:
        if settle(sessions, r, op_id) != "wait":
            return
    except Exception as err:  # noqa: BLE001
        log.warning("inline finalize of %s failed: %s", op_id, err)
    try:
        finalize_operation.send(op_id)
    except Exception as err:  # noqa: BLE001 - Redis away: the reaper settles it once it is back
        log.warning("could not enqueue the finalizer of %s: %s", op_id, err)


@dramatiq.actor(
    queue_name="finalize", max_retries=FINALIZE_RETRIES, min_backoff=100, max_backoff=1_000, time_limit=60_000
)
def finalize_operation(op_id: str) -> None:
    """Settle a run; retried (short backoff) while a worker still holds its lease."""
    from bayes_app.runs.service import settle

    if settle(sessions, get_redis(), op_id) == "wait":
        raise dramatiq.Retry("run still active", delay=200)


@dramatiq.actor(queue_name="finalize", max_retries=0, time_limit=60_000)
def reap_runs(follow_leases: bool = False) -> None:
    """Enqueue the finalizer for runs nobody is working on any more. With `follow_leases` (sent
    as a worker boots, often the restart of one that died), look again when the longest live
    lease runs out unless renewed: a dead worker's run is settled then, not a tick later."""
    from bayes_app.models import utcnow
    from bayes_app.runs.lifecycle import reap_candidates, running_ids

    r = get_redis()
    with sessions() as db:
        ids = reap_candidates(db, utcnow(), lambda i: control.lease_alive(r, i), grace_s=control.LEASE_MS / 1000)
        left = [control.lease_left_ms(r, i) for i in running_ids(db)] if follow_leases else []
    for op_id in ids:
        finalize_operation.send(op_id)
    if any(left):
        reap_runs.send_with_options(delay=max(left) + LEASE_MARGIN_MS)


def enqueue_run(op_id: str) -> None:
    run_operation.send(op_id)


def enqueue_finalize(op_id: str) -> None:
    finalize_operation.send(op_id)
