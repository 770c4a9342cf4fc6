"""Run lifecycle and finalize against real SQLite and PostgreSQL (each test runs on both):
fencing, leases, concurrent finalizers in separate processes, injected failures, and
reconciliation after a randomized batch."""

from __future__ import annotations

import multiprocessing as mp
import random
from datetime import timedelta

import pytest
from sqlmodel import Session, func, select

from bayes_app.credits import ledger
from bayes_app.credits.reconcile import reconcile
from bayes_app.db import get_engine
from bayes_app.models import MICRO, LedgerEntry, Run, RunStatus, UsageEvent, new_id, utcnow
from bayes_app.runs import lifecycle as lc
from tests.integration.test_credits_db import count, make_user

DEAD = lambda: False  # noqa: E731  (no lease: the worker is gone)
ALIVE = lambda: True  # noqa: E731


def started(db: Session, user, usage: int = 3, estimate: int = MICRO) -> tuple[str, int, int]:
    """A RUNNING op with `usage` usage events; returns (id, attempt, Σ cost)."""
    op = lc.create_operation(db, user, "ask", "Ask: q", estimate, "offline")
    attempt = lc.mark_running(db, op.id)
    cost = sum(
        lc.record_usage(db, op.id, attempt, i, "agent", "offline", 100, 20, 10).cost_credits for i in range(usage)
    )
    return op.id, attempt, cost


def op_rows(db: Session, op_id: str) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = {}
    for e in db.exec(select(LedgerEntry).where(LedgerEntry.operation_id == op_id)).all():
        rows.setdefault(e.entry_type, []).append(e.amount)
    return rows


def fresh(db: Session, op_id: str) -> Run:
    return db.get(Run, op_id, populate_existing=True)


def test_fencing_stale_attempt_cannot_stop(dbs):
    user = make_user(dbs, credits=5)
    op_id, first, _ = started(dbs, user)
    second = lc.mark_running(dbs, op_id)  # a new worker took the run over
    assert (first, second) == (1, 2)
    assert lc.mark_stopped(dbs, op_id, first, "SUCCEEDED") is False
    assert fresh(dbs, op_id).status == "RUNNING"
    assert lc.mark_stopped(dbs, op_id, second, "FAILED", "provider_error: 500") is True
    op = fresh(dbs, op_id)
    assert (op.status, op.outcome, op.outcome_reason) == ("STOPPED", "FAILED", "provider_error: 500")
    assert lc.mark_stopped(dbs, op_id, second, "SUCCEEDED") is False  # already stopped
    with pytest.raises(lc.CannotStart) as err:
        lc.mark_running(dbs, op_id)
    assert err.value.reason == "stopped"


def test_cancel_while_queued_and_after_finish(dbs, db_url):
    user = make_user(dbs, credits=5)
    op = lc.create_operation(dbs, user, "build_map", "Mindmap: M", MICRO, "offline", resource=("mindmap", "m1"))
    assert lc.request_cancel(dbs, op.id, "resource_deleted") is False
    assert lc.request_cancel(dbs, op.id) is False  # idempotent: the first reason stays
    with pytest.raises(lc.CannotStart) as err:
        lc.mark_running(dbs, op.id)
    assert err.value.reason == "cancel_requested"
    assert lc.finalize(get_engine(db_url), op.id, DEAD) == "finalized"
    op = fresh(dbs, op.id)
    assert (op.status, op.outcome_reason, op.charged_credits) == ("CANCELLED", "resource_deleted", 0)
    assert op_rows(dbs, op.id) == {"reserve": [MICRO], "spend": [0], "release": [-MICRO]}
    assert lc.request_cancel(dbs, op.id) is True  # already finished
    assert ledger.held(dbs, user) == 0
    assert ledger.balance(dbs, user) == 5 * MICRO
    with pytest.raises(lc.OperationNotFound):
        lc.request_cancel(dbs, "nope")


def test_cancel_while_running_is_charged_for_usage(dbs, db_url):
    user = make_user(dbs, credits=5)
    op_id, attempt, cost = started(dbs, user)
    assert lc.request_cancel(dbs, op_id) is False
    assert lc.finalize(get_engine(db_url), op_id, ALIVE) == "wait"  # worker still stopping
    assert lc.mark_stopped(dbs, op_id, attempt, "CANCELLED")
    assert lc.finalize(get_engine(db_url), op_id, DEAD) == "finalized"
    op = fresh(dbs, op_id)
    assert (op.status, op.outcome_reason, op.charged_credits) == ("CANCELLED", "user_cancel", cost)
    assert lc.terminal_event(op) == {
        "type": "done",
        "data": {
            "id": op_id,
            "status": "CANCELLED",
            "outcome_reason": "user_cancel",
            "charged_credits": cost,
            "finalized_at": op.finalized_at.isoformat(),
        },
    }


