"""The API's OpenAPI document: valid OpenAPI, every operation in it with its body, response
and credentials; and FastAPI's response validation that keeps it true."""

from __future__ import annotations

import uuid

import pytest
from openapi_spec_validator import validate
from starlette.testclient import TestClient


@pytest.fixture(scope="module")
def doc() -> dict:
    from bayes_app.api import build_api

    with TestClient(build_api()) as c:
        r = c.get("/api/v1/openapi.json")
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("application/json")
        return r.json()


def test_the_document_is_valid_openapi(doc):
    validate(doc)  # raises on any violation of the OpenAPI 3.1 schema (paths, refs, parameters)
    assert doc["info"]["title"] == "Bayes API"
    assert set(doc["components"]["securitySchemes"]) == {"bearer", "session"}


def test_every_route_of_the_app_is_in_the_document_with_its_methods(doc):
    from bayes_app.api import build_api, operations

    served: dict[str, set[str]] = {}
    for route in operations(build_api()):
        served.setdefault(route.path_format, set()).update(m.lower() for m in route.methods)
    documented = {path: set(item) for path, item in doc["paths"].items()}
    assert len(served) >= 45
    assert sum(map(len, served.values())) >= 60
    assert documented == served


def _operations() -> list:
    from bayes_app.api import build_api, operations

    return operations(build_api())


def test_every_operation_is_documented_with_its_contract(doc):
    """Summary, tag, the error answers, its body (typed or read by hand), its path parameters,
    its non-JSON media types, and credentials unless it is one of the public operations."""
    public = {
        ("GET", "/api/v1/health"),
        ("POST", "/api/v1/session/login"),
        ("POST", "/api/v1/session/register"),
        ("POST", "/api/v1/auth/token"),
    }
    routes = _operations()
    assert len(routes) >= 60
    schemas = doc["components"]["schemas"]
    for route in routes:
        (method,) = route.methods
        where = (method, route.path)
        operation = doc["paths"][route.path_format][method.lower()]
        assert operation["summary"], where
        assert operation["tags"], where
        assert {"4XX", "5XX"} <= set(operation["responses"]), where
        if route.body_field is not None or "requestBody" in (route.openapi_extra or {}):
            for media in operation["requestBody"]["content"].values():
                assert media["schema"]["$ref"].rsplit("/", 1)[1] in schemas, where
        else:
            assert "requestBody" not in operation, where
        if route.response_model is not None:
            content = operation["responses"][str(route.status_code or 200)]["content"]["application/json"]
            assert content["schema"], where
        names = {(p["in"], p["name"]) for p in operation.get("parameters", [])}
        assert {("path", n) for n in route.param_convertors} <= names, where
        assert ("security" in operation) != (where in public), where
    export = doc["paths"]["/api/v1/mindmaps/{map_id}/export.{fmt}"]["get"]["responses"]["200"]["content"]
    assert {"application/json", "text/markdown", "application/x-bibtex"} <= set(export)
    events = doc["paths"]["/api/v1/runs/{run_id}/events"]["get"]
    assert {"text/event-stream", "application/x-ndjson"} <= set(events["responses"]["200"]["content"])
    assert ("header", "Last-Event-ID") in {(p["in"], p["name"]) for p in events["parameters"]}
    upload = doc["paths"]["/api/v1/documents"]["post"]
    assert set(upload["requestBody"]["content"]) == {"multipart/form-data"}
    assert "200" in upload["responses"]
    # the fallback, the docs and their assets are not operations
    assert not [p for p in doc["paths"] if "{path}" in p or "/docs" in p]


def test_fastapi_validation_errors_keep_the_json_error_contract():
    """A parameter FastAPI itself validates is refused with our 400, not FastAPI's 422."""
    from fastapi.routing import APIRoute

    from bayes_app.api import build_api

    async def probe(k: int) -> dict:
        return {"k": k}

    app = build_api()
    app.router.routes.insert(0, APIRoute("/api/v1/probe", probe, methods=["GET"]))
    with TestClient(app) as c:
        assert c.get("/api/v1/probe?k=3").json() == {"k": 3}
        bad = c.get("/api/v1/probe?k=three")
        assert bad.status_code == 400
        assert bad.json()["error"]["code"] == "invalid"
        assert "query.k" in bad.json()["error"]["message"]
        missing = c.get("/api/v1/probe")
        assert missing.status_code == 400
        assert missing.json()["error"]["code"] == "missing_fields"


def test_unknown_paths_keep_the_json_404_and_405_contract():
    from bayes_app.api import build_api

    with TestClient(build_api()) as c:
        r = c.get("/api/v1/nowhere")
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "not_found"
        r = c.delete("/api/v1/me")
        assert r.status_code == 405
        assert r.headers["allow"] == "GET"
        assert r.json()["error"]["code"] == "method_not_allowed"


