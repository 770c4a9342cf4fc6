"""Canonical forms of an e-mail address, for the two places where lookalikes matter.

- `login_key`: the key failed sign-ins are counted under: the address NFKC-normalised, then in
  the form sign-in looks the account up by (`passwords.normalize_email`: IDNA/UTS-46 domain),
  case-folded, so `user@ｔest.example.org` (full-width ｔ), `USER@test.example.org` and
  `user@test.example.org` share one counter. Text that is no valid address is NFKC-folded.
- `skeleton`: the Unicode TR39 confusable skeleton of that address (ICU's SpoofChecker), so
  `redb-а@…` (Cyrillic а) and `redb-a@…` compare equal and the second cannot be registered.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from icu import SpoofChecker

from bayes_app.accounts.passwords import InvalidEmailError, normalize_email


def canonical_email(email: str) -> str:
    """The address sign-in looks accounts up by, case-folded; InvalidEmailError if it is none."""
    return normalize_email(email).casefold()


def login_key(email: str) -> str:
    """The key the sign-in throttle counts `email`'s failures under (see the module docstring).
    NFKC is applied to the whole address first (sign-in applies it to the domain only), so the
    key never separates two spellings that sign-in would treat as one."""
    folded = unicodedata.normalize("NFKC", (email or "").strip())
    try:
        return canonical_email(folded)
    except InvalidEmailError:
        return folded.casefold()


@lru_cache(maxsize=1)
def _checker() -> SpoofChecker:
    return SpoofChecker()


def skeleton(email: str) -> str:
    """The TR39 skeleton of the canonical address: equal skeletons look alike."""
    return str(_checker().getSkeleton(0, canonical_email(email)))


def ascii_form(email: str) -> str:
    """`email` in ASCII only: the local part's other characters as `\\uXXXX`, the domain in
    punycode (`xn--…`), so two lookalike addresses never read the same on an admin page."""
    local, _, domain = email.rpartition("@")
    try:
        shown_domain = domain.encode("idna").decode("ascii")
    except UnicodeError:
        shown_domain = domain.encode("ascii", "backslashreplace").decode("ascii")
    return f"{local.encode('ascii', 'backslashreplace').decode('ascii')}@{shown_domain}"


def shown_email(email: str) -> str:
    """An address as admin pages show it: as is when ASCII, else followed by its ASCII form."""
    return email if email.isascii() else f"{email} ({ascii_form(email)})"
