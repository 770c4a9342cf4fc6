"""The page upload endpoint (`POST /_upload`, Reflex's, spooling multipart bodies to temp
files before any check of its own) behind the API upload's rules: no valid session cookie,
no body read (401). Its size is bounded by the one body limit (`body_limit.BodyLimit`, 413),
which `bayes_app.bayes_app` puts behind this guard."""

from __future__ import annotations

from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from bayes_app.api.deps import SESSION_COOKIE
from bayes_app.api.errors import error_response
from bayes_app.usecases import accounts


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


class PageUploadGuard:
    """ASGI middleware for `POST <path>`: a valid session, else 401 without reading the body."""

    def __init__(
        self,
        app: ASGIApp,
        path: str = "/_upload",
        session_user: Callable[[str], object | None] = accounts.session_user,
    ) -> None:
        self.app, self.path = app, path.rstrip("/")
        self.session_user = session_user

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        cookie = _cookie(scope, SESSION_COOKIE)
        if not cookie or await run_in_threadpool(self.session_user, cookie) is None:
            await error_response(401, "unauthorized", "Sign in to upload files.")(scope, receive, send)
            return
        await self.app(scope, receive, send)
