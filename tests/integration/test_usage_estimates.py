"""The running usage estimate on real SQLite and PostgreSQL: one row per (run, attempt,
seq), replaced by larger estimates and by the provider's usage, never the other way."""

from __future__ import annotations

import itertools

from sqlmodel import select

from bayes_app.credits.reconcile import reconcile
from bayes_app.db import get_engine
from bayes_app.models import MICRO, UsageEvent
from bayes_app.runs import lifecycle as lc
from tests.integration.test_credits_db import make_user


def _rows(db, op_id):
    return [
        (u.input_tokens, u.output_tokens, u.estimated, u.cost_credits)
        for u in db.exec(
            select(UsageEvent).where(UsageEvent.operation_id == op_id).execution_options(populate_existing=True)
        ).all()
    ]


def test_running_estimate_is_replaced_only_upwards_or_by_real_usage(dbs, db_url):
    user = make_user(dbs, credits=5)
    op = lc.create_operation(dbs, user, "ask", "Ask: q", MICRO, "offline")
    attempt = lc.mark_running(dbs, op.id)

    def rec(out: int, estimated: bool, inp: int = 100):
        return lc.record_usage(
            dbs, op.id, attempt, 1, "answer", "offline", inp, 0, out, estimated, replace_estimate=True
        )

    first = rec(10, True)
    assert _rows(dbs, op.id) == [(100, 10, True, first.cost_credits)]
    rec(30, True)
    assert [r[:3] for r in _rows(dbs, op.id)] == [(100, 30, True)]
    rec(20, True)  # a late, older checkpoint changes nothing
    assert [r[:3] for r in _rows(dbs, op.id)] == [(100, 30, True)]
    real = rec(25, False, inp=90)  # the provider's usage wins, even when smaller
    assert _rows(dbs, op.id) == [(90, 25, False, real.cost_credits)]
    rec(500, True)  # nothing replaces real usage
    rec(7, False)
    assert _rows(dbs, op.id) == [(90, 25, False, real.cost_credits)]
    # without replace_estimate the first row stays (the old contract)
    lc.record_usage(dbs, op.id, attempt, 2, "answer", "offline", 1, 0, 1, True)
    lc.record_usage(dbs, op.id, attempt, 2, "answer", "offline", 5, 0, 50, False)
    assert (1, 1, True) in [r[:3] for r in _rows(dbs, op.id)]

    assert lc.finalize(get_engine(db_url), op.id, lambda: False) == "finalized"
    assert lc.finalize(get_engine(db_url), op.id, lambda: False) == "noop"
    assert reconcile(dbs, stale_after_s=60).ok


def test_any_order_of_writes_gives_the_same_row(dbs):
    user = make_user(dbs, credits=5)
    writes = [(10, True), (40, True), (25, True), (33, False)]
    results = set()
    for order in itertools.permutations(writes):
        op = lc.create_operation(dbs, user, "ask", "Ask: q", 0, "offline")
        attempt = lc.mark_running(dbs, op.id)
        for out, est in order:
            lc.record_usage(dbs, op.id, attempt, 1, "answer", "offline", 100, 0, out, est, replace_estimate=True)
        results.add(tuple(_rows(dbs, op.id)))
    assert len(results) == 1
    assert next(iter(results))[0][:3] == (100, 33, False)
