"""The operation (run) lifecycle: create, run, cancel, stop, finalize, reap.

    QUEUED --mark_running--> RUNNING --mark_stopped--> STOPPED --finalize--> outcome
    QUEUED + cancel requested, never started  --finalize--> STOPPED, CANCELLED
    RUNNING + lease gone (worker died)        --finalize--> STOPPED, FAILED worker_lost

STOPPED means the work has ended and its outcome is known; the terminal status is written
only by `finalize`, together with the run's one spend row and one release row.

Each function here is one transaction and commits it (rolls back on error), so call it
with a session that has no pending changes of its own. Nothing here touches Redis: the
caller passes `lease_alive` callables and appends `terminal_event` to the run's stream.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import and_, or_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from bayes_app import faults
from bayes_app.credits import ledger, pricing
from bayes_app.db import atomic
from bayes_app.models import (
    EntryType,
    LedgerEntry,
    Run,
    RunStatus,
    UsageEvent,
    User,
    new_id,
    utcnow,
)

FinalizeResult = Literal["finalized", "noop", "wait"]
WORKER_LOST = "worker_lost"
USER_CANCEL = "user_cancel"
RESOURCE_DELETED = "resource_deleted"


class LifecycleError(Exception):
    """A lifecycle step that cannot apply to the operation in its current state."""


class OperationNotFound(LifecycleError, LookupError):
    def __init__(self, op_id: str):
        super().__init__(f"operation {op_id} not found")
        self.op_id = op_id


class CannotStart(LifecycleError):
    """mark_running refused: `reason` is cancel_requested, stopped or finalized."""

    def __init__(self, op_id: str, reason: str):
        super().__init__(f"operation {op_id} cannot start: {reason}")
        self.op_id = op_id
        self.reason = reason


class RunFinalized(LifecycleError):
    """The run is already settled: usage arriving now can no longer be charged."""

    def __init__(self, op_id: str):
        super().__init__(f"operation {op_id} is already finalized")
        self.op_id = op_id


def finalize_lock_key(op_id: str) -> str:
    return f"finalize:{op_id}"


def _load(db: Session, op_id: str) -> Run:
    op = db.get(Run, op_id, populate_existing=True)
    if op is None:
        raise OperationNotFound(op_id)
    return op


def _update(db: Session, op_id: str, *where: Any, **values: Any) -> bool:
    """A conditional UPDATE of one operation; True when it applied."""
    stmt = (
        update(Run).where(col(Run.id) == op_id, *where).values(**values).execution_options(synchronize_session="fetch")
    )
    return db.exec(stmt).rowcount == 1


# ---- start ---------------------------------------------------------------------------------
def create_operation(
    db: Session,
    owner: User | str,
    kind: str,
    title: str,
    estimate: int,
    model: str,
    input: dict[str, Any] | None = None,
    resource: tuple[str, str] | None = None,
    op_id: str | None = None,
) -> Run:
    """Create a QUEUED operation and reserve `estimate` micro-credits, in one transaction.

    Raises PriceMissing or InsufficientCredits before anything is written.
    """
    owner_id = owner if isinstance(owner, str) else owner.id
    if estimate < 0:
        raise ValueError("estimate must be >= 0 micro-credits")
    with atomic(db):
        pricing.get_price(db, model)
        ledger.ensure_available(db, owner_id, estimate)
        op = Run(
            id=op_id or new_id(),
            owner_id=owner_id,
            kind=kind,
            title=title if len(title) <= 500 else title[:499] + "…",
            model=model,
            input=input or {},
            resource_type=resource[0] if resource else None,
            resource_id=resource[1] if resource else None,
        )
        db.add(op)
        db.flush()
        ledger.reserve(db, op, estimate)
    return op


def mark_running(db: Session, op_id: str) -> int:
    """QUEUED/RUNNING → RUNNING with attempt + 1; returns the new attempt (fencing token).

    The caller must hold the run's lease. Refused (CannotStart) once a cancel was requested
    or the run stopped; a RUNNING run whose previous worker lost its lease may be taken over.
    """
    with atomic(db):
        ok = _update(
            db,
            op_id,
            col(Run.status).in_(RunStatus.ACTIVE),
            col(Run.cancel_requested_at).is_(None),
            status=RunStatus.RUNNING,
            attempt=col(Run.attempt) + 1,
            started_at=func.coalesce(col(Run.started_at), utcnow()),
        )
        op = _load(db, op_id)
        if not ok:
            reason = (
                "finalized"
                if op.finalized_at
                else "stopped"
                if op.status not in RunStatus.ACTIVE
                else "cancel_requested"
            )
            raise CannotStart(op_id, reason)
        return op.attempt


# ---- while running -------------------------------------------------------------------------
def record_usage(
    db: Session,
    op_id: str,
    attempt: int,
    seq: int,
    step: str,
    model: str,
    input_tokens: int = 0,
    cached_tokens: int = 0,
    output_tokens: int = 0,
    estimated: bool = False,
    *,
    replace_estimate: bool = False,
) -> UsageEvent:
    """Record one response's tokens, priced now. Idempotent on (op, attempt, seq).

    A repeat returns the first row unchanged, unless `replace_estimate`: then an
    *estimated* row is replaced by the provider's real usage, or by a newer estimate with
    at least as many output tokens (a running estimate persisted while streaming); a real
    row is never changed. The result does not depend on the order of the writes.
    Raises RunFinalized once the run is settled (its spend is fixed) and PriceMissing
    when `model` has no price.
    """
    with atomic(db):
        # Shared with other recorders, exclusive against finalize: usage can never slip
        # in between finalize's sum and its commit.
        ledger.write_lock(db, finalize_lock_key(op_id), shared=True)
        op = _load(db, op_id)
        if op.finalized_at is not None:
            raise RunFinalized(op_id)
        cost = pricing.cost_micro(pricing.get_price(db, model), input_tokens, cached_tokens, output_tokens)
        values = {
            "id": new_id(),
            "operation_id": op_id,
            "attempt": attempt,
            "seq": seq,
            "step": step,
            "model": model,
            "input_tokens": input_tokens,
            "cached_tokens": cached_tokens,
            "output_tokens": output_tokens,
            "cost_credits": cost,
            "estimated": estimated,
            "created_at": utcnow(),
        }
        if replace_estimate:
            _upsert_over_estimate(db, values)
        else:
            ledger.insert_ignore(db, UsageEvent, values, ["operation_id", "attempt", "seq"])
        return db.exec(
            select(UsageEvent).where(
                UsageEvent.operation_id == op_id, UsageEvent.attempt == attempt, UsageEvent.seq == seq
            )
        ).one()


def _upsert_over_estimate(db: Session, values: dict[str, Any]) -> None:
    """INSERT … ON CONFLICT (op, attempt, seq) DO UPDATE, only over an estimated row and
    only with real usage or a larger estimate."""
    table = UsageEvent.__table__  # type: ignore[attr-defined]
    dialect = db.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(table).values(**values)
    new = stmt.excluded
    replaced = ("step", "model", "input_tokens", "cached_tokens", "output_tokens", "cost_credits", "estimated")
    stmt = stmt.on_conflict_do_update(
        index_elements=["operation_id", "attempt", "seq"],
        set_={c: new[c] for c in replaced},
        where=and_(
            table.c.estimated.is_(True), or_(new.estimated.is_(False), new.output_tokens >= table.c.output_tokens)
        ),
    )
    db.exec(stmt)


def request_cancel(db: Session, op_id: str, reason: str = USER_CANCEL) -> bool:
    """Record a cancel request (first one wins; idempotent). True when the run had
    already stopped or finished, so the request changes nothing.

    The caller then sets the abort flag, publishes it and enqueues the finalizer.
    """
    with atomic(db):
        _update(
            db,
            op_id,
            col(Run.status).in_(RunStatus.ACTIVE),
            col(Run.cancel_requested_at).is_(None),
            cancel_requested_at=utcnow(),
            cancel_reason=reason[:200],
        )
        op = _load(db, op_id)
        return op.status not in RunStatus.ACTIVE


def mark_stopped(db: Session, op_id: str, attempt: int, outcome: str, reason: str | None = None) -> bool:
    """RUNNING → STOPPED with its outcome, only for the current attempt (fencing).

    False when `attempt` is stale or the run is no longer RUNNING (e.g. a finalizer already
    declared the worker lost): the caller must then write nothing more for this run.
    A CANCELLED outcome without a reason takes the cancel request's reason.
    """
    if outcome not in RunStatus.OUTCOMES:
        raise ValueError(f"outcome must be one of {RunStatus.OUTCOMES}")
    why: Any = reason
    if reason is None and outcome == RunStatus.CANCELLED:
        why = func.coalesce(col(Run.cancel_reason), USER_CANCEL)
    with atomic(db):
        return _update(
            db,
            op_id,
            col(Run.status) == RunStatus.RUNNING,
            col(Run.attempt) == attempt,
            status=RunStatus.STOPPED,
            outcome=outcome,
            outcome_reason=why,
            stopped_at=utcnow(),
        )


# ---- finalize ------------------------------------------------------------------------------
def _sessions(source: Engine | Callable[[], Session]) -> Callable[[], Session]:
    if isinstance(source, Engine):
        return lambda: Session(source, expire_on_commit=False)
    return source


def _stop_if_abandoned(db: Session, op: Run, lease_alive: Callable[[], bool]) -> bool | None:
    """Bring an active run to STOPPED if nothing is working on it any more.

    None = a worker may still be on it (wait); otherwise whether this call stopped it
    (False = the row changed under us; read it again).
    """
    if lease_alive():
        return None
    now = utcnow()
    if op.status == RunStatus.QUEUED:
        if op.cancel_requested_at is None:
            return None  # still waiting for a worker
        return _update(
            db,
            op.id,
            col(Run.status) == RunStatus.QUEUED,
            status=RunStatus.STOPPED,
            outcome=RunStatus.CANCELLED,
            outcome_reason=op.cancel_reason or USER_CANCEL,
            stopped_at=now,
        )
    # RUNNING with no live lease: the worker died. The attempt guard loses to a new
    # worker that has just taken the run over.
    return _update(
        db,
        op.id,
        col(Run.status) == RunStatus.RUNNING,
        col(Run.attempt) == op.attempt,
        status=RunStatus.STOPPED,
        outcome=RunStatus.FAILED,
        outcome_reason=WORKER_LOST,
        stopped_at=now,
    )


def _write_terminal(db: Session, op: Run, charged: int) -> None:
    op.status = op.outcome or RunStatus.FAILED
    op.charged_credits = charged
    op.finalized_at = utcnow()
    db.add(op)
    db.flush()


def _settle(db: Session, op_id: str, owner_id: str) -> FinalizeResult:
    ledger.write_lock(db, finalize_lock_key(op_id))
    ledger.write_lock(db, ledger.credit_lock_key(owner_id))  # spend/release change available
    op = _load(db, op_id)
    if op.finalized_at is not None:
        return "noop"
    if op.status != RunStatus.STOPPED:
        return "wait"
    spent = int(
        db.exec(
            select(func.coalesce(func.sum(UsageEvent.cost_credits), 0)).where(UsageEvent.operation_id == op_id)
        ).one()
    )
    ledger.insert_entry(db, owner_id, EntryType.SPEND, -spent, f"spend:{op_id}", operation_id=op_id)
    still_held = int(
        db.exec(
            select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
                LedgerEntry.operation_id == op_id, col(LedgerEntry.entry_type).in_(EntryType.HOLD)
            )
        ).one()
    )
    ledger.insert_entry(db, owner_id, EntryType.RELEASE, -still_held, f"release:{op_id}", operation_id=op_id)
    faults.db_fault(db, "finalize_settle")  # chaos tests only (BAYES_FAULTS)
    _write_terminal(db, op, spent)
    return "finalized"


def finalize(sessions: Engine | Callable[[], Session], op_id: str, lease_alive: Callable[[], bool]) -> FinalizeResult:
    """Settle a run exactly once; safe to call any number of times, concurrently.

    "wait": a worker may still be on the run (live lease, or queued and not cancelled);
    retry later. "noop": already finalized. "finalized": this call wrote the spend row
    (Σ usage cost), released the whole reserve and wrote the terminal status; the caller
    then appends `terminal_event(op)` to the run's stream.
    """
    make = _sessions(sessions)
    # Each session is owned here: leaving its `with` on an error closes it, which rolls back.
    with make() as db:
        for _ in range(5):
            op = _load(db, op_id)
            if op.finalized_at is not None:
                return "noop"
            if op.status not in RunStatus.ACTIVE:
                break
            stopped = _stop_if_abandoned(db, op, lease_alive)
            if stopped is None:
                db.rollback()
                return "wait"
            db.commit()
        else:
            return "wait"
        owner_id = op.owner_id
    with make() as db:
        result = _settle(db, op_id, owner_id)
        db.commit()
        return result


def terminal_event(op: Run) -> dict[str, Any]:
    """The last event of a run's stream, appended by the caller after finalize commits."""
    return {
        "type": "done",
        "data": {
            "id": op.id,
            "status": op.status,
            "outcome_reason": op.outcome_reason,
            "charged_credits": op.charged_credits,
            "finalized_at": op.finalized_at.isoformat() if op.finalized_at else None,
        },
    }


