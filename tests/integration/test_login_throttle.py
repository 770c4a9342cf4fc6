"""The sign-in throttle on a real Redis (moved from tests/unit, which needs no services):
per account and per client, and one counter for every spelling of an address (issue 24.2)."""

from __future__ import annotations

import time

from bayes_app.accounts.throttle import LoginThrottle


def test_login_throttle_per_account_and_per_client(redis_server):
    t = LoginThrottle(redis_server.url_db(7), max_failures=3, window_minutes=1)
    tag = str(time.time_ns())
    for _ in range(3):
        assert t.check(f"a{tag}@x.org", f"c{tag}") is None
        t.failed(f"a{tag}@x.org", f"c{tag}")
    refusal = t.check(f"a{tag}@x.org", f"c{tag}")
    assert refusal is not None and 1 <= refusal.retry_after_s <= 61 and "this account" in refusal.message
    assert t.check(f"b{tag}@x.org", f"c{tag}") is None  # another account from the same client
    t.succeeded(f"a{tag}@x.org")
    assert t.check(f"a{tag}@x.org", f"c{tag}") is None
    for i in range(12):  # one client guessing many accounts
        t.failed(f"z{i}{tag}@x.org", f"c2{tag}")
    refusal = t.check(f"fresh{tag}@x.org", f"c2{tag}")
    assert refusal is not None and "your address" in refusal.message


def test_a_lookalike_spelling_cannot_reset_the_lockout(redis_server):
    t = LoginThrottle(redis_server.url_db(7), max_failures=3, window_minutes=1)
    tag = str(time.time_ns())
    spellings = [
        f"user@test{tag}.example.org",
        f"user@ｔest{tag}.example.org",
        f"USER@TEST{tag}.EXAMPLE.ORG",
        f" user@Test{tag}.Example.Org ",
        f"ｕｓｅｒ@ｔｅｓｔ{tag}.example.org",
    ]
    for i, spelling in enumerate(spellings[:3]):  # failures spread over spellings count for one account
        t.failed(spelling, f"c{i}{tag}")
    for spelling in spellings:
        refusal = t.check(spelling, f"fresh{tag}")
        assert refusal is not None and "this account" in refusal.message, spelling
    t.succeeded(spellings[-1])  # and a success under any spelling clears it
    assert t.check(spellings[0], f"fresh{tag}") is None
