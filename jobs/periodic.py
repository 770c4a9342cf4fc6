"""A tiny periodic scheduler inside the workers: every worker process ticks, and a Redis
lock (SET NX PX) makes sure each periodic actor is enqueued once per interval cluster-wide."""

from __future__ import annotations

import logging
import threading
from typing import Any

from dramatiq.middleware import Middleware

from bayes_app.redis_client import get_redis

log = logging.getLogger("bayes.jobs.scheduler")


class Periodic(Middleware):
    def __init__(self) -> None:
        self._entries: list[tuple[str, float]] = []
        self._at_boot: list[tuple[str, dict[str, Any]]] = []
        self._stop = threading.Event()

    def every(self, seconds: float, actor_name: str, *, at_boot: dict[str, Any] | None = None) -> None:
        """Enqueue `actor_name` once per `seconds` cluster-wide; with `at_boot` (its keyword
        arguments), also as each worker boots, whatever the interval's lock says."""
        self._entries.append((actor_name, seconds))
        if at_boot is not None:
            self._at_boot.append((actor_name, at_boot))

    def after_worker_boot(self, broker, worker) -> None:
        threading.Thread(target=self._loop, args=(broker,), name="bayes-periodic", daemon=True).start()

    def before_worker_shutdown(self, broker, worker) -> None:
        self._stop.set()

    def _loop(self, broker) -> None:
        # A worker that boots is often the restart of one that died (kill -9, OOM): the jobs
        # declared `at_boot` (the reaper) go now, not after the dead worker's lock and a tick.
        for name, kwargs in self._at_boot:
            self._send(broker, name, kwargs)
        tick = min((s for _, s in self._entries), default=5.0) / 2
        while not self._stop.wait(max(0.5, tick)):
            for name, seconds in self._entries:
                try:
                    if get_redis().set(f"bayes:periodic:{name}", "1", nx=True, px=int(seconds * 1000)):
                        self._send(broker, name)
                except Exception as err:  # noqa: BLE001 - Redis may be briefly away
                    log.warning("periodic %s not scheduled: %s", name, err)

    @staticmethod
    def _send(broker, name: str, kwargs: dict[str, Any] | None = None) -> None:
        try:
            broker.get_actor(name).send_with_options(kwargs=kwargs or {})
        except Exception as err:  # noqa: BLE001 - Redis may be briefly away
            log.warning("periodic %s not sent: %s", name, err)


periodic = Periodic()
