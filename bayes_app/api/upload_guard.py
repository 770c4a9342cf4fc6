"""The page upload endpoint (`POST /_upload`, Reflex's, spooling multipart bodies to temp
files before any check of its own) behind the API upload's rules: no valid session cookie,
no body read (401); and reading stops at BAYES_MAX_UPLOAD_MB (413), also for a chunked body
without Content-Length."""

from __future__ import annotations

from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bayes_app.api.deps import SESSION_COOKIE, upload_limit
from bayes_app.api.errors import error_response
from bayes_app.settings import get_settings
from bayes_app.usecases import accounts


class _TooLarge(HTTPException):
    def __init__(self) -> None:
        super().__init__(413)


def _cookie(scope: Scope, name: str) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == b"cookie":
            try:
                jar = SimpleCookie(value.decode("latin-1"))
            except CookieError:
                continue
            if name in jar and jar[name].value:
                return jar[name].value
    return None


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", []):
        if key.lower() == b"content-length" and value.isdigit():
            return int(value)
    return None


def _limit_bytes() -> int:
    return upload_limit()  # the API upload routes' max_body_size too


class PageUploadGuard:
    """ASGI middleware for `POST <path>`: session first, then a bounded body."""

    def __init__(
        self,
        app: ASGIApp,
        path: str = "/_upload",
        session_user: Callable[[str], object | None] = accounts.session_user,
        limit_bytes: Callable[[], int] = _limit_bytes,
    ) -> None:
        self.app, self.path = app, path.rstrip("/")
        self.session_user, self.limit_bytes = session_user, limit_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        cookie = _cookie(scope, SESSION_COOKIE)
        if not cookie or await run_in_threadpool(self.session_user, cookie) is None:
            await error_response(401, "unauthorized", "Sign in to upload files.")(scope, receive, send)
            return
        limit = self.limit_bytes()
        too_large = error_response(
            413,
            "too_large",
            f"The upload is larger than the {get_settings().max_upload_mb}"
            " MB limit (BAYES_MAX_UPLOAD_MB); nothing was stored.",
        )
        length = _content_length(scope)
        if length is not None and length > limit:
            await too_large(scope, receive, send)
            return
        await self._bounded(scope, receive, send, limit, too_large)

    async def _bounded(self, scope: Scope, receive: Receive, send: Send, limit: int, too_large: ASGIApp) -> None:
        """The app, reading at most `limit` bytes of body: past it, the client gets `too_large`."""
        received, stopped, answered = 0, False, False

        async def bounded_receive() -> Message:
            nonlocal received, stopped
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    stopped = True
                    raise _TooLarge()
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal answered
            if not stopped:
                await send(message)
            elif not answered and message["type"] == "http.response.start":
                answered = True  # whatever the endpoint made of the stop, the client gets 413
                await too_large(scope, receive, send)

        try:
            await self.app(scope, bounded_receive, guarded_send)
        except _TooLarge:
            if not answered:
                answered = True
                await too_large(scope, receive, send)
