"""Account use cases: who a session or token belongs to, sign-in, sign-up, sessions,
password changes, API tokens and the first-run progress — each one transaction."""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import lru_cache

from sqlmodel import Session

from bayes_app.accounts import onboarding, service
from bayes_app.accounts.passwords import HashingBusy
from bayes_app.accounts.service import AccountError
from bayes_app.accounts.throttle import LoginThrottle, Refusal
from bayes_app.db import session_scope
from bayes_app.errors import DomainError, NotFound
from bayes_app.models import User
from bayes_app.settings import get_settings
from bayes_app.usecases.schemas.accounts import IssuedToken, Token, UserOut

log = logging.getLogger("bayes.app.accounts")
PUBLIC_PAGES = ("/login", "/register")


class SignInRefused(DomainError):
    """A sign-in, sign-up or password change refused for now (throttled, hashing busy, the
    session gone), with the HTTP headers that say when to come back."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(code, message, status)
        self.headers = headers


def safe_next(target: object) -> str:
    """The page to go to after signing in: only a same-site relative path (no `//host`, no
    backslash, not a sign-in page), else /maps. The one open-redirect guard of both doors."""
    if (
        not isinstance(target, str)
        or not target.startswith("/")
        or target.startswith("//")
        or "\\" in target
        or target.split("?")[0] in PUBLIC_PAGES
    ):
        return "/maps"
    return target


@lru_cache(maxsize=4)
def _throttle(redis_url: str, max_failures: int, window: int) -> LoginThrottle:
    return LoginThrottle(redis_url, max_failures, window)


def login_throttle() -> LoginThrottle:
    s = get_settings()
    return _throttle(s.effective_redis_url, s.login_max_failures, s.login_window_minutes)


def _check_throttle(email: str, client: str) -> Refusal | None:
    try:
        return login_throttle().check(email, client)
    except Exception:
        log.warning("login throttle unavailable; allowing the attempt", exc_info=True)
        return None


def _record_attempt(email: str, client: str, ok: bool) -> None:
    try:
        if ok:
            login_throttle().succeeded(email, client)
        else:
            login_throttle().failed(email, client)
    except Exception:
        log.warning("login throttle unavailable; attempt not counted", exc_info=True)


def _refuse_if_throttled(email: str, client: str) -> None:
    refusal = _check_throttle(email, client)
    if refusal is not None:
        raise SignInRefused(429, "rate_limited", refusal.message, {"Retry-After": str(refusal.retry_after_s)})


def _busy(err: HashingBusy) -> SignInRefused:
    return SignInRefused(503, "busy", str(err), {"Retry-After": "5"})


def _user(db: Session, user_id: str) -> User:
    user = db.get(User, user_id)
    if user is None:
        raise NotFound("user")
    return user


def session_user(token: str | None) -> UserOut | None:
    """The user a session cookie belongs to (None: no such live session)."""
    with session_scope() as db:
        user = service.user_for_session(db, token)
        return UserOut.model_validate(user) if user else None


def token_user(token: str) -> tuple[UserOut, str] | None:
    """(user, token id) for a live API token."""
    with session_scope() as db:
        found = service.user_for_api_token(db, token)
        return (UserOut.model_validate(found[0]), found[1].id) if found else None


def authenticate(email: str, password: str) -> UserOut:
    """The user with these credentials (AccountError otherwise; not throttled here)."""
    with session_scope() as db:
        return UserOut.model_validate(service.authenticate(db, email, password))


def sign_in(email: str, password: str, client: str) -> UserOut:
    """Check the password under the login throttle (per account and per client address):
    the user, or SignInRefused 429/503, or AccountError for wrong credentials (counted)."""
    _refuse_if_throttled(email, client)
    try:
        info = authenticate(email, password)
    except AccountError:
        _record_attempt(email, client, ok=False)
        raise
    except HashingBusy as err:
        raise _busy(err) from None
    _record_attempt(email, client, ok=True)
    return info


def register(email: str, password: str) -> UserOut:
    """A new account (AccountError for a bad e-mail or password; SignInRefused 503 when busy)."""
    try:
        with session_scope() as db:
            return UserOut.model_validate(service.register(db, email, password))
    except HashingBusy as err:
        raise _busy(err) from None


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


def change_password_in_session(token: str | None, old: str, new: str, client: str) -> str:
    """Change the password of the session's user, checking the current one under the login
    throttle; returns a new session token (older sessions, other browsers, end)."""
    user = session_user(token)
    if user is None:
        raise SignInRefused(401, "unauthorized", "Your session has ended; sign in again.")
    _refuse_if_throttled(user.email, client)
    try:
        change_password(user.id, old, new)
    except AccountError as err:
        if err.code == "invalid_credentials":
            _record_attempt(user.email, client, ok=False)
        raise
    except HashingBusy as err:
        raise _busy(err) from None
    return new_session(user.id)


def tokens(user_id: str) -> list[Token]:
    """The user's API tokens, newest first (revoked ones too)."""
    with session_scope() as db:
        return [
            Token(
                id=t.id, name=t.name, created_at=t.created_at, expires_at=t.expires_at, revoked=t.revoked_at is not None
            )
            for t in service.list_api_tokens(db, user_id)
        ]


def create_token(user_id: str, name: str) -> IssuedToken:
    """A new API token for the user."""
    with session_scope() as db:
        ttl = timedelta(days=get_settings().api_token_ttl_days)
        row, raw = service.create_api_token(db, _user(db, user_id), ttl, name)
        return IssuedToken(token=raw, id=row.id, expires_at=row.expires_at)


def revoke_token(user_id: str, token_id: str | None) -> None:
    with session_scope() as db:
        service.revoke_api_token(db, user_id, token_id)


def first_run(user_id: str) -> onboarding.FirstRun:
    """How far a new user got: papers (indexed), a question asked, a map built."""
    with session_scope() as db:
        return onboarding.progress(db, user_id)
