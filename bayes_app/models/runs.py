"""Runs and the usage events they record."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from bayes_app.models.base import UTCDateTime, new_id, utcnow


class RunStatus:
    """Operation status. STOPPED = the work ended (outcome known) but is not settled yet."""

    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    STOPPED = "STOPPED"
    SUCCEEDED = "SUCCEEDED"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    OUTCOMES = (SUCCEEDED, CANCELLED, FAILED)  # also the terminal statuses
    ACTIVE = (QUEUED, RUNNING)


class Run(SQLModel, table=True):
    """One run of an agent (ask, build_map, expand …) for one user."""

    __tablename__ = "runs"
    __table_args__ = (Index("ix_runs_owner_created", "owner_id", "created_at"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="users.id", max_length=32, ondelete="CASCADE")
    kind: str = Field(max_length=40)
    title: str = Field(max_length=500)  # the history row: "Ask: <question>", "Mindmap: <title>"
    resource_type: str | None = Field(default=None, max_length=40)
    resource_id: str | None = Field(default=None, max_length=64, index=True)
    status: str = Field(default=RunStatus.QUEUED, max_length=20, index=True)
    outcome: str | None = Field(default=None, max_length=20)
    outcome_reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    attempt: int = 0  # fencing token: bumped by every mark_running
    model: str = Field(max_length=200)
    reserved_credits: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    charged_credits: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
    started_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))
    cancel_requested_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))
    cancel_reason: str | None = Field(default=None, max_length=200)
    stopped_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))
    finalized_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))
    input: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


# the run table's old name, for code written before the rename (issue 27); use `Run`
Operation = Run


class UsageEvent(SQLModel, table=True):
    """Tokens one model response used, priced when recorded. Internal: never in user history.

    `input_tokens` counts the whole prompt, `cached_tokens` the part of it served from the
    provider's cache (OpenAI's `prompt_tokens` / `prompt_tokens_details.cached_tokens`).
    """

    __tablename__ = "usage_events"
    __table_args__ = (UniqueConstraint("operation_id", "attempt", "seq", name="uq_usage_op_attempt_seq"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    operation_id: str = Field(foreign_key="runs.id", max_length=32, ondelete="CASCADE")
    attempt: int
    seq: int
    step: str = Field(max_length=100)  # "phase1_thinking", "agent", "analyze_document" …
    model: str = Field(max_length=200)
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost_credits: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    estimated: bool = False  # counted locally because the provider reported no usage
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
