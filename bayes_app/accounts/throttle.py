"""Sign-in throttling: after too many failed attempts for one account or from one client,
further attempts are refused for a while (counters in Redis, shared by every web process).
An account's failures are counted under the canonical form sign-in uses (identity.login_key),
so a lookalike spelling of the address (full-width letters, other case) shares the counter.

Built on the `limits` package (moving windows in Redis).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from bayes_app.accounts.identity import login_key

# One client may try several accounts (a shared lab NAT), so its allowance is larger.
CLIENT_FACTOR = 4


@dataclass(frozen=True)
class Refusal:
    """Why an attempt is refused and how long until the next may be made."""

    retry_after_s: int
    message: str


def _limits_url(redis_url: str) -> str:
    return "redis+unix://" + redis_url[len("unix://") :] if redis_url.startswith("unix://") else redis_url


class LoginThrottle:
    """Counts failed sign-ins per account and per client address within a moving window."""

    def __init__(self, redis_url: str, max_failures: int, window_minutes: int) -> None:
        self._limiter = MovingWindowRateLimiter(storage_from_string(_limits_url(redis_url)))
        self._account = parse(f"{max_failures} per {window_minutes} minutes")
        self._client = parse(f"{max_failures * CLIENT_FACTOR} per {window_minutes} minutes")

    def _retry_after(self, item: RateLimitItem, *key: str) -> int:
        reset = self._limiter.get_window_stats(item, *key).reset_time
        return max(1, int(reset - time.time()) + 1)

    def check(self, email: str, client: str) -> Refusal | None:
        """None when an attempt may proceed, else the refusal to answer with (HTTP 429)."""
        for item, key, who in (
            (self._account, ("login-account", login_key(email)), "this account"),
            (self._client, ("login-client", client), "your address"),
        ):
            if not self._limiter.test(item, *key):
                wait = self._retry_after(item, *key)
                minutes = max(1, round(wait / 60))
                return Refusal(
                    wait,
                    f"Too many failed sign-ins for {who}. "
                    f"Try again in about {minutes} minute{'s' if minutes != 1 else ''}.",
                )
        return None

    def failed(self, email: str, client: str) -> None:
        """Record a failed attempt against both the account and the client."""
        self._limiter.hit(self._account, "login-account", login_key(email))
        self._limiter.hit(self._client, "login-client", client)

    def succeeded(self, email: str) -> None:
        """A correct password clears the account's failures (the client's stay)."""
        self._limiter.clear(self._account, "login-account", login_key(email))
