"""Finding the account to share with, by e-mail (exact, after the same normalisation as login)."""

from __future__ import annotations

from sqlmodel import Session, select

from bayes_app.accounts.passwords import InvalidEmailError, normalize_email
from bayes_app.errors import DomainError, NotFound
from bayes_app.models import Role, User


class SharingError(DomainError):
    """A share that cannot be made (bad role, sharing with oneself …)."""


class UserNotFound(NotFound):
    def __init__(self) -> None:
        super().__init__("user")
        self.code, self.message = "user_not_found", "No account with this e-mail."


def user_by_email(db: Session, email: object) -> User:
    """The account with this e-mail; UserNotFound (404 `user_not_found`) otherwise."""
    if not isinstance(email, str):
        raise SharingError("bad_field", "The e-mail must be text.")
    try:
        canonical = normalize_email(email)
    except InvalidEmailError:
        raise UserNotFound() from None
    user = db.exec(select(User).where(User.email == canonical)).first()
    if user is None:
        raise UserNotFound()
    return user


def check_role(role: object, allowed: tuple[str, ...] = Role.GRANTABLE) -> str:
    """`role` when it may be granted; SharingError 400 `bad_role` otherwise."""
    if role not in allowed:
        raise SharingError("bad_role", f"The role must be one of: {', '.join(allowed)}.")
    return str(role)
