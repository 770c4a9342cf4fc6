"""Admin page state: users, the credit dashboard (balances, reserves, spend charts, run
drill-down, reconciliation), credit grants and the price table editor."""

from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import timedelta

import reflex as rx
from sqlmodel import col, func, select

from bayes_app.credits import ledger, pricing
from bayes_app.credits.pricing import format_credits
from bayes_app.credits.reconcile import reconcile
from bayes_app.db import session_scope
from bayes_app.models import MICRO, EntryType, LedgerEntry, Operation, UsageEvent, User, utcnow
from state.auth import AuthState

SPEND_DAYS = 30


def _credits_number(micro: int) -> float:
    return round(micro / MICRO, 6)


def _parse_credits(raw: str, what: str) -> int:
    """A number of credits typed by the admin -> integer micro-credits (ValueError if bad)."""
    try:
        value = float(str(raw).strip().replace(",", "."))
    except ValueError:
        raise ValueError(f"{what}: give a number of credits") from None
    if value != value or value < 0:  # NaN or negative
        raise ValueError(f"{what}: must be a number >= 0")
    return round(value * MICRO)


def _stale_after_s() -> float:
    from bayes_app.runs.control import LEASE_MS

    return 5 + LEASE_MS / 1000 + 30  # the same limit as the reconciliation API


RUNS_PAGE = 30  # runs per page of the admin's Runs table


