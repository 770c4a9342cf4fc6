"""JSON errors for the HTTP API: {"error": {"code", "message"}} with a proper status."""

from __future__ import annotations

import logging

from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bayes_app.errors import DomainError, NotFound

log = logging.getLogger("bayes.api")

_DEFAULT_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    422: "invalid",
    429: "rate_limited",
    500: "internal_error",
    503: "unavailable",
}


class ApiError(DomainError):
    """An HTTP-only refusal (malformed body, wrong media type …), with optional headers."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(code, message, status)
        self.headers = headers


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def too_large() -> str:
    """The 413 message, in the user's words: the limits that apply, in MB."""
    from bayes_app.settings import get_settings

    mb = get_settings().max_upload_mb
    return f"The request is too large: a PDF may be at most {mb} MB and any other request 1 MB. Nothing was stored."


class TooLargeAsContract:
    """ASGI middleware: Starlette's body limit answers a too-large declared Content-Length with
    its own plain-text 413; clients get the JSON error contract instead."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        replaced = False

        async def contract_send(message: Message) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start" and message["status"] == 413:
                ctype = dict(message.get("headers", [])).get(b"content-type", b"")
                if not ctype.startswith(b"application/json"):
                    replaced = True
                    await error_response(413, "too_large", too_large())(scope, receive, send)
                    return
            if not replaced:
                await send(message)

        await self.app(scope, receive, contract_send)


def not_found(what: str = "resource") -> NotFound:
    """The one answer for both 'does not exist' and 'not yours' (never reveal others' objects)."""
    return NotFound(what)


async def handle_domain_error(_request: Request, exc: Exception) -> JSONResponse:
    """The one translation of the domain's refusals (and ApiError) into the JSON error contract."""
    assert isinstance(exc, DomainError)
    return error_response(exc.status, exc.code, exc.message, getattr(exc, "headers", None))


async def handle_http_exception(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = _DEFAULT_CODES.get(exc.status_code, "error")
    detail = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
    if exc.status_code == 413:  # the body limit (FastAPI's max_body_size): say which one
        detail = too_large()
    return error_response(exc.status_code, code, detail, getattr(exc, "headers", None))


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in (loc[1:] if loc[:1] == ("body",) else loc))


async def handle_validation_error(_request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's request validation (typed parameters and body models) answers with the JSON
    error contract, never FastAPI's 422 `{"detail": [...]}`: 400 `missing_fields` naming what
    is missing, else 400 `invalid` with the first few problems (unknown fields named)."""
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    missing = [_where(tuple(e.get("loc", ()))) or "body" for e in errors if e.get("type") == "missing"]
    if missing and len(missing) == len(errors):
        return error_response(400, "missing_fields", f"Missing field(s): {', '.join(missing)}.")
    parts = []
    for e in errors[:5]:
        where = _where(tuple(e.get("loc", ()))) or "body"
        msg = "unknown field" if e.get("type") == "extra_forbidden" else e.get("msg", "invalid")
        parts.append(f"{where}: {msg}")
    return error_response(400, "invalid", "; ".join(parts) + ".")


async def handle_unexpected(request: Request, _exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return error_response(500, "internal_error", "Something went wrong on our side.")
