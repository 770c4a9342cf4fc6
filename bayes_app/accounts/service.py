"""Account operations: register, authenticate, change password, sessions and API tokens.

Functions take an open SQLModel session and never commit half an operation: the caller's
`session_scope` commits once at the end, so a failure leaves nothing half-created.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from bayes_app.accounts.identity import skeleton
from bayes_app.accounts.passwords import (
    InvalidEmailError,
    WeakPasswordError,
    check_password_strength,
    dummy_hash,
    hash_password,
    normalize_email,
    verify_password,
)
from bayes_app.errors import DomainError
from bayes_app.models import ApiToken, User, UserSession, utcnow

SESSION_PREFIX = "bss_"
API_TOKEN_PREFIX = "bat_"


class AccountError(DomainError):
    """A user-facing account error with a stable code."""


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _email(email: str) -> str:
    try:
        return normalize_email(email)
    except InvalidEmailError as err:
        raise AccountError("invalid_email", str(err)) from None


def _strong(password: str, email: str | None = None) -> None:
    try:
        check_password_strength(password or "", email)
    except WeakPasswordError as err:
        raise AccountError("weak_password", str(err)) from None


def register(
    db: Session, email: str, password: str, *, is_admin: bool = False, signup_credits: int | None = None
) -> User:
    """Create a user; AccountError on a bad e-mail, weak password or taken e-mail.

    Grants `signup_credits` whole credits (default: BAYES_SIGNUP_CREDITS) in the same
    transaction, as one ledger `grant` row with the idempotency key `signup:{user id}`.
    """
    email = _email(email)
    _strong(password, email)
    if db.exec(select(User).where(User.email == email)).first() is not None:
        raise AccountError("email_taken", "An account with this e-mail already exists.", 409)
    look = skeleton(email)
    if db.exec(select(User).where(User.email_skeleton == look)).first() is not None:
        raise AccountError(
            "email_lookalike",
            "This address looks like an existing account's address "
            "(characters from other scripts that look the same); choose another.",
            409,
        )
    user = User(email=email, email_skeleton=look, password_hash=hash_password(password), is_admin=is_admin)
    db.add(user)
    try:
        db.flush()
    except IntegrityError:  # a concurrent registration won the race
        db.rollback()
        raise AccountError("email_taken", "An account with this e-mail already exists.", 409) from None
    grant_signup_credits(db, user, signup_credits)
    return user


def grant_signup_credits(db: Session, user: User, credits: int | None = None) -> bool:
    """The welcome grant (default BAYES_SIGNUP_CREDITS); True when a row was written."""
    from bayes_app.credits import ledger
    from bayes_app.models import MICRO
    from bayes_app.settings import get_settings

    if credits is None:
        credits = get_settings().signup_credits
    if credits <= 0:
        return False
    return ledger.grant(db, user, credits * MICRO, f"signup:{user.id}", "Signup credits")


def authenticate(db: Session, email: str, password: str) -> User:
    """Return the user for these credentials or raise AccountError (401)."""
    try:
        email = normalize_email(email)
    except InvalidEmailError:
        email = ""
    user = db.exec(select(User).where(User.email == email)).first() if email else None
    if not verify_password(user.password_hash if user else dummy_hash(), password or "") or user is None:
        raise AccountError("invalid_credentials", "Wrong e-mail or password.", 401)
    return user


def change_password(db: Session, user_id: str, old_password: str, new_password: str) -> None:
    """Change a password after checking the old one; other browser sessions are signed out and
    every API token is revoked (a token minted with the old password must not outlive it)."""
    user = db.get(User, user_id)
    if user is None or not verify_password(user.password_hash, old_password or ""):
        raise AccountError("invalid_credentials", "The current password is wrong.", 401)
    _strong(new_password, user.email)
    if verify_password(user.password_hash, new_password):
        raise AccountError("same_password", "The new password must differ from the current one.")
    user.password_hash = hash_password(new_password)
    user.password_changed_at = utcnow()
    db.add(user)
    revoke_all_api_tokens(db, user_id)


def end_all_sessions(db: Session, user_id: str) -> int:
    """Revoke every live browser session of the user (this one too); returns how many."""
    now, n = utcnow(), 0
    for row in db.exec(
        select(UserSession).where(UserSession.user_id == user_id, col(UserSession.revoked_at).is_(None))
    ):
        row.revoked_at, n = now, n + 1
        db.add(row)
    return n


def revoke_all_api_tokens(db: Session, user_id: str) -> int:
    """Revoke every unrevoked API token of the user; returns how many."""
    now, n = utcnow(), 0
    for row in db.exec(select(ApiToken).where(ApiToken.user_id == user_id, col(ApiToken.revoked_at).is_(None))):
        row.revoked_at, n = now, n + 1
        db.add(row)
    return n


def create_session(db: Session, user: User, ttl: timedelta) -> str:
    """Start a browser session; returns the raw token to put in the cookie."""
    token = SESSION_PREFIX + secrets.token_urlsafe(32)
    db.add(UserSession(user_id=user.id, token_hash=_hash_token(token), expires_at=utcnow() + ttl))
    return token


def user_for_session(db: Session, token: str | None) -> User | None:
    """The user behind a live (unexpired, unrevoked) session token, else None."""
    if not token or not token.startswith(SESSION_PREFIX):
        return None
    row = db.exec(select(UserSession).where(UserSession.token_hash == _hash_token(token))).first()
    if row is None or row.revoked_at is not None or row.expires_at <= utcnow():
        return None
    user = db.get(User, row.user_id)
    # Sessions created before a password change are no longer valid.
    if user is None or row.created_at < user.password_changed_at:
        return None
    return user


def end_session(db: Session, token: str | None) -> None:
    """Revoke a browser session (logout). Unknown tokens are ignored."""
    if not token:
        return
    row = db.exec(select(UserSession).where(UserSession.token_hash == _hash_token(token))).first()
    if row is not None and row.revoked_at is None:
        row.revoked_at = utcnow()
        db.add(row)


def create_api_token(db: Session, user: User, ttl: timedelta, name: str = "api") -> tuple[ApiToken, str]:
    """Issue an API token; returns the row and the raw token (shown once)."""
    token = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(
        user_id=user.id,
        name=(name or "api")[:100],
        token_hash=_hash_token(token),
        expires_at=utcnow() + ttl,
    )
    db.add(row)
    db.flush()
    return row, token


def user_for_api_token(db: Session, token: str | None) -> tuple[User, ApiToken] | None:
    """Resolve a bearer token; None when unknown, revoked or expired."""
    if not token or not token.startswith(API_TOKEN_PREFIX):
        return None
    row = db.exec(select(ApiToken).where(ApiToken.token_hash == _hash_token(token))).first()
    now = utcnow()
    if row is None or row.revoked_at is not None or row.expires_at <= now:
        return None
    user = db.get(User, row.user_id)
    if user is None:
        return None
    if row.last_used_at is None or (now - row.last_used_at) > timedelta(minutes=1):
        row.last_used_at = now
        db.add(row)
    return user, row


def list_api_tokens(db: Session, user_id: str) -> list[ApiToken]:
    return list(db.exec(select(ApiToken).where(ApiToken.user_id == user_id).order_by(col(ApiToken.created_at).desc())))


def revoke_api_token(db: Session, user_id: str, token_id: str | None) -> None:
    """Revoke one of the user's tokens; another user's token id, or none (a session), is 'not found'."""
    row = db.get(ApiToken, token_id) if token_id is not None else None
    if row is None or row.user_id != user_id:
        raise AccountError("not_found", "No such token.", 404)
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        db.add(row)


def ensure_admin(db: Session, email: str, password: str | None) -> tuple[User, str | None]:
    """Create the admin account if missing. Returns (user, generated_password_or_None).

    An existing account is promoted to admin but its password is left alone unless
    BAYES_ADMIN_PASSWORD is given, in which case it is set to that value.
    """
    email = _email(email)
    user = db.exec(select(User).where(User.email == email)).first()
    generated = None
    if user is None:
        if password is None:
            password = generated = secrets.token_urlsafe(12)
        user = register(db, email, password, is_admin=True)
        return user, generated
    changed = False
    if not user.is_admin:
        user.is_admin, changed = True, True
    if password is not None and not verify_password(user.password_hash, password):
        user.password_hash = hash_password(password)
        user.password_changed_at = utcnow()
        changed = True
    if changed:
        db.add(user)
    return user, None
