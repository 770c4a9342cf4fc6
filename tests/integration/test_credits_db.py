"""Prices, the ledger and reservations against real SQLite and PostgreSQL (each test runs on both)."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, func, select

from bayes_app.credits import ledger, pricing
from bayes_app.credits.ledger import InsufficientCredits
from bayes_app.credits.pricing import PriceMissing
from bayes_app.db import get_engine
from bayes_app.models import MICRO, LedgerEntry, ModelPrice, Run, UsageEvent, User
from bayes_app.runs import lifecycle as lc


def make_user(db: Session, credits: float = 0) -> User:
    user = User(email=f"u{uuid.uuid4().hex[:10]}@example.com", password_hash="x")
    db.add(user)
    db.commit()
    if credits:
        ledger.grant(db, user, int(credits * MICRO), f"grant:{user.id}", "welcome")
        db.commit()
    return user


def count(db: Session, model, *where) -> int:
    return db.exec(select(func.count()).select_from(model).where(*where)).one()


def test_price_math(dbs):
    offline = pricing.get_price(dbs, "offline")  # seeded by the migration
    assert offline.input_per_million > 0
    assert offline.output_per_million > 0
    price = pricing.set_price(dbs, "gpt-test", 2_500_000, 1_250_000, 10_000_000, "admin@x")
    dbs.commit()
    # 1000 input of which 400 cached, 200 output: (600*2.5 + 400*1.25 + 200*10) credits/M
    assert pricing.cost_micro(price, 1000, 400, 200) == 600 * 2_500_000 // 10**6 + 500 + 2000
    assert pricing.cost_micro(price, 1, 0, 0) == 3  # 2.5 micro-credits rounds up
    assert pricing.cost_micro(price, 0, 0, 0) == 0
    cheap = ModelPrice(model="c", input_per_million=1, cached_per_million=1, output_per_million=1)
    assert pricing.cost_micro(cheap, 1, 0, 0) == 1  # never free
    assert pricing.cost_micro(cheap, 999_999, 0, 1) == 1  # one ceiling over the exact sum
    with pytest.raises(ValueError, match="token counts must be >= 0"):
        pricing.cost_micro(price, -1, 0, 0)
    with pytest.raises(PriceMissing, match="Model nope has no price; an admin must set one"):
        pricing.get_price(dbs, "nope")
    pricing.set_price(dbs, "gpt-test", 1, 1, 1)
    dbs.commit()
    assert pricing.get_price(dbs, "gpt-test").output_per_million == 1
    assert [p.model for p in pricing.list_prices(dbs)] == ["gpt-test", "offline"]
    assert pricing.format_credits(1_500_000) == "1.5"
    assert pricing.format_credits(-3) == "-0.000003"


def test_refused_without_price_before_anything_is_created(dbs):
    user = make_user(dbs, credits=10)
    with pytest.raises(PriceMissing, match="Model unpriced has no price"):
        lc.create_operation(dbs, user, "ask", "Ask: why?", MICRO, "unpriced")
    assert count(dbs, Run) == 0
    assert count(dbs, LedgerEntry) == 1  # the grant only


def test_refused_without_credits_before_anything_is_created(dbs):
    user = make_user(dbs, credits=1.5)
    with pytest.raises(InsufficientCredits) as err:
        lc.create_operation(dbs, user, "ask", "Ask: why?", 2 * MICRO, "offline")
    assert err.value.available == 1_500_000
    assert err.value.needed == 2_000_000
    assert "only 1.5 are available" in str(err.value)
    assert count(dbs, Run) == 0
    assert count(dbs, LedgerEntry) == 1
    nobody = make_user(dbs)
    with pytest.raises(InsufficientCredits, match="only 0 are available"):
        lc.create_operation(dbs, nobody, "ask", "Ask: x", 1, "offline")
    assert count(dbs, Run) == 0


def test_grant_reserve_spend_release_balances(dbs, db_url):
    user = make_user(dbs, credits=10)
    assert not ledger.grant(dbs, user, 10 * MICRO, f"grant:{user.id}")  # same key: no 2nd row
    dbs.commit()
    assert (ledger.balance(dbs, user), ledger.held(dbs, user)) == (10 * MICRO, 0)

    op = lc.create_operation(dbs, user, "ask", "Ask: what is X?", 2 * MICRO, "offline", input={"prompt": "what is X?"})
    assert op.status == "QUEUED"
    assert op.reserved_credits == 2 * MICRO
    assert ledger.balance(dbs, user) == 10 * MICRO
    assert ledger.held(dbs, user) == 2 * MICRO
    assert ledger.available(dbs, user) == 8 * MICRO
    assert ledger.reserve(dbs, op, 5 * MICRO).amount == 2 * MICRO  # idempotent: first wins
    dbs.commit()
    assert ledger.held(dbs, user) == 2 * MICRO

    attempt = lc.mark_running(dbs, op.id)
    e1 = lc.record_usage(dbs, op.id, attempt, 1, "agent", "offline", 1000, 0, 500)
    e2 = lc.record_usage(dbs, op.id, attempt, 2, "agent", "offline", 2000, 1000, 100)
    cost = e1.cost_credits + e2.cost_credits
    assert e1.cost_credits == 1000 + 1000  # 1000 in @1/token, 500 out @2/token
    assert lc.mark_stopped(dbs, op.id, attempt, "SUCCEEDED")
    assert lc.finalize(get_engine(db_url), op.id, lambda: False) == "finalized"

    assert ledger.balance(dbs, user) == 10 * MICRO - cost
    assert ledger.held(dbs, user) == 0
    assert ledger.available(dbs, user) == 10 * MICRO - cost
    entries = {
        e.entry_type: e.amount for e in dbs.exec(select(LedgerEntry).where(LedgerEntry.operation_id == op.id)).all()
    }
    assert entries == {"reserve": 2 * MICRO, "spend": -cost, "release": -2 * MICRO}

    assert ledger.adjust(dbs, user, -cost, "adjust:refund-test", "goodwill") is True
    dbs.commit()
    assert ledger.balance(dbs, user) == 10 * MICRO - 2 * cost
    assert ledger.summaries(dbs)[user.id] == (10 * MICRO - 2 * cost, 0)
    with pytest.raises(ValueError, match="a grant must be > 0 micro-credits"):
        ledger.grant(dbs, user, 0, "grant:zero")


def test_sign_convention_is_enforced(dbs):
    user = make_user(dbs)
    dbs.add(LedgerEntry(user_id=user.id, entry_type="spend", amount=5, idempotency_key="bad"))
    with pytest.raises(IntegrityError):
        dbs.commit()
    dbs.rollback()
    dbs.add(LedgerEntry(user_id=user.id, entry_type="gift", amount=5, idempotency_key="bad2"))
    with pytest.raises(IntegrityError):
        dbs.commit()
    dbs.rollback()


def test_history_shows_one_row_per_run(dbs, db_url):
    user = make_user(dbs, credits=5)
    done = lc.create_operation(dbs, user, "ask", "Ask: first question", MICRO, "offline")
    a = lc.mark_running(dbs, done.id)
    total = 0
    for seq, step in enumerate(["phase1_thinking", "agent", "analyze_document", "agent"]):
        total += lc.record_usage(dbs, done.id, a, seq, step, "offline", 300, 0, 50).cost_credits
    lc.mark_stopped(dbs, done.id, a, "SUCCEEDED")
    lc.finalize(get_engine(db_url), done.id, lambda: False)
    live = lc.create_operation(dbs, user, "build_map", "Mindmap: Sleep", MICRO, "offline")

    rows = ledger.history(dbs, user)
    assert [r.kind for r in rows].count("run") == 2
    assert len(rows) == 3
    by_title = {r.title: r for r in rows}
    first = by_title["Ask: first question"]
    assert (first.status, first.charged, first.amount) == ("SUCCEEDED", total, -total)
    running = by_title["Mindmap: Sleep"]
    assert (running.status, running.charged, running.reserved) == ("QUEUED", None, MICRO)
    assert running.id == live.id
    assert by_title["welcome"].kind == "grant"
    assert by_title["welcome"].amount == 5 * MICRO
    assert all(r.date for r in rows)


def test_usage_is_idempotent_and_priced_at_record_time(dbs, db_url):
    user = make_user(dbs, credits=5)
    pricing.set_price(dbs, "m1", 1_000_000, 0, 0)
    dbs.commit()
    op = lc.create_operation(dbs, user, "ask", "Ask: q", MICRO, "m1")
    a = lc.mark_running(dbs, op.id)
    first = lc.record_usage(dbs, op.id, a, 7, "agent", "m1", 100, 0, 0)
    again = lc.record_usage(dbs, op.id, a, 7, "agent", "m1", 999, 0, 999)  # redelivered
    assert again.id == first.id
    assert again.cost_credits == 100
    pricing.set_price(dbs, "m1", 3_000_000, 0, 0)  # price change: new usage only
    dbs.commit()
    later = lc.record_usage(dbs, op.id, a, 8, "agent", "m1", 100, 0, 0, estimated=True)
    assert later.cost_credits == 300
    assert later.estimated
    assert count(dbs, UsageEvent, UsageEvent.operation_id == op.id) == 2
    assert lc.usage_totals(dbs, op.id)["cost_credits"] == 400
    with pytest.raises(PriceMissing):
        lc.record_usage(dbs, op.id, a, 9, "agent", "unpriced", 1, 0, 0)
    lc.mark_stopped(dbs, op.id, a, "SUCCEEDED")
    lc.finalize(get_engine(db_url), op.id, lambda: False)
    with pytest.raises(lc.RunFinalized):
        lc.record_usage(dbs, op.id, a, 10, "agent", "m1", 1, 0, 0)


@pytest.mark.parametrize("entry", ["create_operation", "reserve"])
def test_concurrent_reserves_only_the_ones_that_fit_pass(dbs, db_url, monkeypatch, entry):
    user = make_user(dbs, credits=5)
    n, barrier = 12, threading.Barrier(12)
    ops = [Run(owner_id=user.id, kind="ask", title=f"Ask: {i}", model="offline") for i in range(n)]
    if entry == "reserve":  # runs created without a reserve: only reserve() guards credits
        dbs.add_all(ops)
        dbs.commit()
    real_available = ledger.available

    def slow_available(db, who):  # widen the read-then-insert window the lock must close
        value = real_available(db, who)
        time.sleep(0.02)
        return value

    monkeypatch.setattr(ledger, "available", slow_available)
    results: list[str] = []

    def start(i: int) -> None:
        with Session(get_engine(db_url), expire_on_commit=False) as s:
            barrier.wait()
            try:
                if entry == "reserve":
                    ledger.reserve(s, s.get(Run, ops[i].id), MICRO)
                    s.commit()
                else:
                    lc.create_operation(s, user.id, "ask", f"Ask: {i}", MICRO, "offline")
                results.append("ok")
            except InsufficientCredits:
                s.rollback()
                results.append("refused")

    threads = [threading.Thread(target=start, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results) == ["ok"] * 5 + ["refused"] * 7
    assert count(dbs, LedgerEntry, LedgerEntry.entry_type == "reserve") == 5
    assert ledger.held(dbs, user) == 5 * MICRO
    assert ledger.available(dbs, user) == 0
