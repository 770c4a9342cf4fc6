"""Qdrant-shaped API errors of the index server (status, message) and engine-error mapping."""

from __future__ import annotations

# --------------------------------------------------------------------------- errors


class ApiError(Exception):
    """An error answered as Qdrant does: ``{"status": {"error": message}}`` with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad_input(message: str) -> ApiError:
    return ApiError(400, f"Wrong input: {message}")


def bad_request(message: str) -> ApiError:
    return ApiError(400, f"Bad request: {message}")


def not_found(message: str) -> ApiError:
    return ApiError(404, f"Not found: {message}")


def unsupported(what: str) -> ApiError:
    return bad_request(f"{what} is not supported by the Bayes index server (qdrant-edge)")


_INPUT_ERRORS = (
    "dimension error",
    "Not existing vector",
    "Wrong input",
    "Bad request",
    "Bad input",
    "No range index",
    "Please create",
    "not supported",
    "Format error",
)


def _engine_error(exc: Exception) -> ApiError:
    # The engine raises plain Exception; Qdrant answers these messages with 4xx.
    msg = str(exc)
    if msg.startswith("No point with id"):
        return not_found(msg)
    if isinstance(exc, (ValueError, TypeError, OverflowError, KeyError)) or any(s in msg for s in _INPUT_ERRORS):
        return bad_input(msg)
    return ApiError(500, f"Service internal error: {msg}")


class IndexLockedError(RuntimeError):
    """Another process owns the index directory."""
