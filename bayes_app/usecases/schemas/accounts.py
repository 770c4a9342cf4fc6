"""What the account and session use cases return: the user, API tokens, a health report.

Built by the use cases inside their sessions (no ORM row leaves one) and used as is by the
HTTP API as `response_model`s (FastAPI documents and validates the JSON against them) and by
the pages' states. Ids are strings; times are ISO 8601 strings; credits are integer
micro-credits. Fields a client may ignore are still listed, so the document is complete."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from bayes_app.models import IsoTime


class UserOut(BaseModel):
    """A user as they are shown (never the password hash)."""

    model_config = ConfigDict(from_attributes=True, frozen=True)

    id: str
    email: str
    is_admin: bool
    created_at: IsoTime


class SessionUser(BaseModel):
    user: UserOut


class Changed(BaseModel):
    changed: bool


class Health(BaseModel):
    status: str  # "ok" | "degraded"
    broken: list[str] | None = None  # administrators only
    components: dict[str, dict[str, Any]] | None = None  # administrators only


class ModelCheck(BaseModel):
    """Whether the configured model answers (administrators): `outcome` is one of ok, offline,
    refused_key, unreachable, timeout, no_model, rate_limited, error; `message` says it in words."""

    ok: bool
    outcome: str
    message: str
    endpoint: str | None = None  # the base URL called (never the key)
    model: str
    seconds: float


class Token(BaseModel):
    """An API token as its owner sees it (never its hash)."""

    id: str
    name: str
    created_at: datetime
    expires_at: datetime
    revoked: bool


class IssuedToken(BaseModel):
    """A token just issued: the raw `token` is shown once and never stored."""

    token: str
    id: str
    expires_at: datetime


TokenIssued = IssuedToken  # `token` is shown once: store it


class TokenRow(Token):
    current: bool  # the token this request was made with


class TokenList(BaseModel):
    tokens: list[TokenRow]
