"""Users, browser sessions and API tokens."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column
from sqlmodel import Field, SQLModel

from bayes_app.models.base import UTCDateTime, new_id, utcnow


class User(SQLModel, table=True):
    __tablename__ = "users"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    email: str = Field(max_length=320, unique=True, index=True)
    # TR39 confusable skeleton of the address (accounts.identity.skeleton): lookalikes are refused
    email_skeleton: str = Field(default="", max_length=1280, index=True)
    password_hash: str = Field(max_length=255)
    is_admin: bool = Field(default=False)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
    password_changed_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class UserSession(SQLModel, table=True):
    """A browser login. The raw token lives only in the browser's cookie; we keep its hash."""

    __tablename__ = "user_sessions"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    user_id: str = Field(foreign_key="users.id", index=True, max_length=32, ondelete="CASCADE")
    token_hash: str = Field(max_length=64, unique=True, index=True)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
    expires_at: datetime = Field(sa_column=Column(UTCDateTime, nullable=False))
    revoked_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))


class ApiToken(SQLModel, table=True):
    """A bearer token for the HTTP API. Only its hash is stored."""

    __tablename__ = "api_tokens"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    user_id: str = Field(foreign_key="users.id", index=True, max_length=32, ondelete="CASCADE")
    name: str = Field(default="api", max_length=100)
    token_hash: str = Field(max_length=64, unique=True, index=True)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
    expires_at: datetime = Field(sa_column=Column(UTCDateTime, nullable=False))
    revoked_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))
    last_used_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))
