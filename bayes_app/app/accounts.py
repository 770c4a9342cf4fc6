"""Account use cases: who a session or token belongs to, sign-in, sign-up, sessions,
password changes, API tokens and the first-run progress — each one transaction."""

from __future__ import annotations

from datetime import timedelta

from bayes_app.accounts import onboarding, service
from bayes_app.accounts.service import UserInfo
from bayes_app.db import session_scope
from bayes_app.errors import NotFound
from bayes_app.models import ApiToken, User
from bayes_app.settings import get_settings


def _user(db, user_id: str) -> User:
    user = db.get(User, user_id)
    if user is None:
        raise NotFound("user")
    return user


def session_user(token: str | None) -> UserInfo | None:
    """The user a session cookie belongs to (None: no such live session)."""
    with session_scope() as db:
        user = service.user_for_session(db, token)
        return UserInfo.of(user) if user else None


def token_user(token: str) -> tuple[UserInfo, str] | None:
    """(user, token id) for a live API token."""
    with session_scope() as db:
        found = service.user_for_api_token(db, token)
        return (UserInfo.of(found[0]), found[1].id) if found else None


def authenticate(email: str, password: str) -> UserInfo:
    """The user with these credentials (AccountError otherwise; not throttled here)."""
    with session_scope() as db:
        return UserInfo.of(service.authenticate(db, email, password))


def register(email: str, password: str) -> UserInfo:
    with session_scope() as db:
        return UserInfo.of(service.register(db, email, password))


def new_session(user_id: str) -> str:
    """A new session token for the user (valid for BAYES_SESSION_TTL_HOURS)."""
    with session_scope() as db:
        return service.create_session(db, _user(db, user_id), timedelta(hours=get_settings().session_ttl_hours))


def end_session(token: str | None) -> None:
    with session_scope() as db:
        service.end_session(db, token)


def change_password(user_id: str, old: str, new: str) -> None:
    """Change the password; other browsers are signed out and every API token is revoked."""
    with session_scope() as db:
        service.change_password(db, user_id, old, new)


def sign_out_everywhere(user_id: str) -> tuple[int, int]:
    """End every browser session of the user (this one too) and revoke every API token, in one
    transaction; returns (sessions ended, tokens revoked)."""
    with session_scope() as db:
        return service.end_all_sessions(db, user_id), service.revoke_all_api_tokens(db, user_id)


def tokens(user_id: str) -> list[ApiToken]:
    """The user's API tokens, newest first (revoked ones too)."""
    with session_scope() as db:
        return list(service.list_api_tokens(db, user_id))


def create_token(user_id: str, name: str) -> tuple[ApiToken, str]:
    """A new API token: (its row, the raw token — shown once, never stored)."""
    with session_scope() as db:
        return service.create_api_token(db, _user(db, user_id),
                                        timedelta(days=get_settings().api_token_ttl_days), name)


def revoke_token(user_id: str, token_id: str) -> None:
    with session_scope() as db:
        service.revoke_api_token(db, user_id, token_id)


def first_run(user_id: str) -> onboarding.FirstRun:
    """How far a new user got: papers (indexed), a question asked, a map built."""
    with session_scope() as db:
        return onboarding.progress(db, user_id)
