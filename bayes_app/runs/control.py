"""Run control in Redis: the lease (who is running a run), its heartbeat, and the abort flag.

Keys: `op:{id}:lease` (token, PX TTL), `op:{id}:abort` (reason, 1 day). An abort is also
PUBLISHed on `bayes:abort` so a per-process listener sets a local Event per run at once;
a periodic GET of the flag covers a missed message (listener reconnecting, Redis restart).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar, cast

import redis

log = logging.getLogger("bayes.runs.control")
T = TypeVar("T")

ABORT_CHANNEL = "bayes:abort"
LEASE_MS = 6_000
HEARTBEAT_EVERY_S = LEASE_MS / 3000  # 2 s: three renewals per TTL
ABORT_TTL_S = 24 * 3600
FALLBACK_POLL_S = 1.0
RETRY_MIN_S, RETRY_MAX_S = 0.05, 0.5  # backoff of Redis writes retried while Redis is away

_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
)
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


def lease_key(op_id: str) -> str:
    return f"op:{op_id}:lease"


def abort_key(op_id: str) -> str:
    return f"op:{op_id}:abort"


# ---- lease ---------------------------------------------------------------------------------
class Lease:
    """A run's lease: `acquire()` (SET NX PX), `renew()`, `release()` (compare-and-delete),
    and `start_heartbeat()` that renews it from a daemon thread until released."""

    def __init__(self, r: redis.Redis, op_id: str, ttl_ms: int = LEASE_MS, every_s: float | None = None) -> None:
        self.r, self.op_id, self.ttl_ms = r, op_id, ttl_ms
        self.every_s = every_s if every_s is not None else ttl_ms / 3000
        self.token = uuid.uuid4().hex
        self.lost = threading.Event()  # set when a renewal found the lease taken or gone
        self.on_lost: Callable[[], None] | None = None  # e.g. the run's AbortSignal.set
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # When the lease surely expires: the send time of the last successful SET/renewal
        # + TTL (monotonic clock). While Redis is away, that is the budget for retries.
        self.valid_until = 0.0

    def acquire(self) -> bool:
        sent = time.monotonic()
        ok = bool(self.r.set(lease_key(self.op_id), self.token, nx=True, px=self.ttl_ms))
        if ok:
            self.valid_until = sent + self.ttl_ms / 1000
        return ok

    def renew(self) -> bool:
        sent = time.monotonic()
        ok = bool(self.r.eval(_RENEW, 1, lease_key(self.op_id), self.token, self.ttl_ms))
        if ok:
            self.valid_until = sent + self.ttl_ms / 1000
        return ok

    def remaining_s(self) -> float:
        """Seconds until the lease surely expired (≤ 0: it may be someone else's now)."""
        return self.valid_until - time.monotonic()

    def declare_lost(self) -> None:
        """We can no longer prove we hold the lease: stop the run (idempotent)."""
        if not self.lost.is_set():
            self.lost.set()
            if self.on_lost is not None:
                self.on_lost()

    def release(self) -> bool:
        self._stop.set()
        try:
            return bool(self.r.eval(_RELEASE, 1, lease_key(self.op_id), self.token))
        except redis.RedisError as err:  # it expires on its own
            log.warning("lease release of %s failed: %s", self.op_id, err)
            return False

    def start_heartbeat(self) -> None:
        """Renew every `every_s`. While Redis is unreachable, retry with a short bounded
        backoff until the TTL has surely run out, then declare the lease lost."""

        def beat() -> None:
            wait = self.every_s
            while not self._stop.wait(wait):
                try:
                    if not self.renew():  # taken over, or gone (expired / Redis lost it)
                        self.declare_lost()
                        return
                    wait = self.every_s
                except redis.RedisError as err:
                    left = self.remaining_s()
                    if left <= 0:
                        log.warning("lease of %s expired while Redis was unreachable: %s", self.op_id, err)
                        self.declare_lost()
                        return
                    log.warning("lease renewal of %s failed (%.1f s left): %s", self.op_id, left, err)
                    wait = min(RETRY_MAX_S, max(0.05, left / 4))

        self._thread = threading.Thread(target=beat, name=f"lease-{self.op_id}", daemon=True)
        self._thread.start()


def retry_while_leased(fn: Callable[[], T], lease: Lease, what: str) -> T:
    """Call `fn` (a Redis write of the run holding `lease`); on a connection error retry
    with bounded exponential backoff for as long as the lease is surely ours. When that
    budget is gone, declare the lease lost and raise LeaseExpired.

    A write retried after a lost reply may land twice (at-least-once), never zero times.
    """
    delay = RETRY_MIN_S
    while True:
        try:
            return fn()
        except (redis.ConnectionError, redis.TimeoutError) as err:
            left = lease.remaining_s()
            if lease.lost.is_set() or left <= 0:
                lease.declare_lost()
                raise LeaseExpired(f"{what}: Redis unreachable past the lease ({err})") from err
            log.warning("run %s: %s failed, retrying (%.1f s of lease left): %s", lease.op_id, what, left, err)
            time.sleep(min(delay, left))
            delay = min(RETRY_MAX_S, delay * 2)


def retry_for(fn: Callable[[], T], seconds: float, what: str) -> T:
    """Call `fn`; on a Redis connection error retry with bounded backoff for up to
    `seconds` (e.g. across a Redis restart), then re-raise the last error."""
    deadline = time.monotonic() + seconds
    delay = RETRY_MIN_S
    while True:
        try:
            return fn()
        except (redis.ConnectionError, redis.TimeoutError) as err:
            left = deadline - time.monotonic()
            if left <= 0:
                raise
            log.warning("%s failed, retrying (%.1f s left): %s", what, left, err)
            time.sleep(min(delay, left))
            delay = min(RETRY_MAX_S, delay * 2)


class LeaseExpired(redis.ConnectionError):
    """Redis stayed unreachable longer than the run's lease: the run must stop."""


def lease_alive(r: redis.Redis, op_id: str) -> bool:
    return bool(r.exists(lease_key(op_id)))


def lease_left_ms(r: redis.Redis, op_id: str) -> int:
    """How long the run's lease lasts unless renewed (0: no lease)."""
    return max(0, int(cast(int, r.pttl(lease_key(op_id)))))


# ---- abort flag ----------------------------------------------------------------------------
def request_abort(r: redis.Redis, op_id: str, reason: str = "user_cancel") -> None:
    """Set the flag (durable for a day) and publish it so listening workers react now."""
    pipe = r.pipeline(transaction=False)
    pipe.set(abort_key(op_id), reason, ex=ABORT_TTL_S)
    pipe.publish(ABORT_CHANNEL, op_id)
    pipe.execute()


def abort_requested(r: redis.Redis, op_id: str) -> str | None:
    return cast(str | None, r.get(abort_key(op_id)))


class AbortSignal:
    """One run's abort: a threading.Event (set by the listener or the fallback poll) with
    an asyncio view for the run's event loop."""

    def __init__(self, op_id: str) -> None:
        self.op_id = op_id
        self.event = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._lock = threading.Lock()

    def set(self) -> None:
        with self._lock:
            self.event.set()
            waiters = list(self._waiters)
        for loop, ev in waiters:
            with contextlib.suppress(RuntimeError):  # loop closed
                loop.call_soon_threadsafe(ev.set)

    def is_set(self) -> bool:
        return self.event.is_set()

    def async_event(self) -> asyncio.Event:
        """An asyncio.Event on the running loop, set (thread-safely) with this signal."""
        ev = asyncio.Event()
        with self._lock:
            self._waiters.append((asyncio.get_running_loop(), ev))
            if self.event.is_set():
                ev.set()
        return ev


class AbortListener:
    """Per process: one pub/sub thread that sets the `AbortSignal` of runs it watches,
    plus a fallback thread that GETs the flags of watched runs every `poll_s`."""

    def __init__(self, redis_factory: Callable[[], redis.Redis], poll_s: float = FALLBACK_POLL_S) -> None:
        self._factory = redis_factory
        self.poll_s = poll_s
        self._signals: dict[str, AbortSignal] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._started = False
        self.subscribed = threading.Event()

    # -- registration
    def watch(self, op_id: str) -> AbortSignal:
        with self._lock:
            sig = self._signals.get(op_id)
            if sig is None:
                sig = self._signals[op_id] = AbortSignal(op_id)
        try:  # the flag may have been set before we watched
            if abort_requested(self._factory(), op_id):
                sig.set()
        except redis.RedisError:
            pass
        return sig

    def unwatch(self, op_id: str) -> None:
        with self._lock:
            self._signals.pop(op_id, None)

    def _fire(self, op_id: str) -> None:
        with self._lock:
            sig = self._signals.get(op_id)
        if sig is not None:
            sig.set()

    # -- threads
    def start(self) -> None:
        if self._started:
            return
        self._started = True
        threading.Thread(target=self._listen, name="bayes-abort-listener", daemon=True).start()
        threading.Thread(target=self._poll, name="bayes-abort-poll", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                ps = self._factory().pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
                ps.subscribe(ABORT_CHANNEL)
                self.subscribed.set()
                while not self._stop.is_set():
                    msg = ps.get_message(timeout=1.0)
                    if msg and msg.get("type") == "message":
                        data = msg["data"]
                        self._fire(data.decode() if isinstance(data, bytes) else data)
            except Exception as err:  # noqa: BLE001 - Redis away: retry; the poll covers the gap
                self.subscribed.clear()
                log.warning("abort listener reconnecting: %s", err)
                time.sleep(0.5)

    def _poll(self) -> None:
        while not self._stop.wait(self.poll_s):
            with self._lock:
                ids = [i for i, s in self._signals.items() if not s.is_set()]
            if not ids:
                continue
            try:
                values = cast(list[Any], self._factory().mget([abort_key(i) for i in ids]))
            except redis.RedisError:
                continue
            for op_id, value in zip(ids, values):
                if value:
                    self._fire(op_id)


_listener: AbortListener | None = None
_listener_lock = threading.Lock()


def get_listener(start: bool = True) -> AbortListener:
    """The process's abort listener (started on first use)."""
    global _listener
    with _listener_lock:
        if _listener is None:
            from bayes_app.redis_client import get_redis

            _listener = AbortListener(get_redis)
        if start:
            _listener.start()
        return _listener
