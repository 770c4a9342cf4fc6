"""One request-body limit for every route, API and page upload alike.

A multipart body (a PDF upload, `POST /api/v1/documents`, `PUT …/file`, the pages' `/_upload`)
may carry BAYES_MAX_UPLOAD_MB; any other body (JSON, a sign-in form) MAX_JSON_BYTES. A declared
Content-Length past the limit is answered 413 before the route runs; a body without one (chunked)
is counted as it streams in and refused the moment it passes the limit, so nothing past it is
ever read, spooled or parsed. The answer is the API's error contract: 413 `too_large`.
"""

from __future__ import annotations

from collections.abc import Collection

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bayes_app.api.errors import error_response
from bayes_app.settings import get_settings

MAX_JSON_BYTES = 1_000_000
MULTIPART_SLACK = 64 * 1024  # boundaries and part headers around the file itself


class _TooLarge(HTTPException):
    def __init__(self) -> None:
        super().__init__(413)


def _header(scope: Scope, name: bytes) -> bytes:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value
    return b""


def limit_of(scope: Scope) -> tuple[int, str]:
    """The body limit of a request (bytes) and the message that refuses it."""
    if _header(scope, b"content-type").lower().startswith(b"multipart/form-data"):
        mb = get_settings().max_upload_mb
        return (mb << 20) + MULTIPART_SLACK, (
            f"The upload is larger than the {mb} MB limit (BAYES_MAX_UPLOAD_MB); nothing was stored."
        )
    return MAX_JSON_BYTES, "Request body is too large."


class BodyLimit:
    """ASGI middleware: the body of every HTTP request (or of those to `paths`) within
    `limit_of` (else 413)."""

    def __init__(self, app: ASGIApp, paths: Collection[str] | None = None) -> None:
        self.app = app
        self.paths = None if paths is None else {p.rstrip("/") for p in paths}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (self.paths is not None and scope["path"].rstrip("/") not in self.paths):
            await self.app(scope, receive, send)
            return
        limit, message = limit_of(scope)
        too_large = error_response(413, "too_large", message)
        length = _header(scope, b"content-length")
        if length.isdigit() and int(length) > limit:
            await too_large(scope, receive, send)
            return
        received, stopped, answered = 0, False, False

        async def bounded_receive() -> Message:
            nonlocal received, stopped
            msg = await receive()
            if msg["type"] == "http.request":
                received += len(msg.get("body", b""))
                if received > limit:
                    stopped = True
                    raise _TooLarge()
            return msg

        async def guarded_send(msg: Message) -> None:
            nonlocal answered
            if not stopped:
                await send(msg)
            elif not answered and msg["type"] == "http.response.start":
                answered = True  # whatever the route made of the stop, the client gets 413
                await too_large(scope, receive, send)

        try:
            await self.app(scope, bounded_receive, guarded_send)
        except _TooLarge:
            if not answered:
                answered = True
                await too_large(scope, receive, send)