def test_finalize_waits_while_the_lease_is_alive(dbs, db_url):
    user = make_user(dbs, credits=5)
    op_id, _, _ = started(dbs, user)
    assert lc.finalize(get_engine(db_url), op_id, ALIVE) == "wait"
    queued = lc.create_operation(dbs, user, "ask", "Ask: later", MICRO, "offline")
    assert lc.finalize(get_engine(db_url), queued.id, DEAD) == "wait"  # not started, not cancelled
    assert fresh(dbs, op_id).status == "RUNNING"
    assert fresh(dbs, queued.id).status == "QUEUED"
    assert count(dbs, LedgerEntry, LedgerEntry.entry_type == "spend") == 0


def test_dead_lease_means_worker_lost(dbs, db_url):
    user = make_user(dbs, credits=5)
    op_id, attempt, cost = started(dbs, user, usage=4)
    assert lc.finalize(get_engine(db_url), op_id, DEAD) == "finalized"
    op = fresh(dbs, op_id)
    assert (op.status, op.outcome, op.outcome_reason) == ("FAILED", "FAILED", "worker_lost")
    assert op.charged_credits == cost
    assert op.finalized_at is not None
    assert op_rows(dbs, op_id) == {"reserve": [MICRO], "spend": [-cost], "release": [-MICRO]}
    assert lc.finalize(get_engine(db_url), op_id, DEAD) == "noop"
    # the lost worker wakes up: it can neither stop the run nor add usage
    assert lc.mark_stopped(dbs, op_id, attempt, "SUCCEEDED") is False
    with pytest.raises(lc.RunFinalized):
        lc.record_usage(dbs, op_id, attempt, 99, "agent", "offline", 10, 0, 10)
    assert reconcile(dbs, stale_after_s=60).ok


_barrier = None


def _init_child(barrier) -> None:
    global _barrier
    _barrier = barrier


def _finalize_in_child(url: str, op_id: str) -> str:
    from bayes_app.db import make_engine

    engine = make_engine(url)
    try:
        # Each worker blocks here until all 8 tasks are taken, so every task runs in its
        # own process and all start together.
        _barrier.wait(timeout=60)
        return lc.finalize(engine, op_id, lambda: False)
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def finalizer_pool():
    """8 spawned processes, started once for both backends (spawning is the slow part)."""
    ctx = mp.get_context("spawn")
    with ctx.Pool(8, initializer=_init_child, initargs=(ctx.Barrier(8),)) as pool:
        yield pool


def test_eight_concurrent_finalizer_processes_settle_once(dbs, db_url, finalizer_pool):
    user = make_user(dbs, credits=5)
    op_id, _, cost = started(dbs, user, usage=10)  # RUNNING, lease dead: all 8 race from the top
    outcomes = finalizer_pool.starmap(_finalize_in_child, [(db_url, op_id)] * 8, chunksize=1)
    assert sorted(outcomes) == ["finalized"] + ["noop"] * 7
    assert op_rows(dbs, op_id) == {"reserve": [MICRO], "spend": [-cost], "release": [-MICRO]}
    op = fresh(dbs, op_id)
    assert (op.status, op.outcome_reason, op.charged_credits) == ("FAILED", "worker_lost", cost)


def test_failed_finalize_then_retry_settles_once(dbs, db_url, monkeypatch):
    user = make_user(dbs, credits=5)
    op_id, attempt, cost = started(dbs, user)
    lc.mark_stopped(dbs, op_id, attempt, "SUCCEEDED")
    real = lc._write_terminal
    seen: list[dict] = []

    def crash_before_commit(db, op, _charged):
        seen.append(op_rows(db, op.id))  # the spend and release rows are written …
        raise RuntimeError("injected: database connection lost")  # … and never committed

    monkeypatch.setattr(lc, "_write_terminal", crash_before_commit)
    with pytest.raises(RuntimeError, match="injected"):
        lc.finalize(get_engine(db_url), op_id, DEAD)
    assert seen == [{"reserve": [MICRO], "spend": [-cost], "release": [-MICRO]}]
    assert op_rows(dbs, op_id) == {"reserve": [MICRO]}
    assert fresh(dbs, op_id).status == "STOPPED"

    monkeypatch.setattr(lc, "_write_terminal", real)
    assert lc.finalize(get_engine(db_url), op_id, DEAD) == "finalized"
    assert lc.finalize(get_engine(db_url), op_id, DEAD) == "noop"
    assert op_rows(dbs, op_id) == {"reserve": [MICRO], "spend": [-cost], "release": [-MICRO]}
    assert fresh(dbs, op_id).status == "SUCCEEDED"


def test_reap_candidates(dbs):
    user = make_user(dbs, credits=10)
    lost, _, _ = started(dbs, user)
    alive, _, _ = started(dbs, user)
    stopped, attempt, _ = started(dbs, user)
    lc.mark_stopped(dbs, stopped, attempt, "SUCCEEDED")
    cancelled = lc.create_operation(dbs, user, "ask", "Ask: c", MICRO, "offline").id
    lc.request_cancel(dbs, cancelled)
    lc.create_operation(dbs, user, "ask", "Ask: waiting", MICRO, "offline")
    found = lc.reap_candidates(dbs, utcnow(), lambda op_id: op_id == alive)
    assert sorted(found) == sorted([lost, stopped, cancelled])
    assert lc.reap_candidates(dbs, utcnow(), lambda _op_id: False, grace_s=3600) == [stopped]
    assert sorted(lc.running_ids(dbs)) == sorted([lost, alive])  # whose leases a booting reaper follows