class AdminState(AuthState):
    users: list[dict[str, str]] = []
    balances: list[dict[str, str]] = []
    reserves: list[dict[str, str]] = []
    spend_by_day: list[dict] = []
    spend_by_kind: list[dict] = []
    recent_runs: list[dict[str, str]] = []
    runs_user: str = "all"  # filter of the Runs table: a user id or "all"
    runs_status: str = "all"  # a run status or "all"
    runs_limit: int = RUNS_PAGE
    runs_more: bool = False  # more runs match than are shown
    # run drill-down
    run_id: str = ""
    run_info: dict[str, str] = {}
    run_usage: list[dict[str, str]] = []
    run_error: str = ""
    # reconciliation
    recon_ok: bool = True
    recon_checked: int = 0
    recon_mismatches: list[str] = []
    recon_held: list[str] = []
    recon_stale: list[str] = []
    recon_at: str = ""
    # grant form
    grant_key: str = ""
    grant_error: str = ""
    grant_notice: str = ""
    # price editor
    prices: list[dict[str, str]] = []
    price_model: str = ""
    price_input: str = ""
    price_cached: str = ""
    price_output: str = ""
    price_error: str = ""
    price_notice: str = ""

    # ---- loading ----------------------------------------------------------------
    def _admin(self) -> bool:
        return self._load_user() and self.is_admin

    @rx.event
    def load(self):
        if not self._admin():
            self.users = []
            return
        self.grant_key = f"grant:{uuid.uuid4().hex}"
        self.grant_error = self.grant_notice = self.price_error = self.price_notice = ""
        self._refresh()

    def _runs(self, db) -> list[Operation]:
        """The Runs table: newest first, filtered by user and status, one page more each time."""
        q = select(Operation).order_by(col(Operation.created_at).desc())
        if self.runs_user != "all":
            q = q.where(Operation.owner_id == self.runs_user)
        if self.runs_status != "all":
            q = q.where(Operation.status == self.runs_status)
        rows = list(db.exec(q.limit(self.runs_limit + 1)))
        self.runs_more = len(rows) > self.runs_limit
        return rows[:self.runs_limit]

    @rx.event
    def filter_runs_user(self, value: str):
        self.runs_user, self.runs_limit = value, RUNS_PAGE
        if self._admin():
            self._refresh()

    @rx.event
    def filter_runs_status(self, value: str):
        self.runs_status, self.runs_limit = value, RUNS_PAGE
        if self._admin():
            self._refresh()

    @rx.event
    def more_runs(self):
        self.runs_limit += RUNS_PAGE
        if self._admin():
            self._refresh()

    @rx.event
    def refresh(self):
        if self._admin():
            self._refresh()

    def _refresh(self) -> None:
        with session_scope() as db:
            users = list(db.exec(select(User).order_by(User.created_at)))
            emails = {u.id: u.email for u in users}
            self.users = [
                {"id": u.id, "email": u.email, "role": "admin" if u.is_admin else "user",
                 "created": u.created_at.strftime("%Y-%m-%d %H:%M")}
                for u in users
            ]
            sums = ledger.summaries(db)
            # every user, with no ledger row yet too (a zero balance is what an admin looks for)
            per_user = {u.id: sums.get(u.id, (0, 0)) for u in users}
            self.balances = [
                {"email": emails.get(uid, uid), "balance": format_credits(b),
                 "held": format_credits(h), "available": format_credits(b - h)}
                for uid, (b, h) in sorted(per_user.items(), key=lambda kv: emails.get(kv[0], kv[0]))
            ]
            self._load_reserves(db, emails)
            self._load_spend(db)
            runs = self._runs(db)
            self.recent_runs = [
                {"id": op.id, "title": op.title, "kind": op.kind, "status": op.status,
                 "owner": emails.get(op.owner_id, op.owner_id),
                 "charged": format_credits(op.charged_credits)
                 if op.charged_credits is not None else "—",
                 "date": op.created_at.strftime("%Y-%m-%d %H:%M")}
                for op in runs
            ]
            self.prices = [
                {"model": p.model, "input": format_credits(p.input_per_million),
                 "cached": format_credits(p.cached_per_million),
                 "output": format_credits(p.output_per_million),
                 "updated": (p.updated_at.strftime("%Y-%m-%d %H:%M") if p.updated_at else "")
                 + (f" by {p.updated_by}" if p.updated_by else "")}
                for p in pricing.list_prices(db)
            ]
            self._load_reconciliation(db)
            if self.run_id:
                self._load_run(db, self.run_id)

    def _load_reserves(self, db, emails: dict[str, str]) -> None:
        held = func.sum(LedgerEntry.amount)
        rows = db.exec(
            select(LedgerEntry.operation_id, held)
            .where(col(LedgerEntry.entry_type).in_(EntryType.HOLD),
                   col(LedgerEntry.operation_id).is_not(None))
            .group_by(LedgerEntry.operation_id)
            .having(held != 0)
        ).all()
        ops = {op.id: op for op in db.exec(
            select(Operation).where(col(Operation.id).in_([r[0] for r in rows])))} if rows else {}
        self.reserves = [
            {"id": oid, "held": format_credits(int(amount)),
             "title": ops[oid].title if oid in ops else "",
             "status": ops[oid].status if oid in ops else "",
             "owner": emails.get(ops[oid].owner_id, "") if oid in ops else ""}
            for oid, amount in rows
        ]

    def _load_spend(self, db) -> None:
        since = utcnow() - timedelta(days=SPEND_DAYS)
        rows = db.exec(
            select(LedgerEntry.created_at, LedgerEntry.amount, Operation.kind)
            .join(Operation, col(Operation.id) == col(LedgerEntry.operation_id))
            .where(LedgerEntry.entry_type == EntryType.SPEND,
                   col(LedgerEntry.created_at) >= since)
        ).all()
        by_day: dict[str, int] = defaultdict(int)
        by_kind: dict[str, int] = defaultdict(int)
        for created, amount, kind in rows:
            by_day[created.strftime("%Y-%m-%d")] += -int(amount)
            by_kind[kind] += -int(amount)
        self.spend_by_day = [{"day": d, "credits": _credits_number(v)}
                             for d, v in sorted(by_day.items())]
        self.spend_by_kind = [{"kind": k, "credits": _credits_number(v)}
                              for k, v in sorted(by_kind.items())]

    def _load_reconciliation(self, db) -> None:
        report = reconcile(db, stale_after_s=_stale_after_s())
        self.recon_ok = report.ok
        self.recon_checked = report.runs_checked
        self.recon_mismatches = [
            f"{m.operation_id} ({m.status}): usage {format_credits(m.usage_cost)}, "
            f"spent {format_credits(m.spent)} in {m.spend_rows} row(s)"
            for m in report.spend_mismatches]
        self.recon_held = [f"{h.operation_id}: {format_credits(h.held)} held"
                           for h in report.held_after_finalize]
        self.recon_stale = list(report.stale_runs)
        self.recon_at = utcnow().strftime("%Y-%m-%d %H:%M:%S UTC")

    @rx.event
    def run_reconciliation(self):
        if not self._admin():
            return
        with session_scope() as db:
            self._load_reconciliation(db)

    # ---- run drill-down -------------------------------------------------------------
    def _load_run(self, db, op_id: str) -> None:
        self.run_error = ""
        op = db.get(Operation, op_id)
        if op is None:
            self.run_info, self.run_usage = {}, []
            self.run_error = f"No run with id {op_id}."
            return
        owner = db.get(User, op.owner_id)
        self.run_info = {
            "id": op.id, "title": op.title, "kind": op.kind, "status": op.status,
            "reason": op.outcome_reason or "", "owner": owner.email if owner else op.owner_id,
            "reserved": format_credits(op.reserved_credits),
            "charged": format_credits(op.charged_credits)
            if op.charged_credits is not None else "not settled",
        }
        events = db.exec(select(UsageEvent).where(UsageEvent.operation_id == op_id)
                         .order_by(UsageEvent.attempt, UsageEvent.seq)).all()
        self.run_usage = [
            {"step": e.step, "model": e.model, "attempt": str(e.attempt), "seq": str(e.seq),
             "input": str(e.input_tokens), "cached": str(e.cached_tokens),
             "output": str(e.output_tokens), "cost": format_credits(e.cost_credits),
             "estimated": "estimated" if e.estimated else ""}
            for e in events
        ]

    @rx.event
    def set_run_id(self, value: str):
        self.run_id = value.strip()

    @rx.event
    def show_run(self, op_id: str = ""):
        if not self._admin():
            return
        if op_id:
            self.run_id = op_id
        if not self.run_id:
            self.run_error = "Give a run id."
            return
        with session_scope() as db:
            self._load_run(db, self.run_id)

    # ---- grant ----------------------------------------------------------------------
    @rx.event
    def grant_credits(self, form: dict):
        self.grant_error = self.grant_notice = ""
        if not self._admin():
            return
        email = str(form.get("email", "")).strip().lower()
        try:
            amount = _parse_credits(form.get("credits", ""), "Amount")
        except ValueError as err:
            self.grant_error = str(err)
            return
        if amount <= 0:
            self.grant_error = "Amount: must be more than 0 credits."
            return
        key = self.grant_key or f"grant:{uuid.uuid4().hex}"
        with session_scope() as db:
            user = db.exec(select(User).where(User.email == email)).first()
            if user is None:
                self.grant_error = f"No user with e-mail {email or '(empty)'}."
                return
            created = ledger.grant(db, user, amount, key,
                                   str(form.get("note", "")).strip() or f"Granted by {self.user_email}")
            db.commit()
            bal = ledger.balance(db, user.id)
        self.grant_key = f"grant:{uuid.uuid4().hex}"  # a new key for the next submit
        self.grant_notice = (
            f"Granted {format_credits(amount)} credits to {email}; balance {format_credits(bal)}."
            if created else "This grant was already recorded.")
        self._refresh()

    # ---- prices ---------------------------------------------------------------------
    @rx.event
    def set_price_model(self, v: str):
        self.price_model = v

    @rx.event
    def set_price_input(self, v: str):
        self.price_input = v

    @rx.event
    def set_price_cached(self, v: str):
        self.price_cached = v

    @rx.event
    def set_price_output(self, v: str):
        self.price_output = v

    @rx.event
    def edit_price(self, model: str):
        for p in self.prices:
            if p["model"] == model:
                self.price_model, self.price_input = p["model"], p["input"]
                self.price_cached, self.price_output = p["cached"], p["output"]
        self.price_error = self.price_notice = ""

    @rx.event
    def save_price(self):
        self.price_error = self.price_notice = ""
        if not self._admin():
            return
        try:
            values = [_parse_credits(v or "0", name) for v, name in (
                (self.price_input, "Input"), (self.price_cached, "Cached input"),
                (self.price_output, "Output"))]
            with session_scope() as db:
                p = pricing.set_price(db, self.price_model, *values, updated_by=self.user_email)
                db.commit()
                model = p.model
        except ValueError as err:
            self.price_error = str(err)
            return
        self.price_notice = f"Saved the price of {model}."
        self.price_model = self.price_input = self.price_cached = self.price_output = ""
        self._refresh()
