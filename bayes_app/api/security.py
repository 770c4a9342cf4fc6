"""Site-wide HTTP protections, applied to pages, the API and the event socket alike.

- Security headers on every response: a Content-Security-Policy (script only from this
  origin plus the hashes of the inline scripts in our own compiled pages), `nosniff`,
  a referrer policy and `frame-ancestors 'self'`.
- Same-origin guard: a cookie-authenticated state-changing request (or the Reflex event
  socket) from another origin is refused with 403. Requests carrying `Authorization:
  Bearer` are exempt: a browser never attaches that header on its own.

CORS itself is Starlette's middleware, configured by Reflex from `BAYES_CORS_ORIGINS`
(see rxconfig.py); with no origins configured, no cross-origin read is ever allowed.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MAX_HTML_BYTES = 4 * 1024 * 1024
_INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script>", re.S | re.I)

# 'unsafe-eval': Reflex runs `rx.call_script` payloads (sent by our own server) with eval,
# and pdf.js compiles fonts with it; 'wasm-unsafe-eval': pdf.js decodes JPEG 2000 in wasm.
# No 'unsafe-inline' for scripts: injected markup can never run.
_PAGE_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-eval' 'wasm-unsafe-eval'{hashes}; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; "
    "connect-src 'self'; worker-src 'self' blob:; frame-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'self'"
)
API_POLICY = "default-src 'none'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'"
# A PDF opened directly is shown by the browser's own viewer, which a stricter policy breaks.
PDF_POLICY = "frame-ancestors 'self'"

COMMON_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"SAMEORIGIN"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


@lru_cache(maxsize=64)
def page_policy(html: bytes) -> str:
    """The CSP for one compiled page: its own inline scripts are allowed by hash, nothing else."""
    hashes = sorted(
        {
            "'sha256-" + base64.b64encode(hashlib.sha256(m.group(1)).digest()).decode() + "'"
            for m in _INLINE_SCRIPT.finditer(html)
        }
    )
    return _PAGE_POLICY.format(hashes="".join(" " + h for h in hashes))


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _client_ip(scope: Scope) -> str:
    client = scope.get("client")
    return client[0] if client else ""


def _host(scope: Scope, headers: dict[str, str], trusted_proxies: frozenset[str]) -> str:
    if _client_ip(scope) in trusted_proxies and headers.get("x-forwarded-host"):
        return headers["x-forwarded-host"].split(",")[0].strip().lower()
    return headers.get("host", "").lower()


def is_https(scope: Scope, trusted_proxies: Iterable[str]) -> bool:
    """True when the browser reached us over HTTPS (`X-Forwarded-Proto` only from a trusted proxy)."""
    if scope.get("scheme") in ("https", "wss"):
        return True
    headers = _headers(scope)
    proto = headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return _client_ip(scope) in set(trusted_proxies) and proto == "https"


def _origin_allowed(origin: str, host: str, allowed: frozenset[str]) -> bool:
    if origin.rstrip("/") in allowed:
        return True
    parts = urlsplit(origin)
    return bool(parts.netloc) and parts.scheme in ("http", "https") and parts.netloc.lower() == host


def same_origin_request(scope: Scope, allowed: frozenset[str], trusted_proxies: frozenset[str]) -> bool:
    """Whether a browser request comes from our own pages (or an allowed origin).

    Browsers send `Origin` on every cross-origin and every state-changing request; older ones
    send at least `Sec-Fetch-Site`. A request with neither comes from a non-browser client,
    which cannot borrow a user's cookie, so it passes.
    """
    headers = _headers(scope)
    origin = headers.get("origin")
    if origin and origin != "null":
        return _origin_allowed(origin, _host(scope, headers, trusted_proxies), allowed)
    if origin == "null":
        return False
    return headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")


class SecurityMiddleware:
    """ASGI middleware: security headers everywhere, same-origin guard on cookie requests."""

    def __init__(self, app: ASGIApp, allowed_origins: Iterable[str] = (), trusted_proxies: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = frozenset(o.rstrip("/") for o in allowed_origins)
        self.trusted = frozenset(trusted_proxies)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if not same_origin_request(scope, self.allowed, self.trusted):
                await send({"type": "websocket.close", "code": 1008})
                return
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        bearer = headers.get("authorization", "").lower().startswith("bearer ")
        if (
            scope["method"] not in SAFE_METHODS
            and not bearer
            and not same_origin_request(scope, self.allowed, self.trusted)
        ):
            await _forbidden(send)
            return
        await self.app(scope, receive, _HeaderSender(send))


async def _forbidden(send: Send) -> None:
    body = json.dumps(
        {"error": {"code": "cross_origin", "message": "Cross-origin requests with the session cookie are not allowed."}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *COMMON_HEADERS,
                (b"content-security-policy", API_POLICY.encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _HeaderSender:
    """Adds the headers to a response; buffers HTML pages to hash their inline scripts."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.start: Message | None = None
        self.chunks: list[bytes] = []
        self.size = 0

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in {h for h, _ in COMMON_HEADERS}]
            names = {k.lower() for k, _ in headers}
            ctype = {k.lower(): v for k, v in headers}.get(b"content-type", b"").lower()
            message = {**message, "headers": headers + list(COMMON_HEADERS)}
            if b"content-security-policy" in names or message.get("status") == 304:
                # a 304 refreshes the cached page's headers: it must not replace its policy
                await self.send(message)
            elif ctype.startswith(b"text/html"):
                self.start = message  # policy depends on the body
            else:
                policy = PDF_POLICY if ctype.startswith(b"application/pdf") else API_POLICY
                message["headers"].append((b"content-security-policy", policy.encode()))
                await self.send(message)
            return
        if message["type"] == "http.response.pathsend" and self.start is not None:
            # a static page sent zero-copy by the server: read it to hash its scripts
            with open(message["path"], "rb") as fh:
                message = {"type": "http.response.body", "body": fh.read(MAX_HTML_BYTES + 1)}
        if message["type"] == "http.response.body" and self.start is not None:
            self.chunks.append(message.get("body", b""))
            self.size += len(self.chunks[-1])
            if message.get("more_body", False) and self.size <= MAX_HTML_BYTES:
                return
            html = b"".join(self.chunks)
            start, self.start, self.chunks = self.start, None, []
            encoding = {k.lower(): v for k, v in start["headers"]}.get(b"content-encoding", b"")
            try:
                plain = gzip.decompress(html) if encoding.strip().lower() == b"gzip" else html
            except (OSError, EOFError):
                plain = b""
            start["headers"].append((b"content-security-policy", page_policy(plain).encode()))
            await self.send(start)
            await self.send({"type": "http.response.body", "body": html, "more_body": message.get("more_body", False)})
            return
        await self.send(message)
