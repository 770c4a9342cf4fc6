"""Admin page state: users, the credit dashboard (balances, reserves, spend charts, run
drill-down, reconciliation), credit grants and the price table editor."""

from __future__ import annotations

import asyncio
import uuid

import reflex as rx

from bayes_app.errors import DomainError, NotFound
from bayes_app.usecases import credits
from bayes_app.usecases import runs as app_runs
from bayes_app.usecases import sharing as app_sharing
from bayes_app.usecases import system as app_system
from bayes_app.usecases.views import MICRO, display_credits, display_date, format_credits, shown_email, utcnow
from state.auth import AuthState
from state.offloop import off_loop, run_off_loop

SPEND_DAYS = 30


def _amounts(**micro: int) -> dict[str, str]:
    """Each amount rounded for reading (as in the credit history) and exact under `<name>_exact`."""
    out: dict[str, str] = {}
    for name, value in micro.items():
        out[name], out[f"{name}_exact"] = display_credits(value), format_credits(value)
    return out


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
    shares: list[dict[str, str]] = []  # who shares which map or collection with whom
    price_model: str = ""
    price_input: str = ""
    price_cached: str = ""
    price_output: str = ""
    price_error: str = ""
    price_notice: str = ""
    # model connection check
    model_checking: bool = False
    model_check_done: bool = False
    model_check_ok: bool = False
    model_check_message: str = ""
    # how the model is configured, in words (never the key); set for an admin on load, so the
    # model's address is neither compiled into the public bundle nor sent to other users
    model_setup: str = ""

    @rx.event(background=True)
    async def check_model(self):
        """Send the configured model a tiny request (off the event loop) and say whether it works."""
        async with self:
            if self.model_checking or not await run_off_loop(self._admin):
                return
            self.model_checking, self.model_check_done, self.model_check_message = True, False, ""
        try:
            got = await asyncio.to_thread(app_system.model_check)
            ok, message = got.ok, got.message
        except Exception as err:  # noqa: BLE001 - shown, never raised into the page
            ok, message = False, f"The check itself failed: {type(err).__name__}."
        async with self:
            self.model_checking, self.model_check_done = False, True
            self.model_check_ok, self.model_check_message = ok, message

    # ---- loading ----------------------------------------------------------------
    def _admin(self) -> bool:
        return self._load_user() and self.is_admin

    @rx.event
    @off_loop
    def load(self):
        if not self._admin():
            self.users, self.model_setup = [], ""
            return
        self.model_setup = app_system.model_setup()
        self.grant_key = f"grant:{uuid.uuid4().hex}"
        self.grant_error = self.grant_notice = self.price_error = self.price_notice = ""
        self._refresh()

    @rx.event
    @off_loop
    def filter_runs_user(self, value: str):
        self.runs_user, self.runs_limit = value, RUNS_PAGE
        if self._admin():
            self._refresh()

    @rx.event
    @off_loop
    def filter_runs_status(self, value: str):
        self.runs_status, self.runs_limit = value, RUNS_PAGE
        if self._admin():
            self._refresh()

    @rx.event
    @off_loop
    def more_runs(self):
        self.runs_limit += RUNS_PAGE
        if self._admin():
            self._refresh()

    @rx.event
    @off_loop
    def refresh(self):
        if self._admin():
            self._refresh()

    def _refresh(self) -> None:
        self.shares = [
            {
                **r.model_dump(),
                "owner": shown_email(r.owner),
                "member": shown_email(r.member),
                "since": display_date(r.since),
            }
            for r in app_sharing.all_shares()
        ]
        d = credits.dashboard(
            SPEND_DAYS,
            self.runs_limit,
            runs_user=None if self.runs_user == "all" else self.runs_user,
            runs_status=None if self.runs_status == "all" else self.runs_status,
        )
        self.runs_more = d.runs_more
        emails = {u.id: shown_email(u.email) for u in d.users}  # lookalikes told apart
        self.users = [
            {
                "id": u.id,
                "email": shown_email(u.email),
                "role": "admin" if u.is_admin else "user",
                "created": display_date(u.created_at),
            }
            for u in d.users
        ]
        self.balances = [
            {"email": emails.get(uid, uid), **_amounts(balance=b, held=h, available=b - h)}
            for uid, (b, h) in sorted(d.balances.items(), key=lambda kv: emails.get(kv[0], kv[0]))
        ]
        self.reserves = [
            {
                "id": r.run_id,
                **_amounts(held=r.held),
                "title": r.run.title if r.run else "",
                "status": r.run.status if r.run else "",
                "owner": emails.get(r.run.owner_id, "") if r.run else "",
            }
            for r in d.reserves
        ]
        self.spend_by_day = [{"day": day, "credits": _credits_number(v)} for day, v in sorted(d.spend_by_day.items())]
        # every kind of run, spent on or not, by the name the run buttons use; the bar's label rounds as elsewhere
        self.spend_by_kind = [
            {"kind": label, "credits": _credits_number(v), "label": display_credits(v)}
            for label, v in ((lbl, d.spend_by_kind.get(k, 0)) for k, lbl in app_runs.all_labels().items())
        ]
        self.recent_runs = [
            {
                "id": op.id,
                "title": op.title,
                "kind": op.kind,
                "status": op.status,
                "owner": emails.get(op.owner_id, op.owner_id),
                **(
                    _amounts(charged=op.charged_credits)
                    if op.charged_credits is not None
                    else {"charged": "—", "charged_exact": ""}
                ),
                "date": display_date(op.created_at),
            }
            for op in d.recent_runs
        ]
        self.prices = [
            {
                "model": p.model,
                "input": format_credits(p.input_per_million),
                "cached": format_credits(p.cached_per_million),
                "output": format_credits(p.output_per_million),
                "updated": display_date(p.updated_at) + (f" by {p.updated_by}" if p.updated_by else ""),
            }
            for p in d.prices
        ]
        self._load_reconciliation()
        if self.run_id:
            self._load_run(self.run_id)

    def _load_reconciliation(self) -> None:
        report = credits.reconciliation()
        self.recon_ok = report.ok
        self.recon_checked = report.runs_checked
        self.recon_mismatches = [
            f"{m.operation_id} ({m.status}): usage {format_credits(m.usage_cost)}, "
            f"spent {format_credits(m.spent)} in {m.spend_rows} row(s)"
            for m in report.spend_mismatches
        ]
        self.recon_held = [f"{h.operation_id}: {format_credits(h.held)} held" for h in report.held_after_finalize]
        self.recon_stale = list(report.stale_runs)
        self.recon_at = display_date(utcnow(), seconds=True) + " UTC"

    @rx.event
    @off_loop
    def run_reconciliation(self):
        if not self._admin():
            return
        self._load_reconciliation()

    # ---- run drill-down -------------------------------------------------------------
    def _load_run(self, op_id: str) -> None:
        self.run_error = ""
        try:
            detail = credits.run_detail(op_id)
        except NotFound:
            self.run_info, self.run_usage = {}, []
            self.run_error = f"No run with id {op_id}."
            return
        op, events = detail.run, detail.usage
        self.run_info = {
            "id": op.id,
            "title": op.title,
            "kind": op.kind,
            "status": op.status,
            "reason": op.outcome_reason or "",
            "owner": shown_email(detail.owner_email) if detail.owner_email else op.owner_id,
            "reserved": format_credits(op.reserved_credits or 0),  # never None for a run
            "charged": format_credits(op.charged_credits) if op.charged_credits is not None else "not settled",
        }
        self.run_usage = [
            {
                "step": e.step,
                "model": e.model,
                "attempt": str(e.attempt),
                "seq": str(e.seq),
                "input": str(e.input_tokens),
                "cached": str(e.cached_tokens),
                "output": str(e.output_tokens),
                "cost": format_credits(e.cost_credits),
                "estimated": "estimated" if e.estimated else "",
            }
            for e in events
        ]

    @rx.event
    def set_run_id(self, value: str):
        self.run_id = value.strip()

    @rx.event
    @off_loop
    def show_run(self, op_id: str = ""):
        if not self._admin():
            return
        if op_id:
            self.run_id = op_id
        if not self.run_id:
            self.run_error = "Give a run id."
            return
        self._load_run(self.run_id)

    # ---- grant ----------------------------------------------------------------------
    @rx.event
    @off_loop
    def grant_credits(self, form: dict):
        self.grant_error = self.grant_notice = ""
        if not self._admin():
            return
        email = str(form.get("email", "")).strip().lower()
        try:
            amount, g = credits.grant_by_admin(
                self.user_email,
                credits=str(form.get("credits", "")),
                key=self.grant_key or None,
                note=str(form.get("note", "")),
                email=email,
            )
        except NotFound:
            self.grant_error = f"No user with e-mail {email or '(empty)'}."
            return
        except DomainError as err:
            self.grant_error = err.message
            return
        created, bal = g.created, g.balance
        self.grant_key = f"grant:{uuid.uuid4().hex}"  # a new key for the next submit
        self.grant_notice = (
            f"Granted {format_credits(amount)} credits to {email}; balance {format_credits(bal)}."
            if created
            else "This grant was already recorded."
        )
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
    @off_loop
    def save_price(self):
        self.price_error = self.price_notice = ""
        if not self._admin():
            return
        try:
            values = [
                _parse_credits(v or "0", name)
                for v, name in (
                    (self.price_input, "Input"),
                    (self.price_cached, "Cached input"),
                    (self.price_output, "Output"),
                )
            ]
            model = credits.set_price(self.price_model, values, self.user_email).model
        except ValueError as err:
            self.price_error = str(err)
            return
        except DomainError as err:
            self.price_error = err.message
            return
        self.price_notice = f"Saved the price of {model}."
        self.price_model = self.price_input = self.price_cached = self.price_output = ""
        self._refresh()
