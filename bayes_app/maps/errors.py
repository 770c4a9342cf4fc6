"""Errors of the maps domain (DomainErrors: 404 / 400 / 409)."""

from __future__ import annotations

from bayes_app.errors import DomainError, NotFound


class MapNotFound(NotFound, LookupError):
    """The map (or node, citation, proposal) does not exist or belongs to someone else."""

    def __init__(self, what: str = "mindmap") -> None:
        super().__init__(what)


class MapError(DomainError, ValueError):
    """A request the map cannot apply (bad input, forbidden move …); `code` is machine-readable."""
