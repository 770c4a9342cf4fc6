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


def test_one_body_limit_json_small_uploads_large(client):
    """FastAPI's max_body_size: 1 MB for every body (a chunked one is cut off too), the upload
    routes' own limit for PDFs; past either, 413 in the error contract before any use case runs."""
    from bayes_app.api.deps import MAX_JSON_BYTES, upload_limit
    from bayes_app.settings import get_settings

    def chunks(total: int):
        for _ in range(total // 65536 + 1):
            yield b" " * 65536

    big = client.post("/api/v1/mindmaps", content=chunks(MAX_JSON_BYTES), headers={"content-type": "application/json"})
    assert big.status_code == 413
    assert big.json()["error"]["code"] == "too_large"
    assert client.get("/api/v1/mindmaps").json()["mindmaps"] == []  # nothing stored
    notes = b"plain notes " * (MAX_JSON_BYTES // 10)  # over the JSON limit, within the upload limit
    r = client.post("/api/v1/documents", files={"file": ("a.pdf", notes, "application/pdf")})
    assert 400 <= r.status_code < 500, r.text
    assert r.status_code != 413, r.text  # read whole, refused as no PDF
    huge = client.post(
        "/api/v1/documents",
        content=b"x",
        headers={"content-type": "multipart/form-data; boundary=b", "content-length": str(upload_limit() + 1)},
    )
    assert huge.status_code == 413
    assert f"at most {get_settings().max_upload_mb} MB" in huge.json()["error"]["message"]
