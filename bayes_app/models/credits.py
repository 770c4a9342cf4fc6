"""The credit ledger and the model price table. Amounts are integer micro-credits.

Sign convention (every amount is the signed change of the bucket its type belongs to):

    bucket   entry_type   sign
    balance  grant        >= 0   credits given by an admin
    balance  spend        <= 0   the settled cost of one run (one row per run)
    balance  adjust       any    admin correction
    held     reserve      >= 0   credits set aside when a run starts (one row per run)
    held     release      <= 0   the reserve given back at finalize (one row per run)

    balance   = SUM(amount) WHERE entry_type IN (grant, spend, adjust)
    held      = SUM(amount) WHERE entry_type IN (reserve, release)
    available = balance - held

The table is append-only; the CHECK constraint enforces the signs.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, Column
from sqlmodel import Field, SQLModel

from bayes_app.models.base import UTCDateTime, new_id, utcnow


class EntryType:
    GRANT = "grant"
    RESERVE = "reserve"
    SPEND = "spend"
    RELEASE = "release"
    ADJUST = "adjust"
    BALANCE = (GRANT, SPEND, ADJUST)
    HOLD = (RESERVE, RELEASE)


MICRO = 1_000_000  # micro-credits per credit


class LedgerEntry(SQLModel, table=True):
    __tablename__ = "ledger_entries"
    __table_args__ = (
        CheckConstraint(
            "(entry_type IN ('grant', 'reserve') AND amount >= 0)"
            " OR (entry_type IN ('spend', 'release') AND amount <= 0)"
            " OR entry_type = 'adjust'",
            name="ck_ledger_entry_sign",
        ),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    user_id: str = Field(foreign_key="users.id", index=True, max_length=32, ondelete="CASCADE")
    operation_id: str | None = Field(default=None, foreign_key="runs.id", index=True, max_length=32, ondelete="CASCADE")
    entry_type: str = Field(max_length=20)
    amount: int = Field(sa_column=Column(BigInteger, nullable=False))
    idempotency_key: str = Field(max_length=200, unique=True)
    note: str | None = Field(default=None, max_length=500)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class PriceBase(SQLModel):
    """A model's prices in micro-credits per million tokens: the `ModelPrice` row and the
    application layer's `Price` derive from it."""

    model: str = Field(primary_key=True, max_length=200)
    input_per_million: int = Field(sa_type=BigInteger)
    cached_per_million: int = Field(sa_type=BigInteger)
    output_per_million: int = Field(sa_type=BigInteger)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    updated_by: str | None = Field(default=None, max_length=320)


class ModelPrice(PriceBase, table=True):
    """Micro-credits per million tokens, per model. A model without a row cannot be used."""

    __tablename__ = "model_prices"
