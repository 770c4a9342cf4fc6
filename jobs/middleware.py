"""The workers' Dramatiq middleware (added to the broker in one place, `jobs.broker.build_broker`):
the heartbeat health reads, the run engine's abort listener and poll interval, the
bookkeeping of sent ingestion messages and the ingestion crash guard."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable

from dramatiq.errors import ActorNotFound
from dramatiq.middleware import Middleware, SkipMessage

from bayes_app.library import crash_guard
from bayes_app.redis_client import get_redis
from bayes_app.runs import control
from bayes_app.workers import HEARTBEAT_EVERY_S, clear_heartbeat, publish_heartbeat

log = logging.getLogger("bayes.jobs")
ENQUEUED_KEY = "bayes:ingest-enqueued:{}:{}"
ENQUEUED_TTL_S = 7 * 24 * 3600


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
        with contextlib.suppress(Exception):
            clear_heartbeat(get_redis())


WARM_WAIT_S = 60.0  # a message waits at most this long for the warm-up (then runs anyway)
_warm = threading.Event()


class RunControl(Middleware):
    """Per worker process: start the abort listener and the warm-up; poll queues at most every
    BAYES_WORKER_POLL_MS (Dramatiq's default idle backoff is up to 1 s).

    Messages other than the finalize queue's (the reaper, the finalizer) wait for the warm-up:
    its imports must not run beside a run's, as some libraries read `sys.modules` while they
    work (the openai SDK checks for `httpx`, which `qdrant_client` imports), and would find a
    module half-imported. So a restarted worker settles lost runs at once and starts new work
    a few seconds later."""

    def before_worker_boot(self, broker, worker) -> None:
        from bayes_app.settings import get_settings

        worker.worker_timeout = get_settings().worker_poll_ms
        control.get_listener(start=True)
        threading.Thread(target=_warm_up, name="bayes-warmup", daemon=True).start()

    def before_process_message(self, broker, message) -> None:
        if message.queue_name != "finalize" and not _warm.wait(WARM_WAIT_S):
            log.warning("worker warm-up still running after %.0f s; processing anyway", WARM_WAIT_S)


def _warm_up() -> None:
    try:
        _load()
    finally:
        _warm.set()


def _load() -> None:
    """Load the tokenizer, the language-ID model and the lazily imported libraries now, so the
    first cancelled run does not pay for the one while estimating its usage, nor the first small
    document after a (re)start for the other (seconds, and many more while OCR threads hold the
    GIL)."""
    try:
        from bayes_app.llm.tokens import count_tokens

        count_tokens("warm up")
    except Exception:  # noqa: BLE001
        pass
    try:
        from bayes_app.search import crosslang

        crosslang.detect("Loading the language identification model before the first document.")
    except Exception:  # noqa: BLE001
        pass
    # Imported lazily so a restarted worker settles its lost runs first (boot 7.8 s -> 3.3 s):
    # loaded here in the background, not by the first run or document.
    import contextlib
    import importlib

    for module in ("bayes_app.search.index", "bayes_app.llm.openai_provider", "scipy.cluster.hierarchy", "wordfreq"):
        with contextlib.suppress(Exception):
            importlib.import_module(module)


INGESTION = "ingestion"  # the actor option of the ingestion actor: `(document_id, generation, ...)`


def _is_ingestion(broker, message) -> bool:
    try:
        return bool(broker.get_actor(message.actor_name).options.get(INGESTION))
    except ActorNotFound:
        return False


class IngestEnqueued(Middleware):
    """Remember every ingestion message that was sent (document, generation), so the reaper
    (`jobs.maintenance.reap_ingestion`) re-sends only the queued documents that never were,
    e.g. the demo library created before Redis was up. For actors declared `ingestion=True`."""

    actor_options = {INGESTION}

    def after_enqueue(self, broker, message, delay) -> None:
        if _is_ingestion(broker, message):
            document_id, generation = message.args[:2]
            get_redis().set(ENQUEUED_KEY.format(document_id, generation), "1", ex=ENQUEUED_TTL_S)


class IngestCrashGuard(Middleware):
    """Counts the ingestion attempts that died with their worker process (`crash_guard`): each
    `ingest_document` message registers its attempt before it runs and clears it after, however
    it ended; a version whose attempts killed their worker BAYES_INGEST_MAX_CRASHES times is not
    run again but handed to `on_crashed(document_id, generation, crashes)` (mark it failed).
    For actors declared `ingestion=True`."""

    actor_options = {INGESTION}

    def __init__(self, max_crashes: int, on_crashed: Callable[[str, int, int], None]) -> None:
        self.max_crashes, self.on_crashed = max_crashes, on_crashed
        self._tokens: dict[str, str] = {}  # message id -> this attempt's token

    def before_process_message(self, broker, message) -> None:
        if not _is_ingestion(broker, message):
            return
        document_id, generation = message.args[:2]
        r = get_redis()
        try:
            token, crashes = crash_guard.begin(r, document_id, generation, heartbeat_alive)
        except Exception as err:  # noqa: BLE001 - without Redis the attempt simply goes uncounted
            log.warning("ingest crash guard unavailable for %s: %s", document_id, err)
            return
        if crashes < self.max_crashes:
            self._tokens[message.message_id] = token
            return
        log.error(
            "ingestion of %s (generation %s) killed its worker %d times: marking it failed",
            document_id,
            generation,
            crashes,
        )
        self.on_crashed(document_id, generation, crashes)
        crash_guard.forget(r, document_id, generation)
        raise SkipMessage()

    def after_process_message(self, broker, message, *, result=None, exception=None) -> None:
        token = self._tokens.pop(message.message_id, None)
        if token is None:
            return
        document_id, generation = message.args[:2]
        try:
            crash_guard.end(get_redis(), document_id, generation, token)
        except Exception as err:  # noqa: BLE001 - an uncleared token counts as one crash
            log.warning("could not clear the ingest attempt of %s: %s", document_id, err)


def heartbeat_alive(host: str, pid: int) -> bool:
    """A worker on another host is alive while its heartbeat key exists."""
    from bayes_app.workers import HEARTBEAT_PREFIX

    return bool(get_redis().exists(f"{HEARTBEAT_PREFIX}{host}:{pid}"))


class FairShare(Middleware):
    """Fair ingestion (`library.fairness`): an actor declared with the option
    `fair_share=<function of the message's args → fairness.Claim | None>` runs only while its
    owner (and, for a large file, the large-file lane) has a free slot; otherwise the message
    goes back to its queue for BAYES_INGEST_WAIT_MS and the thread takes other work. Slots are
    leases, refreshed while the work runs and released however it ends."""

    actor_options = {"fair_share"}

    def __init__(self) -> None:
        self._held: dict[str, object] = {}  # message id -> its claim
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def before_worker_boot(self, broker, worker) -> None:
        threading.Thread(target=self._refresh, name="bayes-fair-share", daemon=True).start()

    def before_worker_shutdown(self, broker, worker) -> None:
        self._stop.set()

    def _refresh(self) -> None:
        from bayes_app.library import fairness

        while not self._stop.wait(fairness.LEASE_S / 3):
            with self._lock:
                held = list(self._held.items())
            for holder, claim in held:
                try:
                    fairness.refresh(get_redis(), claim, holder)  # type: ignore[arg-type]
                except Exception as err:  # noqa: BLE001 - a lapsed lease only lets one more in
                    log.warning("fair-share lease refresh failed: %s", err)

    def before_process_message(self, broker, message) -> None:
        from bayes_app.library import fairness
        from bayes_app.settings import get_settings

        claim_of = broker.get_actor(message.actor_name).options.get("fair_share")
        if claim_of is None:
            return
        s = get_settings()
        limits = fairness.Limits(s.ingest_per_user, s.ingest_large_slots, int(s.ingest_large_mb * 1024 * 1024))
        try:
            claim = claim_of(*message.args, large_bytes=limits.large_bytes)
            if claim is None:
                return
            got = fairness.acquire(get_redis(), claim, message.message_id, limits)
        except Exception as err:  # noqa: BLE001 - without Redis the work runs unthrottled
            log.warning("fair share unavailable for %s: %s", message.message_id, err)
            return
        if got:
            with self._lock:
                self._held[message.message_id] = claim
            return
        broker.enqueue(message, delay=s.ingest_wait_ms)  # back in line; this thread takes other work
        raise SkipMessage()

    def after_process_message(self, broker, message, *, result=None, exception=None) -> None:
        self._release(message)

    def after_skip_message(self, broker, message) -> None:
        self._release(message)

    def _release(self, message) -> None:
        from bayes_app.library import fairness

        with self._lock:
            claim = self._held.pop(message.message_id, None)
        if claim is None:
            return
        try:
            fairness.release(get_redis(), claim, message.message_id)  # type: ignore[arg-type]
        except Exception as err:  # noqa: BLE001 - the lease lapses on its own
            log.warning("fair-share release failed: %s", err)
