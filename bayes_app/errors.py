"""The one error type of the domain and the use cases: a refusal the user can act on.

Each feature raises a subclass (`MapError`, `LibraryError`, `RunRequestError` …) carrying a
stable machine `code`, a readable `message` and a `status` hint in HTTP's terms. The front
doors translate it in one place each: `bayes_app.api.errors` (a JSON error with that status)
and `state.errors` (the message shown in the page).
"""

from __future__ import annotations


class DomainError(Exception):
    """A request the domain refuses; nothing was changed."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


class NotFound(DomainError):
    """The object does not exist or is someone else's (one answer for both: never reveal
    others' objects)."""

    def __init__(self, what: str = "resource") -> None:
        super().__init__("not_found", f"No such {what}.", 404)
        self.what = what
