"""Request helpers shared by the routes: JSON bodies and the authenticated user."""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from bayes_app.accounts import service
from bayes_app.accounts.service import UserInfo
from bayes_app.api.errors import ApiError
from bayes_app.db import session_scope

SESSION_COOKIE = "bayes_session"
MAX_JSON_BYTES = 1_000_000


async def read_json(request: Request, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """Parse a JSON object body; 400 on malformed JSON, missing or non-string fields."""
    body = await request.body()
    if len(body) > MAX_JSON_BYTES:
        raise ApiError(413, "too_large", "Request body is too large.")
    try:
        data = json.loads(body or b"")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ApiError(400, "bad_json", "Request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise ApiError(400, "bad_json", "Request body must be a JSON object.")
    missing = [f for f in required if not isinstance(data.get(f), str) or not data.get(f)]
    if missing:
        raise ApiError(400, "missing_fields", f"Missing or empty field(s): {', '.join(missing)}.")
    return data


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _resolve(bearer: str | None, cookie: str | None) -> tuple[UserInfo, str | None] | None:
    with session_scope() as db:
        if bearer:
            found = service.user_for_api_token(db, bearer)
            return (UserInfo.of(found[0]), found[1].id) if found else None
        user = service.user_for_session(db, cookie)
        return (UserInfo.of(user), None) if user else None


async def require_user(request: Request, allow_cookie: bool = False) -> UserInfo:
    """The caller's user, from `Authorization: Bearer` (or the browser session cookie where
    allowed: read-only routes such as file downloads). Raises 401 otherwise."""
    bearer = bearer_token(request)
    cookie = request.cookies.get(SESSION_COOKIE) if allow_cookie and not bearer else None
    if not bearer and not cookie:
        raise ApiError(401, "unauthorized", "Missing credentials: send 'Authorization: Bearer <token>'.",
                       {"WWW-Authenticate": "Bearer"})
    found = await run_in_threadpool(_resolve, bearer, cookie)
    if found is None:
        raise ApiError(401, "invalid_token", "The token is invalid, expired or revoked.",
                       {"WWW-Authenticate": 'Bearer error="invalid_token"'})
    request.state.token_id = found[1]
    return found[0]


async def require_admin(request: Request) -> UserInfo:
    user = await require_user(request)
    if not user.is_admin:
        raise ApiError(403, "forbidden", "Administrators only.")
    return user
