"""Password hashing (Argon2id via argon2-cffi), strength rules and e-mail normalisation."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from argon2 import Parameters, PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from email_validator import EmailNotValidError, validate_email

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 256
PASSWORD_RULES = (
    f"at least {MIN_PASSWORD_LENGTH} characters, not a common password, "
    "and not containing the name part of your e-mail address."
)
_COMMON = {
    "password",
    "password1",
    "password123",
    "1234567890",
    "qwertyuiop",
    "letmein123",
    "iloveyou12",
    "administrator",
    "changeme123",
    "welcome123",
    "0123456789",
}
_hasher = PasswordHasher()
# Each Argon2 computation takes ~64 MiB and a core for a moment: a burst of logins must queue
# here rather than run at once (which starved the web process). Sized by configure_hashing.
_slots = threading.BoundedSemaphore(2)
HASH_WAIT_S = 20.0


class HashingBusy(RuntimeError):
    """Too many password checks are queued; the caller should answer "try again"."""


def configure_hashing(concurrency: int, parameters: Parameters | None = None) -> None:
    """Set how many password hashes may be computed at the same time (per process), and, for
    tests only, cheaper Argon2 parameters for new hashes (a hash carries its own parameters, so
    any process verifies it at the cost it was made with)."""
    global _slots, _hasher
    _slots = threading.BoundedSemaphore(max(1, concurrency))
    if parameters is not None:
        _hasher = PasswordHasher.from_parameters(parameters)


@contextmanager
def _hashing_slot() -> Iterator[None]:
    slots = _slots
    if not slots.acquire(timeout=HASH_WAIT_S):
        raise HashingBusy("The server is busy checking passwords; try again in a moment.")
    try:
        yield
    finally:
        slots.release()


class WeakPasswordError(ValueError):
    """The password does not meet the strength rules; the message says which."""


class InvalidEmailError(ValueError):
    """The e-mail address is malformed."""


def normalize_email(email: str) -> str:
    """Validate an e-mail address (syntax only, no DNS) and return it lower-cased."""
    try:
        info = validate_email((email or "").strip(), check_deliverability=False, test_environment=True)
    except EmailNotValidError as err:
        raise InvalidEmailError(f"Not a valid e-mail address: {err}") from None
    return info.normalized.lower()


def check_password_strength(password: str, email: str | None = None) -> None:
    """Raise WeakPasswordError unless the password is long and not trivially guessable."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise WeakPasswordError(f"Password must be at least {MIN_PASSWORD_LENGTH} characters long.")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise WeakPasswordError(f"Password must be at most {MAX_PASSWORD_LENGTH} characters long.")
    if password.lower() in _COMMON:
        raise WeakPasswordError("This password is one of the most common passwords; choose one that is not.")
    if len(set(password)) < 4:
        raise WeakPasswordError("Password must use at least 4 different characters.")
    if email and email.split("@")[0].lower() in password.lower() and len(email.split("@")[0]) >= 4:
        raise WeakPasswordError("Password must not contain your e-mail name.")


def hash_password(password: str) -> str:
    with _hashing_slot():
        return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    """True when the password matches; never raises for a wrong password or bad hash."""
    with _hashing_slot():
        try:
            return _hasher.verify(password_hash, password)
        except (VerificationError, InvalidHashError):
            return False


@functools.cache
def dummy_hash() -> str:
    """A hash to verify against when the user does not exist, so timing does not reveal it
    (made on first need: most processes that import this never check a password)."""
    return _hasher.hash("dummy-password-for-timing")
