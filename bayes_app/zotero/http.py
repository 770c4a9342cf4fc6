"""The HTTP policy the sync owns around pyzotero: at most 4 requests in flight, `Backoff` and
`Retry-After` (seconds or HTTP date) honoured on any response, bounded retries of
429/503/5xx and connection errors.

pyzotero raises at once on several of these (429 without Retry-After, 5xx) and
mis-parses an HTTP-date Retry-After, so the policy sits below it, in an httpx2
transport: pyzotero only ever sees the final response, with the rate-limit headers
already consumed.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx2

log = logging.getLogger("bayes.zotero.http")
# httpx2 logs every request URL at INFO: too chatty for a 5,000-item sync, and URLs are not
# something to put in logs by default.
logging.getLogger("httpx2").setLevel(logging.WARNING)

RETRY_STATUSES = {429, 500, 502, 503, 504}
MAX_CONCURRENCY = 4


class RateLimited(Exception):
    """The server asked us to wait longer than we are willing to block a worker."""

    def __init__(self, wait_s: float):
        super().__init__(f"Zotero asked to wait {wait_s:.0f} s before the next request.")
        self.wait_s = wait_s


def parse_delay(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a `Backoff`/`Retry-After` value: delta seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass
class Policy:
    """Shared by every client of one sync: the concurrency gate, the backoff clock, counters."""

    max_concurrency: int = MAX_CONCURRENCY
    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0  # cap of our own exponential backoff
    max_wait_s: float = 120.0  # longest server-requested wait we sleep through
    sleep: Callable[[float], None] = time.sleep
    requests: int = 0
    retries: int = 0
    waited_s: float = 0.0
    _gate: threading.BoundedSemaphore = field(init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _not_before: float = 0.0

    def __post_init__(self) -> None:
        self._gate = threading.BoundedSemaphore(self.max_concurrency)

    def defer(self, seconds: float) -> None:
        """No request may start for `seconds` (server Backoff / Retry-After)."""
        if seconds > self.max_wait_s:
            raise RateLimited(seconds)
        with self._lock:
            self._not_before = max(self._not_before, time.monotonic() + seconds)

    def wait_turn(self) -> None:
        while True:
            with self._lock:
                remaining = self._not_before - time.monotonic()
            if remaining <= 0:
                return
            self.waited_s += remaining
            self.sleep(remaining)

    def count(self) -> None:
        with self._lock:
            self.requests += 1


class PolicyTransport(httpx2.BaseTransport):
    """Applies a `Policy` to every request (including redirects to the file store)."""

    def __init__(self, policy: Policy, inner: httpx2.BaseTransport | None = None):
        self.policy = policy
        self.inner = inner or httpx2.HTTPTransport(retries=0)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        p = self.policy
        attempt = 0
        while True:
            attempt += 1
            p.wait_turn()
            with p._gate:
                p.count()
                try:
                    response = self.inner.handle_request(request)
                except (
                    httpx2.ConnectError,
                    httpx2.ReadError,
                    httpx2.RemoteProtocolError,
                    httpx2.TimeoutException,
                ) as err:
                    if attempt >= p.max_attempts:
                        raise
                    delay = self._own_delay(attempt)
                    log.info("zotero request failed (%s); retry %d in %.1fs", type(err).__name__, attempt, delay)
                    p.retries += 1
                    p.defer(delay)
                    continue
            backoff = parse_delay(response.headers.get("Backoff"))
            retry_after = parse_delay(response.headers.get("Retry-After"))
            if backoff:
                p.defer(backoff)
            if response.status_code in RETRY_STATUSES and attempt < p.max_attempts:
                response.read()
                response.close()
                delay = retry_after if retry_after is not None else self._own_delay(attempt)
                log.info("zotero answered %d; retry %d in %.1fs", response.status_code, attempt, delay)
                p.retries += 1
                p.defer(delay)
                continue
            # pyzotero must not apply its own (sleeping, partly broken) backoff on top of ours
            for h in ("Backoff", "Retry-After"):
                if h in response.headers:
                    del response.headers[h]
            return response

    def _own_delay(self, attempt: int) -> float:
        p = self.policy
        return min(p.max_delay_s, p.base_delay_s * 2 ** (attempt - 1)) * (0.75 + random.random() / 2)

    def close(self) -> None:
        """Closing a client must not close the shared connection pool (pyzotero closes its
        client when garbage-collected); the owner calls `shutdown()`."""

    def shutdown(self) -> None:
        self.inner.close()


def make_client(
    policy: Policy | PolicyTransport, *, timeout: float = 60.0, inner: httpx2.BaseTransport | None = None
) -> httpx2.Client:
    """An httpx2 client for pyzotero (`Zotero(..., client=...)`) governed by a policy (or
    sharing an existing policy transport and its connection pool)."""
    transport = policy if isinstance(policy, PolicyTransport) else PolicyTransport(policy, inner)
    return httpx2.Client(transport=transport, follow_redirects=True, timeout=timeout, trust_env=False)
