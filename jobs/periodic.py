"""A tiny periodic scheduler inside the workers: every worker process ticks, and a Redis
lock (SET NX PX) makes sure each periodic actor is enqueued once per interval cluster-wide."""

from __future__ import annotations

import logging
import threading

from dramatiq.middleware import Middleware

from bayes_app.redis_client import get_redis

log = logging.getLogger("bayes.jobs.scheduler")


class Periodic(Middleware):
    def __init__(self) -> None:
        self._entries: list[tuple[str, float]] = []
        self._stop = threading.Event()

    def every(self, seconds: float, actor_name: str) -> None:
        self._entries.append((actor_name, seconds))

    def after_worker_boot(self, broker, worker) -> None:
        threading.Thread(target=self._loop, args=(broker,), name="bayes-periodic", daemon=True).start()

    def before_worker_shutdown(self, broker, worker) -> None:
        self._stop.set()

    def _loop(self, broker) -> None:
        tick = min((s for _, s in self._entries), default=5.0) / 2
        while not self._stop.wait(max(0.5, tick)):
            for name, seconds in self._entries:
                try:
                    if get_redis().set(f"bayes:periodic:{name}", "1", nx=True, px=int(seconds * 1000)):
                        broker.get_actor(name).send()
                except Exception as err:  # noqa: BLE001 - Redis may be briefly away
                    log.warning("periodic %s not scheduled: %s", name, err)


periodic = Periodic()
