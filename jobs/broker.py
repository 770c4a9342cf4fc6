"""The broker, built in one function with all its middleware: Redis in production,
StubBroker for unit tests (BAYES_STUB_BROKER=1)."""

from __future__ import annotations

import dramatiq

from bayes_app.settings import get_settings


def _mark_crashed(document_id: str, generation: int, crashes: int) -> None:
    from bayes_app.db import sessions
    from bayes_app.library import crash_guard, ingest

    ingest.mark_failed(sessions, document_id, generation, crash_guard.CODE, crash_guard.message(crashes))


def build_broker() -> dramatiq.Broker:
    """Build this process's broker with every middleware and make it Dramatiq's broker.
    `jobs/__init__.py` calls it once, before the actor modules declare their actors on it.
    The worker middleware is inert in the web process (its hooks fire only in workers)."""
    from dramatiq.middleware.asyncio import AsyncIO

    from jobs.middleware import FairShare, IngestCrashGuard, IngestEnqueued, RunControl, WorkerHeartbeat
    from jobs.periodic import periodic
    from jobs.recycle import MemoryGuard

    settings = get_settings()
    broker: dramatiq.Broker
    if settings.stub_broker:
        from dramatiq.brokers.stub import StubBroker

        broker = StubBroker()
        broker.emit_after("process_boot")
        broker.add_middleware(IngestEnqueued())
        broker.add_middleware(FairShare())
        broker.add_middleware(AsyncIO())
    else:
        from dramatiq.brokers.redis import RedisBroker

        broker = RedisBroker(
            url=settings.effective_redis_url,
            namespace="bayes-tasks",
            # Redeliver a dead worker's messages within ~15 s instead of minutes
            # (see docs/notes/runs-fault-tolerance.md).
            heartbeat_timeout=10_000,
            maintenance_chance=100_000,
        )
        guard = MemoryGuard(settings.worker_max_rss_mb)
        for middleware in (
            IngestEnqueued(),
            WorkerHeartbeat(keep_on=guard.recycling),
            guard,
            periodic,
            RunControl(),
            AsyncIO(),  # the event loop thread of the async actors (run_operation)
            FairShare(),  # before the crash guard: a message sent back to wait is no attempt
            IngestCrashGuard(settings.ingest_max_crashes, _mark_crashed),
        ):
            broker.add_middleware(middleware)
    dramatiq.set_broker(broker)
    return broker
