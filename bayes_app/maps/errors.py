"""Errors of the maps domain (the API maps them to 404 / 400 / 409)."""

from __future__ import annotations


class MapNotFound(LookupError):
    """The map (or node, citation, proposal) does not exist or belongs to someone else."""

    def __init__(self, what: str = "mindmap") -> None:
        super().__init__(f"No such {what}.")
        self.what = what


class MapError(ValueError):
    """A request the map cannot apply (bad input, forbidden move …); `code` is machine-readable."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status