# ---- reaper / reads ------------------------------------------------------------------------
def reap_candidates(db: Session, now: datetime, lease_alive: Callable[[str], bool], grace_s: float = 0.0) -> list[str]:
    """Ids the reaper should hand to the finalizer: RUNNING runs without a live lease,
    STOPPED runs not finalized, and queued runs whose cancel was requested.

    Only runs that started / were cancelled at least `grace_s` before `now`.
    """
    cutoff = now - timedelta(seconds=grace_s)
    running = db.exec(select(Run.id).where(Run.status == RunStatus.RUNNING, col(Run.started_at) <= cutoff)).all()
    stopped = db.exec(select(Run.id).where(Run.status == RunStatus.STOPPED, col(Run.finalized_at).is_(None))).all()
    cancelled = db.exec(
        select(Run.id).where(Run.status == RunStatus.QUEUED, col(Run.cancel_requested_at) <= cutoff)
    ).all()
    return [i for i in running if not lease_alive(i)] + list(stopped) + list(cancelled)


def running_ids(db: Session) -> list[str]:
    """Ids of the RUNNING runs (the reaper follows their leases after a worker's boot)."""
    return list(db.exec(select(Run.id).where(Run.status == RunStatus.RUNNING)).all())


def usage_totals(db: Session, op_id: str) -> dict[str, Any]:
    """Token and cost totals of a run (for the run status API)."""
    row = db.exec(
        select(  # type: ignore[call-overload]  # sqlmodel types select() up to 4 columns
            func.count(),
            func.coalesce(func.sum(UsageEvent.input_tokens), 0),
            func.coalesce(func.sum(UsageEvent.cached_tokens), 0),
            func.coalesce(func.sum(UsageEvent.output_tokens), 0),
            func.coalesce(func.sum(UsageEvent.cost_credits), 0),
            func.count().filter(col(UsageEvent.estimated).is_(True)),
        ).where(UsageEvent.operation_id == op_id)
    ).one()
    events, inp, cached, out, cost, estimated = (int(v or 0) for v in row)
    return {
        "events": events,
        "input_tokens": inp,
        "cached_tokens": cached,
        "output_tokens": out,
        "cost_credits": cost,
        "estimated_events": estimated,
    }
