"""Dramatiq broker setup: Redis in production, StubBroker for unit tests (BAYES_STUB_BROKER=1)."""

from __future__ import annotations

import logging
import threading

import dramatiq
from dramatiq.middleware import Middleware

from bayes_app.redis_client import get_redis
from bayes_app.settings import get_settings
from bayes_app.workers import HEARTBEAT_EVERY_S, clear_heartbeat, publish_heartbeat

log = logging.getLogger("bayes.jobs")


class WorkerHeartbeat(Middleware):
    """Publishes this worker process's heartbeat to Redis so /api/v1/health can see it."""

    def __init__(self, keep_on: threading.Event | None = None) -> None:
        self._stop = threading.Event()
        # Set while the process is recycled on purpose: its heartbeat then stays until it
        # expires, so health does not flap for the few seconds its replacement needs to boot.
        self._keep_on = keep_on or threading.Event()

    def before_worker_boot(self, broker, worker) -> None:
        queues = sorted(broker.get_declared_queues())

        def beat() -> None:
            while not self._stop.is_set():
                try:
                    publish_heartbeat(get_redis(), queues)
                except Exception as err:  # noqa: BLE001 - Redis may be down for a while
                    log.warning("worker heartbeat failed: %s", err)
                self._stop.wait(HEARTBEAT_EVERY_S)

        threading.Thread(target=beat, name="bayes-heartbeat", daemon=True).start()

    def before_worker_shutdown(self, broker, worker) -> None:
        self._stop.set()
        if self._keep_on.is_set():
            return
        try:
            clear_heartbeat(get_redis())
        except Exception:  # noqa: BLE001
            pass


def make_broker() -> dramatiq.Broker:
    if get_settings().stub_broker:
        from dramatiq.brokers.stub import StubBroker

        broker = StubBroker()
        broker.emit_after("process_boot")
        return broker
    from dramatiq.brokers.redis import RedisBroker

    broker = RedisBroker(
        url=get_settings().effective_redis_url,
        namespace="bayes-tasks",
        # Redeliver a dead worker's messages within ~15 s instead of minutes (see docs/notes/runs-fault-tolerance.md).
        heartbeat_timeout=10_000,
        maintenance_chance=100_000,
    )
    from jobs.recycle import MemoryGuard

    guard = MemoryGuard(get_settings().worker_max_rss_mb)
    broker.add_middleware(WorkerHeartbeat(keep_on=guard.recycling))
    broker.add_middleware(guard)
    from jobs.periodic import periodic

    broker.add_middleware(periodic)
    return broker


broker = make_broker()
dramatiq.set_broker(broker)
