"""Extraction tables: a table over papers, its cells, and who it is shared with."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Text
from sqlmodel import Field, SQLModel

from bayes_app.models.base import UTCDateTime, new_id, utcnow


class ExtractionTable(SQLModel, table=True):
    """Rows are the papers of `collection_id` (as it is now) or the listed `document_ids`;
    `columns` are `tables.columns.Column` records in display order."""

    __tablename__ = "extraction_tables"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="users.id", index=True, max_length=32, ondelete="CASCADE")
    title: str = Field(max_length=300)
    collection_id: str | None = Field(
        default=None, foreign_key="collections.id", index=True, max_length=32, ondelete="SET NULL"
    )
    document_ids: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    columns: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class TableCell(SQLModel, table=True):
    """One paper's answer to one column: its value and the sentence it rests on (quote, page and
    the range in the page text the viewer highlights). `status`: found | not_found | edited."""

    __tablename__ = "table_cells"

    table_id: str = Field(foreign_key="extraction_tables.id", primary_key=True, max_length=32, ondelete="CASCADE")
    document_id: str = Field(foreign_key="documents.id", primary_key=True, max_length=32, ondelete="CASCADE")
    column_key: str = Field(primary_key=True, max_length=40)
    value: Any = Field(default=None, sa_column=Column(JSON, nullable=True))
    quote: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    page: int | None = None
    char_start: int | None = None
    char_end: int | None = None
    status: str = Field(default="not_found", max_length=12)
    score: float = 0.0
    edited_by: str | None = Field(default=None, max_length=32)
    run_id: str | None = Field(default=None, max_length=32)
    updated_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class TableMember(SQLModel, table=True):
    """Another user's role on a table (viewer | editor); the owner is never a member row."""

    __tablename__ = "table_members"

    table_id: str = Field(foreign_key="extraction_tables.id", primary_key=True, max_length=32, ondelete="CASCADE")
    user_id: str = Field(foreign_key="users.id", primary_key=True, index=True, max_length=32, ondelete="CASCADE")
    role: str = Field(max_length=10)
    added_by: str = Field(max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
