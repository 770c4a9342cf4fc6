"""Credit use cases: a user's balance and history; for admins grants, prices, reconciliation
and the dashboard's reports (balances, open reserves, spend, recent runs, one run's usage).

Amounts are integer micro-credits; the front doors format them."""

from __future__ import annotations

import math
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any, cast

from sqlmodel import col, func, select

from bayes_app.credits import ledger, pricing
from bayes_app.credits.reconcile import reconcile
from bayes_app.db import session_scope
from bayes_app.errors import DomainError, NotFound
from bayes_app.models import MICRO, EntryType, LedgerEntry, Run, RunStatus, UsageEvent, User, utcnow
from bayes_app.usecases.schemas.accounts import UserOut
from bayes_app.usecases.schemas.credits import (
    Dashboard,
    HeldReserve,
    MyCredits,
    OpenReserve,
    Price,
    Reconciliation,
    RunDetail,
    RunRow,
    SpendMismatch,
    UsageRow,
)

PRICE_FIELDS = ("input_per_million", "cached_per_million", "output_per_million")


def stale_after_s() -> float:
    """A run with no live lease for this long is reported stale (the reaper's limit)."""
    from bayes_app.runs.control import LEASE_MS

    return 5 + LEASE_MS / 1000 + 30


# ---- the user's credits --------------------------------------------------------------------
TYPICAL_KINDS = ("ask", "build_map")  # what "a credit buys" is told in: a question, a map run
TYPICAL_SAMPLE = 50  # the newest succeeded runs of a kind the typical charge is taken from


