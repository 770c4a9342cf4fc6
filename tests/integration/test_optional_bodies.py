"""Every route whose body is optional (its model has a default: `POST …/proposals/{id}/accept`
with no body accepts the whole proposal) answers a request without a body as it answers `{}`,
never 400 `bad_json`. The routes come from the OpenAPI document, so a new one is covered."""

from __future__ import annotations

import re
import uuid

import pytest
from starlette.testclient import TestClient


@pytest.fixture
def client(tmp_path, configure):
    from bayes_app import db
    from bayes_app.api import build_api

    url = f"sqlite:///{tmp_path / 'bodies.db'}"
    db.migrate(url)
    configure(DATABASE_URL=url)
    with TestClient(build_api()) as c:
        email, password = f"b{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex
        assert c.post("/api/v1/session/register", json={"email": email, "password": password}).status_code == 201
        token = c.post("/api/v1/auth/token", json={"email": email, "password": password}).json()["token"]
        c.cookies.clear()
        c.headers["Authorization"] = f"Bearer {token}"
        yield c
    db.get_engine(url).dispose()


def optional_body_operations(doc: dict) -> list[tuple[str, str]]:
    return [
        (method, path)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if "requestBody" in op and not op["requestBody"].get("required", False)
    ]


def test_routes_with_an_optional_body_take_none(client):
    doc = client.get("/api/v1/openapi.json").json()
    ops = optional_body_operations(doc)
    assert ("post", "/api/v1/mindmaps/{map_id}/proposals/{proposal_id}/{decision}") in ops
    for method, path in ops:
        url = re.sub(r"\{decision\}", "accept", path)
        url = re.sub(r"\{[^}]+\}", "0" * 32, url)
        bare = client.request(method.upper(), url)
        empty = client.request(method.upper(), url, json={})
        assert bare.status_code == empty.status_code, (method, path, bare.text, empty.text)
        assert bare.json() == empty.json(), (method, path)
        assert bare.status_code not in (400, 413, 422), (method, path, bare.text)
