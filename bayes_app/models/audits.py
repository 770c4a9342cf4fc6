"""Draft audits: a draft checked against its owner's library (issue 41)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index
from sqlmodel import Field, SQLModel

from bayes_app.models.base import UTCDateTime, new_id, utcnow


class Audit(SQLModel, table=True):
    """One uploaded draft, its parsed sentences and references, and the run's findings."""

    __tablename__ = "audits"
    __table_args__ = (Index("ix_audits_owner_created", "owner_id", "created_at"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="users.id", max_length=32, ondelete="CASCADE")
    run_id: str | None = Field(default=None, max_length=32, index=True)
    filename: str = Field(max_length=500)
    format: str = Field(max_length=20)
    collection_id: str | None = Field(default=None, max_length=32)
    draft: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    sentences: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    summary: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    progress_done: int = 0
    progress_total: int = 0
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
