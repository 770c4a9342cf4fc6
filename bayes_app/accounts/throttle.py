"""Sign-in throttling (counters in Redis, shared by every web process), in three moving windows:

- per (account, client): `max_failures` wrong passwords for one account from one client address
  stop that client trying that account for the window — the owner signing in from another
  client is not affected (issue 36.7: five wrong passwords must not lock an account out);
- per client: one address guessing across many accounts (spraying) is stopped after
  `max_failures * CLIENT_FACTOR` failures;
- per account, over every client: a distributed guess at one account is stopped after
  `max_failures * ACCOUNT_FACTOR` failures. One client can add at most `max_failures` to it, so
  locking an account out takes ACCOUNT_FACTOR different addresses.

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
# The account-wide guard needs this many clients each at their own limit before it trips.
ACCOUNT_FACTOR = 10


@dataclass(frozen=True)
class Refusal:
    """Why an attempt is refused and how long until the next may be made."""

    retry_after_s: int
    message: str


def _limits_url(redis_url: str) -> str:
    return "redis+unix://" + redis_url[len("unix://") :] if redis_url.startswith("unix://") else redis_url


class LoginThrottle:
    """Counts failed sign-ins per (account, client), per client address and per account
    within moving windows."""

    def __init__(self, redis_url: str, max_failures: int, window_minutes: int) -> None:
        self._limiter = MovingWindowRateLimiter(storage_from_string(_limits_url(redis_url)))
        self._pair = parse(f"{max_failures} per {window_minutes} minutes")
        self._client = parse(f"{max_failures * CLIENT_FACTOR} per {window_minutes} minutes")
        self._account = parse(f"{max_failures * ACCOUNT_FACTOR} per {window_minutes} minutes")

    def _keys(self, email: str, client: str) -> tuple[tuple[RateLimitItem, tuple[str, ...], str], ...]:
        account = login_key(email)
        return (
            (self._pair, ("login-pair", account, client), "this account from your address"),
            (self._client, ("login-client", client), "your address"),
            (self._account, ("login-account", account), "this account"),
        )

    def _retry_after(self, item: RateLimitItem, *key: str) -> int:
        reset = self._limiter.get_window_stats(item, *key).reset_time
        return max(1, int(reset - time.time()) + 1)

    def check(self, email: str, client: str) -> Refusal | None:
        """None when an attempt may proceed, else the refusal to answer with (HTTP 429)."""
        for item, key, who in self._keys(email, client):
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
        """Record a failed attempt against the (account, client) pair, the client and the account."""
        for item, key, _ in self._keys(email, client):
            self._limiter.hit(item, *key)

    def succeeded(self, email: str, client: str) -> None:
        """A correct password clears this client's failures for the account (the client's own
        count and the account-wide one stay: they guard against other addresses)."""
        self._limiter.clear(self._pair, "login-pair", login_key(email), client)
