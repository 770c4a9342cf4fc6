"""Shared helpers for table definitions and the records read from them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated

from pydantic import PlainSerializer
from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


def new_id() -> str:
    """A random, unguessable id (32 hex chars)."""
    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(UTC)


# A moment a record shows as `datetime.isoformat()` ("2026-11-29T01:28:00+00:00"), not pydantic's "…Z"
IsoTime = Annotated[datetime, PlainSerializer(datetime.isoformat, return_type=str)]


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite stores them naive)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:  # noqa: ARG002 - SQLAlchemy's signature
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:  # noqa: ARG002 - SQLAlchemy's signature
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value
