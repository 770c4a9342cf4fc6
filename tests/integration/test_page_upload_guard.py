"""Issue 24.5: `POST /_upload` (the pages' upload endpoint) refuses a request without a valid
session cookie before reading its body, and stops reading at BAYES_MAX_UPLOAD_MB. The guard
wraps a real Starlette endpoint that spools multipart bodies as Reflex's does, with the real
session lookup on both database backends; `test_security_api` checks the wiring in the app."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from bayes_app.api.deps import MULTIPART_SLACK
from bayes_app.api.upload_guard import PageUploadGuard

MB = 1 << 20


class Spooler:
    """An endpoint that spools the whole multipart body to temp files, as Reflex's does; an
    ASGI app counting what it was given to read."""

    def __init__(self) -> None:
        self.calls = 0
        self.read = 0

        async def spool(request: Request) -> JSONResponse:
            self.calls += 1
            form = await request.form(max_files=1000)
            return JSONResponse({"files": len(form.getlist("files"))})

        self.app = Starlette(routes=[Route("/_upload", spool, methods=["POST"])])

    async def __call__(self, scope, receive, send) -> None:
        async def counting():
            message = await receive()
            self.read += len(message.get("body", b""))
            return message

        await self.app(scope, counting, send)


@pytest.fixture
def guarded(db_url, configure):
    from bayes_app.accounts import service
    from bayes_app.db import session_scope

    configure(DATABASE_URL=db_url, BAYES_MAX_UPLOAD_MB="1")
    with session_scope() as db:
        user = service.register(db, f"u{uuid.uuid4().hex[:8]}@example.com", "tangerine-sky-42")
        cookie = service.create_session(db, user, timedelta(hours=1))
    spooler = Spooler()
    return TestClient(PageUploadGuard(spooler, "/_upload")), spooler, cookie


def _body(total: int, piece: int = 64 * 1024):
    boundary = "b0undary"
    yield (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n%PDF-1.7\n"
    ).encode()
    sent = 0
    while sent < total:
        yield b"0" * piece
        sent += piece
    yield f"\r\n--{boundary}--\r\n".encode()


HEADERS = {"content-type": "multipart/form-data; boundary=b0undary"}


def test_no_or_a_stale_session_is_refused_before_the_body_is_read(guarded):
    client, spooler, _ = guarded
    for cookies in ({}, {"bayes_session": "not-a-session"}):
        client.cookies.clear()
        client.cookies.update(cookies)
        r = client.post("/_upload", content=_body(3 * MB), headers=HEADERS)
        assert r.status_code == 401
        assert r.json()["error"]["code"] == "unauthorized"
    assert spooler.calls == 0
    assert spooler.read == 0


def test_reading_stops_at_the_upload_limit(guarded):
    client, spooler, cookie = guarded
    client.cookies.set("bayes_session", cookie)
    r = client.post("/_upload", content=_body(int(1.5 * MB)), headers=HEADERS)  # chunked, no length
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "too_large"
    assert "BAYES_MAX_UPLOAD_MB" in r.json()["error"]["message"]
    assert spooler.read <= MB + MULTIPART_SLACK  # not a byte past the limit reached the endpoint
    declared = client.post("/_upload", content=b"x" * 10, headers=HEADERS | {"content-length": str(2 * MB)})
    assert declared.status_code == 413
    assert spooler.calls == 1  # refused on its Content-Length alone


def test_a_signed_in_upload_within_the_limit_goes_through(guarded):
    client, spooler, cookie = guarded
    client.cookies.set("bayes_session", cookie)
    r = client.post("/_upload", content=_body(512 * 1024), headers=HEADERS)
    assert r.status_code == 200
    assert r.json() == {"files": 1}
    assert client.get("/_upload").status_code == 405  # other methods and paths pass untouched