def typical_charges() -> dict[str, int]:
    """The median charge (micro-credits) of a question ("ask") and of a map run ("build_map"):
    what the price table made the newest succeeded runs of that kind cost, across all accounts.
    A kind with no such run yet is left out."""
    out: dict[str, int] = {}
    with session_scope() as db:
        for kind in TYPICAL_KINDS:
            charged = sorted(
                cast(
                    Sequence[int],  # charged_credits > 0: not null
                    db.exec(
                        select(Run.charged_credits)
                        .where(Run.kind == kind, Run.status == RunStatus.SUCCEEDED, col(Run.charged_credits) > 0)
                        .order_by(col(Run.created_at).desc())
                        .limit(TYPICAL_SAMPLE)
                    ).all(),
                )
            )
            if charged:
                out[kind] = int(charged[len(charged) // 2])
    return out


def my_credits(user_id: str) -> MyCredits:
    """The user's balance, what runs hold, what is available and the history (one row per
    run or grant, newest first)."""
    with session_scope() as db:
        bal, held, history = ledger.balance(db, user_id), ledger.held(db, user_id), ledger.history(db, user_id)
    return MyCredits(balance=bal, held=held, available=bal - held, unit="micro-credits", history=history)


# ---- admin: grants and prices --------------------------------------------------------------
@dataclass(frozen=True)
class Granted:
    user_id: str
    email: str
    created: bool  # False: a grant with this key was already recorded
    balance: int
    available: int


def grant(amount: int, key: str, note: str, *, user_id: str | None = None, email: str | None = None) -> Granted:
    """Grant `amount` micro-credits to the user named by id or e-mail (idempotent per `key`)."""
    with session_scope() as db:
        user = None
        if user_id is not None:
            user = db.get(User, user_id)
        elif email is not None:
            user = db.exec(select(User).where(User.email == email.strip().lower())).first()
        if user is None:
            raise NotFound("user")
        created = ledger.grant(db, user, amount, key, note)
        db.commit()
        return Granted(user.id, user.email, created, ledger.balance(db, user.id), ledger.available(db, user.id))


def prices() -> list[Price]:
    """The price table."""
    with session_scope() as db:
        return [Price.model_validate(p) for p in pricing.list_prices(db)]


def price(model: str) -> Price:
    """One model's prices; NotFound when it has none."""
    with session_scope() as db:
        try:
            return Price.model_validate(pricing.get_price(db, model))
        except pricing.PriceMissing:
            raise NotFound("price") from None


def set_price(model: str, values: list[Any], updated_by: str) -> Price:
    """Set a model's three prices (micro-credits per million tokens)."""
    input_per_million, cached_per_million, output_per_million = values
    with session_scope() as db:
        try:
            p = pricing.set_price(
                db, model, input_per_million, cached_per_million, output_per_million, updated_by=updated_by
            )
        except ValueError as err:
            text = str(err)
            raise DomainError("bad_price", text[:1].upper() + text[1:] + ".") from None
        db.add(p)
        db.flush()
        return Price.model_validate(p)


def reconciliation() -> Reconciliation:
    """Every run's spend against its usage, reserves still held after settling, stale runs."""
    with session_scope() as db:
        r = reconcile(db, stale_after_s=stale_after_s())
    return Reconciliation(
        ok=r.ok,
        runs_checked=r.runs_checked,
        spend_mismatches=[SpendMismatch.model_validate(m, from_attributes=True) for m in r.spend_mismatches],
        held_after_finalize=[HeldReserve.model_validate(h, from_attributes=True) for h in r.held_after_finalize],
        stale_runs=r.stale_runs,
    )


# ---- admin: dashboard reports ---------------------------------------------------------------
def dashboard(
    spend_days: int = 30, recent: int = 30, *, runs_user: str | None = None, runs_status: str | None = None
) -> Dashboard:
    """The admin dashboard. Every user has a balance line (zero too: that is what an admin
    looks for); the runs are the newest `recent` by `runs_user` with `runs_status` (None: all)."""
    with session_scope() as db:
        users = list(db.exec(select(User).order_by(col(User.created_at))))
        held = func.sum(LedgerEntry.amount)
        rows = cast(
            Sequence[tuple[str, int | Decimal]],  # operation ids are not null: selected so
            db.exec(
                select(LedgerEntry.operation_id, held)
                .where(col(LedgerEntry.entry_type).in_(EntryType.HOLD), col(LedgerEntry.operation_id).is_not(None))
                .group_by(LedgerEntry.operation_id)
                .having(held != 0)
            ).all(),
        )
        ops = {op.id: op for op in db.exec(select(Run).where(col(Run.id).in_([r[0] for r in rows])))} if rows else {}
        spent = db.exec(
            select(LedgerEntry.created_at, LedgerEntry.amount, Run.kind)
            .join(Run, col(Run.id) == col(LedgerEntry.operation_id))
            .where(
                LedgerEntry.entry_type == EntryType.SPEND,
                col(LedgerEntry.created_at) >= utcnow() - timedelta(days=spend_days),
            )
        ).all()
        by_day: dict[str, int] = defaultdict(int)
        by_kind: dict[str, int] = defaultdict(int)
        for created, amount, kind in spent:
            by_day[created.strftime("%Y-%m-%d")] += -int(amount)
            by_kind[kind] += -int(amount)
        q = select(Run).order_by(col(Run.created_at).desc())
        if runs_user:
            q = q.where(Run.owner_id == runs_user)
        if runs_status:
            q = q.where(Run.status == runs_status)
        runs = list(db.exec(q.limit(recent + 1)))
        sums = ledger.summaries(db)
        return Dashboard(
            users=[UserOut.model_validate(u) for u in users],
            balances={u.id: sums.get(u.id, (0, 0)) for u in users},
            reserves=[OpenReserve(run_id=oid, held=int(amount), run=_run_row(ops.get(oid))) for oid, amount in rows],
            spend_by_day=dict(by_day),
            spend_by_kind=dict(by_kind),
            recent_runs=[RunRow.model_validate(r) for r in runs[:recent]],
            runs_more=len(runs) > recent,
            prices=[Price.model_validate(p) for p in pricing.list_prices(db)],
        )


def _run_row(run: Run | None) -> RunRow | None:
    return None if run is None else RunRow.model_validate(run)


def run_detail(op_id: str) -> RunDetail:
    """One run with its owner and usage events, for any user's run (admins only)."""
    with session_scope() as db:
        op = db.get(Run, op_id)
        if op is None:
            raise NotFound("run")
        owner = db.get(User, op.owner_id)
        usage = list(
            db.exec(
                select(UsageEvent)
                .where(UsageEvent.operation_id == op_id)
                .order_by(col(UsageEvent.attempt), col(UsageEvent.seq))
            )
        )
        return RunDetail(
            run=RunRow.model_validate(op),
            owner_email=owner.email if owner else None,
            usage=[UsageRow.model_validate(e) for e in usage],
        )


AMOUNT_RULE = "Amount: give a number of credits greater than 0, e.g. 5 or 2.5."


class GrantRefused(DomainError):
    """A grant the admin must correct (no amount, a bad number)."""

    def __init__(self, message: str) -> None:
        super().__init__("bad_amount", message, 400)


def grant_amount(*, credits: object = None, amount_micro: object = None) -> int:
    """The grant's micro-credits from `amount_micro` (an integer) or `credits` (a number, or
    text typed in a form: "2.5" or "2,5"); GrantRefused unless it is more than zero."""
    amount: object = amount_micro
    if amount is None and isinstance(credits, str) and credits.strip():
        try:
            credits = float(credits.strip().replace(",", "."))
        except ValueError:
            raise GrantRefused(AMOUNT_RULE) from None
    if amount is None and isinstance(credits, (int, float)) and not isinstance(credits, bool):
        if not math.isfinite(credits):
            raise GrantRefused(AMOUNT_RULE)
        amount = round(credits * MICRO)
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise GrantRefused(AMOUNT_RULE)
    return amount


def grant_by_admin(
    admin_email: str,
    *,
    credits: object = None,
    amount_micro: object = None,
    key: str | None = None,
    note: str | None = None,
    user_id: str | None = None,
    email: str | None = None,
) -> tuple[int, Granted]:
    """An admin's grant, validated once for both front doors: the amount (`grant_amount`), an
    idempotency key (a fresh one when none is given), the note (default: who granted it) and
    the recipient by id, else by e-mail. Returns (micro-credits granted, the grant)."""
    amount = grant_amount(credits=credits, amount_micro=amount_micro)
    key = str(key or f"grant:{uuid.uuid4().hex}")
    note = (note or "").strip() or f"Granted by {admin_email}"
    return amount, grant(amount, key, note, user_id=user_id, email=None if user_id else email)