def test_reconciliation_after_randomized_batch(dbs, db_url):
    rng = random.Random(4)
    engine = get_engine(db_url)
    users = [make_user(dbs, credits=100) for _ in range(3)]
    scenarios = [
        "success",
        "cancel_running",
        "cancel_queued",
        "failure",
        "worker_lost",
        "resource_deleted",
        "stale_retry",
    ]
    ops: list[str] = []
    for i in range(60):
        user = rng.choice(users)
        kind = scenarios[i % len(scenarios)]
        op = lc.create_operation(
            dbs, user, "ask", f"Ask: {i}", rng.randint(0, 2) * MICRO, "offline", resource=("mindmap", f"m{i}")
        )
        ops.append(op.id)
        _play(dbs, rng, op.id, kind)
    for op_id in rng.sample(ops, len(ops)) + rng.sample(ops, 10):  # some finalized twice
        assert lc.finalize(engine, op_id, DEAD) in ("finalized", "noop")

    statuses = [fresh(dbs, op_id).status for op_id in ops]
    assert set(statuses) <= set(RunStatus.OUTCOMES)
    assert {"SUCCEEDED", "CANCELLED", "FAILED"} <= set(statuses)
    assert statuses.count("FAILED") >= 16  # failure + worker_lost
    report = reconcile(dbs, stale_after_s=60)
    assert report.ok, report
    assert report.runs_checked == 60, report
    total_usage = dbs.exec(select(func.sum(UsageEvent.cost_credits))).one()
    assert sum(ledger.balance(dbs, u) for u in users) == 300 * MICRO - total_usage
    assert all(ledger.held(dbs, u) == 0 for u in users)
    assert len(ledger.history(dbs, users[0])) == 1 + sum(fresh(dbs, o).owner_id == users[0].id for o in ops)

    _assert_injected_found(dbs, ops)


def _play(dbs, rng: random.Random, op_id: str, kind: str) -> None:
    """One run through its scenario: usage recorded (some events redelivered), then stopped as the scenario says."""
    if kind == "cancel_queued":
        lc.request_cancel(dbs, op_id)
        return
    attempt = lc.mark_running(dbs, op_id)
    for seq in range(rng.randint(0, 6)):
        lc.record_usage(
            dbs,
            op_id,
            attempt,
            seq,
            rng.choice(["agent", "phase1_thinking"]),
            "offline",
            rng.randint(0, 5000),
            rng.randint(0, 100),
            rng.randint(0, 800),
            estimated=rng.random() < 0.2,
        )
        if rng.random() < 0.3:  # redelivered event
            lc.record_usage(dbs, op_id, attempt, seq, "agent", "offline", 1, 0, 1)
    if kind == "success":
        lc.mark_stopped(dbs, op_id, attempt, "SUCCEEDED")
    elif kind in ("cancel_running", "resource_deleted"):
        reason = "resource_deleted" if kind == "resource_deleted" else "user_cancel"
        lc.request_cancel(dbs, op_id, reason)
        lc.mark_stopped(dbs, op_id, attempt, "CANCELLED")
    elif kind == "failure":
        lc.mark_stopped(dbs, op_id, attempt, "FAILED", "provider_error: 502 Bad Gateway")
    elif kind == "stale_retry":  # a takeover: the first worker's stop is fenced out
        newer = lc.mark_running(dbs, op_id)
        lc.record_usage(dbs, op_id, newer, 0, "agent", "offline", 10, 0, 10)
        assert not lc.mark_stopped(dbs, op_id, attempt, "FAILED", "stale")
        lc.mark_stopped(dbs, op_id, newer, "SUCCEEDED")
    # worker_lost: left RUNNING, its lease is gone


def _assert_injected_found(dbs, ops: list[str]) -> None:
    """Injected inconsistencies are found: a second spend row, a reserve after finalizing, a lost message."""
    victim, held_victim = ops[0], ops[1]
    owner = fresh(dbs, victim).owner_id
    ledger.insert_entry(dbs, owner, "spend", -123, f"manual:{new_id()}", operation_id=victim)
    ledger.insert_entry(
        dbs, fresh(dbs, held_victim).owner_id, "reserve", 7, f"manual:{new_id()}", operation_id=held_victim
    )
    stale = lc.create_operation(dbs, owner, "ask", "Ask: lost message", 0, "offline")
    dbs.commit()
    report = reconcile(dbs, stale_after_s=60, now=utcnow() + timedelta(seconds=61))
    assert not report.ok
    assert [(m.operation_id, m.spend_rows) for m in report.spend_mismatches] == [(victim, 2)]
    assert [(h.operation_id, h.held) for h in report.held_after_finalize] == [(held_victim, 7)]
    assert report.stale_runs == [stale.id]
    assert reconcile(dbs, stale_after_s=60).stale_runs == []  # young: not stale yet
