"""The sign-in throttle on a real Redis (moved from tests/unit, which needs no services): per
(account, client), per client and per account (issue 36.7), and one counter for every spelling of
an address (issue 24.2)."""

from __future__ import annotations

import time

from bayes_app.accounts.throttle import ACCOUNT_FACTOR, LoginThrottle


def test_login_throttle_per_account_and_client_per_client_and_per_account(redis_server):
    t = LoginThrottle(redis_server.url_db(7), max_failures=3, window_minutes=1)
    tag = str(time.time_ns())
    owner, attacker, home = f"a{tag}@x.org", f"c{tag}", f"home{tag}"
    for _ in range(3):
        assert t.check(owner, attacker) is None
        t.failed(owner, attacker)
    refusal = t.check(owner, attacker)
    assert refusal is not None
    assert 1 <= refusal.retry_after_s <= 61
    assert "from your address" in refusal.message
    assert t.check(owner, home) is None  # issue 36.7: the owner elsewhere is not locked out
    assert t.check(f"b{tag}@x.org", attacker) is None  # another account from the same client
    t.succeeded(owner, attacker)
    assert t.check(owner, attacker) is None
    for i in range(12):  # one client guessing many accounts (spraying)
        t.failed(f"z{i}{tag}@x.org", f"c2{tag}")
    refusal = t.check(f"fresh{tag}@x.org", f"c2{tag}")
    assert refusal is not None
    assert "your address" in refusal.message
    victim = f"v{tag}@x.org"  # many clients at one account: the account-wide guard trips
    for i in range(ACCOUNT_FACTOR):
        for _ in range(3):
            t.failed(victim, f"bot{i}{tag}")
    refusal = t.check(victim, f"new{tag}")
    assert refusal is not None
    assert "this account." in refusal.message


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
    for spelling in spellings[:3]:  # failures spread over spellings count for one account
        t.failed(spelling, f"c{tag}")
    for spelling in spellings:
        refusal = t.check(spelling, f"c{tag}")
        assert refusal is not None, spelling
        assert "this account" in refusal.message, spelling
    assert t.check(spellings[0], f"other{tag}") is None  # issue 36.7: not from another client
    t.succeeded(spellings[-1], f"c{tag}")  # and a success under any spelling clears it
    assert t.check(spellings[0], f"c{tag}") is None
