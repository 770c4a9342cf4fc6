"""The use cases the HTTP API now only translates (issue 27), in-process over build_api on
SQLite and PostgreSQL with a real Redis: sign-in under the login throttle, password change,
admin credit grants validated once, and `POST /runs` dispatch."""

from __future__ import annotations

import uuid

import pytest
from sqlmodel import Session, select

from bayes_app.db import get_engine
from bayes_app.models import User


@pytest.fixture
def api(db_url, configure, redis_server):
    from starlette.testclient import TestClient

    from bayes_app.api import build_api

    configure(
        DATABASE_URL=db_url,
        REDIS_URL=redis_server.url_db(11),
        BAYES_LOGIN_MAX_FAILURES="2",
        BAYES_TRUSTED_PROXIES="testclient",
    )
    with TestClient(build_api()) as c:
        yield c


def _account(api) -> tuple[str, str]:
    email, password = f"d{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex
    assert api.post("/api/v1/session/register", json={"email": email, "password": password}).status_code == 201
    return email, password


def test_sign_in_is_throttled_per_client_and_a_password_change_renews_the_session(api):
    email, password = _account(api)
    attacker, owner = {"X-Forwarded-For": "203.0.113.7"}, {"X-Forwarded-For": "198.51.100.2"}
    for _ in range(2):
        wrong = api.post("/api/v1/auth/token", json={"email": email, "password": "wrong-password-1"}, headers=attacker)
        assert wrong.status_code == 401
    limited = api.post("/api/v1/auth/token", json={"email": email, "password": password}, headers=attacker)
    assert limited.status_code == 429
    assert int(limited.headers["retry-after"]) >= 1
    assert limited.json()["error"]["code"] == "rate_limited"
    form = api.post(
        "/api/v1/session/login",
        data={"email": email, "password": password},
        params={"next": "//evil.example"},
        headers=attacker,
        follow_redirects=False,
    )
    assert form.status_code == 303
    assert form.headers["location"].startswith("/login?error=rate_limited")
    # Issue 36.7: the owner, from another client, still signs in through both doors.
    token = api.post("/api/v1/auth/token", json={"email": email, "password": password}, headers=owner)
    assert token.status_code == 201
    assert token.json()["token"]
    page = api.post(
        "/api/v1/session/login",
        data={"email": email, "password": password},
        params={"next": "/library"},
        headers=owner,
        follow_redirects=False,
    )
    assert page.status_code == 303
    assert page.headers["location"] == "/library"


def test_password_change_and_open_redirect_guard(api):
    email, password = _account(api)
    api.cookies.clear()
    ok = api.post(
        "/api/v1/session/login",
        data={"email": email, "password": password},
        params={"next": "/\\evil.example"},
        follow_redirects=False,
    )
    assert ok.status_code == 303
    assert ok.headers["location"] == "/maps"
    changed = api.post("/api/v1/session/password", json={"old_password": password, "new_password": password + "x"})
    assert changed.json() == {"changed": True}
    api.cookies.clear()
    gone = api.post("/api/v1/session/password", json={"old_password": password, "new_password": password + "y"})
    assert gone.status_code == 401
    assert gone.json()["error"]["code"] == "unauthorized"


def test_grants_and_run_dispatch(api, db_url):
    admin_email, admin_password = _account(api)
    with Session(get_engine(db_url)) as db:
        admin = db.exec(select(User).where(User.email == admin_email)).one()
        admin.is_admin = True
        db.add(admin)
        db.commit()
    token = api.post("/api/v1/auth/token", json={"email": admin_email, "password": admin_password}).json()["token"]
    h = {"Authorization": f"Bearer {token}"}
    bad = api.post("/api/v1/admin/credits/grant", json={"email": admin_email, "credits": 1e-9}, headers=h)
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "bad_amount"
    body = {"email": admin_email, "credits": 2.5, "key": f"k-{uuid.uuid4().hex}"}
    first = api.post("/api/v1/admin/credits/grant", json=body, headers=h)
    again = api.post("/api/v1/admin/credits/grant", json=body, headers=h)
    assert first.status_code == again.status_code == 201
    assert first.json()["amount_micro"] == 2_500_000
    assert first.json()["created"]
    assert not again.json()["created"]
    missing = api.post("/api/v1/runs", json={"kind": "ask"}, headers=h)
    assert missing.status_code == 400
    assert missing.json()["error"]["code"] == "missing_fields"
    orphan = api.post("/api/v1/runs", json={"prompt": "q", "edit_message_id": "m1"}, headers=h)
    assert orphan.status_code == 400
    assert orphan.json()["error"]["code"] == "bad_request"
    no_map = api.post("/api/v1/runs", json={"kind": "expand", "mindmap_id": "nope"}, headers=h)
    assert no_map.status_code in (400, 404), no_map.text


class _RecordedIngestion:
    """The use cases' queue, recording ingestions: this process's Dramatiq broker points at the
    Redis of whichever test imported `jobs` first, which may be gone by now."""

    def __init__(self) -> None:
        self.ingested: list[tuple[str, int]] = []

    def ingest(self, document_id: str, generation: int) -> None:
        self.ingested.append((document_id, generation))


def test_upload_takes_an_ocr_language_and_refuses_an_unknown_one(api, db_url, monkeypatch):
    from bayes_app.models import Document
    from bayes_app.usecases import queue
    from tests.support import pdfs

    recorded = _RecordedIngestion()
    monkeypatch.setattr(queue, "_queue", recorded)
    email, password = _account(api)
    api.headers["Authorization"] = (
        "Bearer " + api.post("/api/v1/auth/token", json={"email": email, "password": password}).json()["token"]
    )
    pdf = pdfs.PASA.read_bytes()
    bad = api.post(
        "/api/v1/documents", files={"file": ("a.pdf", pdf, "application/pdf")}, data={"ocr_language": "klingon"}
    )
    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "bad_ocr_language"
    assert "deu, eng, fra" in bad.json()["error"]["message"]
    with Session(get_engine(db_url)) as db:
        assert db.exec(select(Document).where(Document.filename == "a.pdf")).first() is None
    ok = api.post("/api/v1/documents", files={"file": ("a.pdf", pdf, "application/pdf")}, data={"ocr_language": "deu"})
    assert ok.status_code == 202
    assert ok.json()["ocr_language_choice"] == "deu"
    assert api.get(f"/api/v1/documents/{ok.json()['id']}").json()["ocr_language_choice"] == "deu"
    assert [d for d, _ in recorded.ingested] == [ok.json()["id"]]  # queued once, the refused one never
    with Session(get_engine(db_url)) as db:
        assert db.get(Document, ok.json()["id"]).ocr_lang_choice == "deu"
