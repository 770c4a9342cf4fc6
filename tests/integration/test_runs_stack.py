"""Runs through the whole app (`python -m bayes_app.cli run`: web + worker + Redis, the
scripted model server): start an Ask run over HTTP, follow its NDJSON stream to `done`,
read the credits."""

from __future__ import annotations

import json

import httpx
import pytest

from bayes_app.credits import ledger
from bayes_app.db import session_scope
from bayes_app.models import MICRO, User


@pytest.fixture
def api(app_stack):
    with httpx.Client(base_url=app_stack.url + "/api/v1", timeout=30) as c:
        yield c


def test_ask_run_through_the_app(api, make_user, app_db_url):
    from tests.conftest import APP_MODEL

    email, password = make_user()
    with session_scope(app_db_url) as db:
        user = db.query(User).filter(User.email == email).one()
        ledger.grant(db, user, 3 * MICRO, f"grant:{user.id}", "test")
    token = api.post("/auth/token", json={"email": email, "password": password}).json()["token"]
    h = {"Authorization": f"Bearer {token}"}
    res = api.post("/runs", json={"kind": "ask", "prompt": "What does the library say?"}, headers=h)
    assert res.status_code == 202, res.text
    run_id = res.json()["id"]
    with api.stream("GET", f"/runs/{run_id}/events?format=ndjson", headers=h) as stream:
        lines = [json.loads(x) for x in stream.iter_lines() if x]
    types = [x["type"] for x in lines]
    assert types[0] == "status"
    assert "metadata" in types
    assert types[-1] == "done"
    assert lines[-1]["data"]["status"] == "SUCCEEDED"
    run = api.get(f"/runs/{run_id}", headers=h).json()
    assert run["status"] == "SUCCEEDED"
    assert run["model"] == APP_MODEL
    credits = api.get("/credits", headers=h).json()
    assert credits["held"] == 0
    assert credits["balance"] == 3 * MICRO - run["charged_credits"]