def test_a_response_that_does_not_match_its_model_is_a_500():
    """FastAPI validates every JSON answer against its route's response model: a handler that
    drifts from the document fails loudly (500 with the JSON error contract), never silently."""
    from fastapi.routing import APIRoute

    from bayes_app.api import build_api
    from bayes_app.usecases import schemas as R

    async def wrong() -> dict:
        return {"mindmaps": [{"id": "m1"}]}  # node_count, title … missing

    async def right() -> dict:
        return {"revision": 3, "extra": "dropped"}

    app = build_api()
    app.router.routes.insert(0, APIRoute("/api/v1/probe/wrong", wrong, methods=["GET"], response_model=R.MapList))
    app.router.routes.insert(0, APIRoute("/api/v1/probe/right", right, methods=["GET"], response_model=R.Revision))
    with TestClient(app, raise_server_exceptions=False) as c:
        bad = c.get("/api/v1/probe/wrong")
        assert bad.status_code == 500
        assert bad.json()["error"]["code"] == "internal_error"
        assert c.get("/api/v1/probe/right").json() == {"revision": 3}


def test_strict_json_bodies_are_read_before_fastapi_validates():
    """The routers' route class reads a typed JSON body strictly (bad_json for NaN, lone
    surrogates, non-objects; 413 past the bound) and FastAPI then validates the model."""
    from bayes_app.api import build_api
    from bayes_app.api.deps import MAX_JSON_BYTES

    with TestClient(build_api()) as c:
        for raw in (b'{"email": NaN}', b'{"email": "\\ud800", "password": "x"}', b"[1]", b"", b"{oops"):
            r = c.post("/api/v1/auth/token", content=raw, headers={"content-type": "application/json"})
            assert r.status_code == 400, raw
            assert r.json()["error"]["code"] == "bad_json", raw
        big = c.post("/api/v1/auth/token", content=b" " * (MAX_JSON_BYTES + 1))
        assert big.status_code == 413
        assert big.json()["error"]["code"] == "too_large"
        extra = c.post("/api/v1/auth/token", json={"email": "a@b.c", "password": "x", "admin": True})
        assert extra.status_code == 400
        assert "admin: unknown field" in extra.json()["error"]["message"]
        missing = c.post("/api/v1/auth/token", json={"email": "a@b.c"})
        assert missing.json()["error"] == {"code": "missing_fields", "message": "Missing field(s): password."}


def test_sign_in_forms_read_through_their_models(app_stack):
    """The session routes read forms and JSON objects through LoginForm, RegisterForm and
    PasswordForm: `confirm` is checked when sent, unknown fields are ignored."""
    import httpx

    api, email = app_stack.url + "/api/v1", f"forms-{uuid.uuid4().hex[:8]}@example.org"
    differ = httpx.post(
        f"{api}/session/register", json={"email": email, "password": "pw-0123456789", "confirm": "other-0123456789"}
    )
    assert differ.status_code == 400
    assert differ.json()["error"]["code"] == "passwords_differ"
    form = httpx.post(
        f"{api}/session/register", data={"email": email, "password": "pw-0123456789", "confirm": "other-0123456789"}
    )
    assert form.status_code == 303
    assert form.headers["location"].startswith("/register?error=passwords_differ")
    with httpx.Client(base_url=api) as c:
        made = c.post(
            "/session/register",
            json={"email": email, "password": "pw-0123456789", "confirm": "pw-0123456789", "extra": "ignored"},
        )
        assert made.status_code == 201
        assert made.json()["user"]["email"] == email
        change = {"old_password": "pw-0123456789", "new_password": "new-0123456789"}
        differ = c.post("/session/password", json=change | {"confirm": "nope"})
        assert differ.json()["error"]["code"] == "passwords_differ"
        assert c.post("/session/password", json=change).json() == {"changed": True}
    ok = httpx.post(
        f"{api}/session/login", data={"email": email, "password": "new-0123456789"}, params={"next": "/library"}
    )
    assert ok.status_code == 303
    assert ok.headers["location"] == "/library"


def test_swagger_ui_is_served_from_here():
    from bayes_app.api import build_api

    with TestClient(build_api()) as c:
        page = c.get("/api/v1/docs")
        assert page.status_code == 200
        assert "/api/v1/openapi.json" in page.text
        assert "cdn" not in page.text.lower()
        js = c.get("/api/v1/docs/swagger-ui-bundle.js")
        css = c.get("/api/v1/docs/swagger-ui.css")
        assert js.status_code == css.status_code == 200
        assert len(js.content) > 500_000
