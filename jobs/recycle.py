"""Memory guard: after each message, a worker process whose resident memory is over
BAYES_WORKER_MAX_RSS_MB stops taking messages, lets the ones in flight finish, hands its
prefetched messages back to the broker and exits with RECYCLE_EXIT_CODE; the supervisor
starts a fresh process in its place (`bayes_app.procs`). A memory-heavy document then costs
one restart instead of an OOM kill of everything in flight."""

from __future__ import annotations

import logging
import os
import threading
import time

import psutil
from dramatiq import Worker
from dramatiq.middleware import Middleware

from bayes_app.procs import planned
from bayes_app.procs.config import RECYCLE_EXIT_CODE, WORKER_STARTSECS
from bayes_app.settings import get_settings

log = logging.getLogger("bayes.jobs.recycle")

# A process recycled within the supervisor's `startsecs` of its start is counted as a failed start
# (BACKOFF: health "degraded"), not a planned restart. Its first message can come that early (the
# reaper a worker sends as it boots), so a recycle waits until the process is this old.
MIN_UPTIME_S = WORKER_STARTSECS + 1.0


class MemoryGuard(Middleware):
    def __init__(self, max_rss_mb: int) -> None:
        self.max_rss = max_rss_mb * 1024 * 1024
        self.recycling = threading.Event()
        self._worker: Worker | None = None

    def before_worker_boot(self, broker, worker) -> None:
        self._worker = worker

    def after_process_message(self, broker, message, *, result=None, exception=None) -> None:
        self.check()

    def after_skip_message(self, broker, message) -> None:
        self.check()

    def check(self) -> None:
        if self.max_rss <= 0 or self._worker is None or self.recycling.is_set():
            return
        rss = psutil.Process().memory_info().rss
        if rss <= self.max_rss:
            return
        self.recycling.set()
        log.warning(
            "worker process %d uses %d MB, over BAYES_WORKER_MAX_RSS_MB=%d: finishing "
            "the messages in flight, then exiting to be replaced",
            os.getpid(),
            rss >> 20,
            self.max_rss >> 20,
        )
        # Health reads the gap until the supervisor has a new process running as planned.
        try:
            planned.announce(get_settings().data_path, f"memory {rss >> 20} MB over {self.max_rss >> 20} MB")
        except OSError:
            log.warning("could not announce the planned restart", exc_info=True)
        # Not in this (worker) thread: it must first finish and acknowledge its message.
        threading.Thread(target=self._recycle, name="bayes-recycle", daemon=True).start()

    def _recycle(self) -> None:
        worker = self._worker
        assert worker is not None  # recycling starts once a worker booted
        time.sleep(max(0.0, MIN_UPTIME_S - (time.time() - psutil.Process().create_time())))
        # Pause only the worker threads: the consumers keep fetching, so the broker keeps
        # seeing this process's heartbeat and does not hand the in-flight messages to others.
        threads = list(worker.workers)
        for t in threads:
            t.pause()
        for t in threads:
            t.paused_event.wait()
        worker.stop(timeout=10_000)  # idle now: requeues what was prefetched, closes consumers
        log.warning("worker process %d recycled (exit code %d)", os.getpid(), RECYCLE_EXIT_CODE)
        for handler in logging.getLogger().handlers:
            handler.flush()
        os._exit(RECYCLE_EXIT_CODE)
