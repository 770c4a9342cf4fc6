"""Reconciliation: proof that the ledger and the usage events agree, run by run."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlmodel import Session, col, func, select

from bayes_app.models import EntryType, LedgerEntry, Run, RunStatus, UsageEvent, utcnow


@dataclass(frozen=True)
class SpendMismatch:
    """A run whose spend rows disagree with its usage: a finalized run must have exactly
    one spend row equal to −Σ usage cost (and charged_credits = Σ usage cost); a run not
    finalized must have none."""

    operation_id: str
    status: str
    usage_cost: int
    spent: int  # −Σ spend amounts (positive = charged)
    spend_rows: int
    charged: int | None


@dataclass(frozen=True)
class HeldReserve:
    operation_id: str
    held: int


@dataclass
class Reconciliation:
    runs_checked: int = 0
    spend_mismatches: list[SpendMismatch] = field(default_factory=list)
    held_after_finalize: list[HeldReserve] = field(default_factory=list)
    stale_runs: list[str] = field(default_factory=list)  # not terminal, older than the limit

    @property
    def ok(self) -> bool:
        return not (self.spend_mismatches or self.held_after_finalize or self.stale_runs)


def reconcile(db: Session, stale_after_s: float, now: datetime | None = None) -> Reconciliation:
    """Check every run; `stale_after_s` is typically the reaper interval plus its grace.

    One SELECT, so the figures come from one snapshot even while runs are being settled.
    """
    cutoff = (now or utcnow()) - timedelta(seconds=stale_after_s)
    usage = (
        select(col(UsageEvent.operation_id).label("oid"), func.sum(UsageEvent.cost_credits).label("cost"))
        .group_by(UsageEvent.operation_id)
        .subquery()
    )
    is_spend = col(LedgerEntry.entry_type) == EntryType.SPEND
    money = (
        select(
            col(LedgerEntry.operation_id).label("oid"),
            func.sum(LedgerEntry.amount).filter(is_spend).label("spend"),
            func.count().filter(is_spend).label("spend_rows"),
            func.sum(LedgerEntry.amount).filter(col(LedgerEntry.entry_type).in_(EntryType.HOLD)).label("held"),
        )
        .where(col(LedgerEntry.operation_id).is_not(None))
        .group_by(LedgerEntry.operation_id)
        .subquery()
    )
    rows = db.exec(
        select(  # type: ignore[call-overload]  # sqlmodel types select() up to 4 columns
            Run.id,
            Run.status,
            Run.finalized_at,
            Run.charged_credits,
            Run.created_at,
            func.coalesce(usage.c.cost, 0),
            func.coalesce(money.c.spend, 0),
            func.coalesce(money.c.spend_rows, 0),
            func.coalesce(money.c.held, 0),
        )
        .outerjoin(usage, usage.c.oid == Run.id)
        .outerjoin(money, money.c.oid == Run.id)
    ).all()

    report = Reconciliation()
    for op_id, status, finalized_at, charged, created_at, cost, spend, spend_rows, held in rows:
        report.runs_checked += 1
        cost, spent, spend_rows, held = int(cost), -int(spend), int(spend_rows), int(held)
        if finalized_at is not None:
            bad = spend_rows != 1 or spent != cost or charged != cost
            if held != 0:
                report.held_after_finalize.append(HeldReserve(op_id, held))
        else:
            bad = spend_rows != 0
            if status not in RunStatus.OUTCOMES and created_at < cutoff:
                report.stale_runs.append(op_id)
        if bad:
            report.spend_mismatches.append(SpendMismatch(op_id, status, cost, spent, spend_rows, charged))
    return report
