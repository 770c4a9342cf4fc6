"""What the credit use cases return: balances, history, grants, prices, reconciliation.

Built by the use cases inside their sessions (no ORM row leaves one) and used as is by the
HTTP API as `response_model`s (FastAPI documents and validates the JSON against them) and by
the pages' states. Ids are strings; times are ISO 8601 strings; credits are integer
micro-credits. Fields a client may ignore are still listed, so the document is complete."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict
from sqlmodel.main import SQLModelConfig

from bayes_app.credits.ledger import HistoryRow as HistoryRow  # the ledger's rows, as they are
from bayes_app.models import PriceBase
from bayes_app.usecases.schemas.accounts import UserOut


class MyCredits(BaseModel):
    balance: int
    held: int
    available: int
    unit: str
    history: list[HistoryRow]


class Granted(BaseModel):
    user_id: str
    amount_micro: int
    created: bool  # False: a grant with this idempotency key was already recorded
    balance: int
    available: int


class Price(PriceBase):
    """A model's prices in micro-credits per million tokens (the HTTP API's `PriceOut` too)."""

    model_config = SQLModelConfig(json_schema_serialization_defaults_required=True)  # an answer has every field


PriceOut = Price


class PriceList(BaseModel):
    prices: list[PriceOut]


class SpendMismatch(BaseModel):
    """A settled run whose spend rows disagree with its usage."""

    operation_id: str
    status: str
    usage_cost: int
    spent: int
    spend_rows: int
    charged: int | None


class HeldReserve(BaseModel):
    operation_id: str
    held: int


class Reconciliation(BaseModel):
    ok: bool
    runs_checked: int
    spend_mismatches: list[SpendMismatch]
    held_after_finalize: list[HeldReserve]
    stale_runs: list[str]


# ---- the admin dashboard (the Reflex admin page; not in the HTTP API) ---------------------------
class RunRow(BaseModel):
    """A run as the dashboard lists it."""

    model_config = ConfigDict(from_attributes=True)

    id: str
    title: str
    kind: str
    status: str
    owner_id: str
    outcome_reason: str | None
    reserved_credits: int | None
    charged_credits: int | None
    created_at: datetime


class OpenReserve(BaseModel):
    run_id: str
    held: int
    run: RunRow | None  # None: the run is gone


class UsageRow(BaseModel):
    """One model response's tokens and cost."""

    model_config = ConfigDict(from_attributes=True)

    step: str
    model: str
    attempt: int
    seq: int
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    cost_credits: int
    estimated: bool


class Dashboard(BaseModel):
    users: list[UserOut]
    balances: dict[str, tuple[int, int]]  # user id -> (balance, held)
    reserves: list[OpenReserve]
    spend_by_day: dict[str, int]
    spend_by_kind: dict[str, int]
    recent_runs: list[RunRow]
    runs_more: bool  # more runs match the filter than `recent_runs` holds
    prices: list[Price]


class RunDetail(BaseModel):
    run: RunRow
    owner_email: str | None
    usage: list[UsageRow]
