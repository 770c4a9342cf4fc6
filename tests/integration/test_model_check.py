"""Check model connection (issue 37.5): one tiny request through the real `openai` client to the
scripted OpenAI-compatible server (tests/support/fake_openai.py), said in the user's words —
working, the key refused, nothing answering, no such model, offline — and the same over
`GET /api/v1/system/model-check` (administrators only), in-process over build_api."""

from __future__ import annotations

import uuid

import pytest
from sqlmodel import Session, select

from bayes_app.db import get_engine
from bayes_app.llm.check import check_model
from bayes_app.models import User
from bayes_app.settings import get_settings
from tests.support.fake_openai import FakeOpenAI, Script
from tests.support.procs import free_port


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def _settings(configure, **env: str):
    base = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": "", "BAYES_MODEL_DEFAULT": ""}
    configure(**{**base, **env})
    return get_settings()


def test_a_working_endpoint_answers(configure, fake):
    fake.script(Script.reply("OK"))
    got = check_model(_settings(configure, OPENAI_BASE_URL=fake.base_url, BAYES_MODEL_DEFAULT="local-7b"))
    assert got.ok, got
    assert got.outcome == "ok", got
    assert "The model answers" in got.message
    assert "local-7b" in got.message
    assert got.endpoint == fake.base_url
    [req] = fake.requests
    assert req["body"]["model"] == "local-7b"  # a tiny request
    assert req["body"]["max_tokens"] <= 5


def test_a_refused_key_is_said_as_such_and_the_key_never_shown(configure, fake):
    fake.script(Script.error(401, message="Incorrect API key provided"))
    s = _settings(configure, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-wrong-key-123456")
    got = check_model(s)
    assert not got.ok, got
    assert got.outcome == "refused_key", got
    assert "refused the key" in got.message
    assert "OPENAI_API_KEY" in got.message
    assert "sk-wrong-key-123456" not in got.message
    assert len(fake.requests) == 1  # no retries: the answer comes at once


def test_an_address_where_nothing_listens_is_unreachable(configure):
    url = f"http://127.0.0.1:{free_port()}/v1"
    got = check_model(_settings(configure, OPENAI_BASE_URL=url))
    assert not got.ok, got
    assert got.outcome == "unreachable", got
    assert "Nothing answers" in got.message
    assert url in got.message


def test_an_unknown_model_and_offline_mode_say_what_to_set(configure, fake):
    fake.script(Script.error(404, message="model 'nope' not found"))
    got = check_model(_settings(configure, OPENAI_BASE_URL=fake.base_url, BAYES_MODEL_DEFAULT="nope"))
    assert got.outcome == "no_model", got
    assert "BAYES_MODEL_DEFAULT" in got.message, got
    got = check_model(_settings(configure))
    assert not got.ok
    assert got.outcome == "offline"
    assert "offline mode" in got.message
    assert not fake.requests[1:]


def test_the_api_check_is_for_administrators(db_url, configure, redis_server, fake):
    from starlette.testclient import TestClient

    from bayes_app.api import build_api

    configure(DATABASE_URL=db_url, REDIS_URL=redis_server.url_db(11), OPENAI_BASE_URL=fake.base_url)
    with TestClient(build_api()) as api:
        email, password = f"m{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex
        assert api.post("/api/v1/session/register", json={"email": email, "password": password}).status_code == 201
        token = api.post("/api/v1/auth/token", json={"email": email, "password": password}).json()["token"]
        h = {"Authorization": f"Bearer {token}"}
        refused = api.get("/api/v1/system/model-check", headers=h)
        assert refused.status_code == 403
        assert set(refused.json()["error"]) == {"code", "message"}
        with Session(get_engine(db_url)) as db:
            user = db.exec(select(User).where(User.email == email)).one()
            user.is_admin = True
            db.add(user)
            db.commit()
        fake.script(Script.reply("OK"))
        r = api.get("/api/v1/system/model-check", headers=h)
        assert r.status_code == 200
        assert r.headers["cache-control"] == "no-store"
        body = r.json()
        assert body["ok"] is True
        assert body["outcome"] == "ok"
        assert body["endpoint"] == fake.base_url
        fake.script(Script.error(401))
        body = api.get("/api/v1/system/model-check", headers=h).json()
        assert body["ok"] is False
        assert "refused the key" in body["message"]
