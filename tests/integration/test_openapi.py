"""The API's OpenAPI document: valid OpenAPI, every operation in it with its body, response
and credentials; and the response check that keeps it true (api/routing.py)."""

from __future__ import annotations

import asyncio
import inspect
import re
import uuid

import pytest
from openapi_spec_validator import validate
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.testclient import TestClient


@pytest.fixture(scope="module")
def doc() -> dict:
    from bayes_app.api import build_api

    with TestClient(build_api()) as c:
        r = c.get("/api/v1/openapi.json")
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        return r.json()


def test_the_document_is_valid_openapi(doc):
    validate(doc)  # raises on any violation of the OpenAPI 3.1 schema (paths, refs, parameters)
    assert doc["info"]["title"] == "Bayes API"
    assert set(doc["components"]["securitySchemes"]) == {"bearer", "session"}


def test_every_route_of_the_app_is_in_the_document_with_its_methods(doc):
    from fastapi.routing import APIRoute

    from bayes_app.api import build_api

    served = {}
    for route in build_api().routes:
        if isinstance(route, APIRoute) and route.include_in_schema:
            served.setdefault(route.path_format, set()).update(m.lower() for m in route.methods)
    documented = {path: set(item) for path, item in doc["paths"].items()}
    assert len(served) >= 45 and sum(map(len, served.values())) >= 60
    assert documented == served


def test_every_operation_is_documented_with_its_contract(doc):
    from bayes_app.api import _known_routes
    from bayes_app.api.routing import _PARAM

    ops = _known_routes()
    assert len(ops) >= 60
    schemas = doc["components"]["schemas"]
    for o in ops:
        path = "/api/v1" + _PARAM.sub(r"{\1}", o.path)
        operation = doc["paths"][path][o.method.lower()]
        assert operation["summary"] and operation["tags"], (o.method, o.path)
        assert {"4XX", "5XX"} <= set(operation["responses"])
        if o.body is not None:
            content = operation["requestBody"]["content"]
            assert set(content) == set(o.body_media), (o.method, o.path)
            for media in content.values():
                assert media["schema"]["$ref"].rsplit("/", 1)[1] in schemas
        else:
            assert "requestBody" not in operation, (o.method, o.path)
        for status, model in o.models().items():
            content = operation["responses"][str(status)]["content"]["application/json"]
            assert content["schema"], (o.method, o.path, status)
        for media in o.media:
            assert media in operation["responses"][str(o.status)]["content"], (o.method, o.path)
        names = {(p["in"], p["name"]) for p in operation.get("parameters", [])}
        assert {("path", n) for n in _PARAM.findall(o.path)} <= names
        if o.query is not None:
            assert len(names) == len(_PARAM.findall(o.path)) + len(o.query.model_fields)
        assert ("security" in operation) != o.public, (o.method, o.path)
    # the fallback, the docs and their assets are not operations
    assert not [p for p in doc["paths"] if "{path}" in p or "/docs" in p]


_READS_MODEL = re.compile(r"(?:read_model\(request, schemas\.(\w+)\)|schemas\.(\w+)\.model_validate)")
_READS_QUERY = re.compile(r"query_params\.(?:get|getlist)\(\"([\w-]+)\"")
_READS_HEADER = re.compile(r"headers\.get\(\"([\w-]+)\"")
_READS_PATH = re.compile(r"path_params\[\"(\w+)\"\]")
_TRANSPORT_HEADERS = {"content-type", "content-length", "authorization"}


def test_the_document_declares_what_each_handler_reads():
    """The declarations cannot drift from the code: the body model a handler validates, the
    query parameters and headers it reads and the path parameters it uses are the ones its
    operation declares (read from the handler's source)."""
    from bayes_app.api import _known_routes
    from bayes_app.api.routing import _PARAM
    from bayes_app.api.schemas import FileUpload

    for o in _known_routes():
        where = (o.method, o.path)
        source = inspect.getsource(o.handler)
        models = {a or b for a, b in _READS_MODEL.findall(source)}
        if o.body is not None and issubclass(o.body, FileUpload):
            assert "_upload_field(request)" in source and not models, where
            assert all(f in source for f in o.body.model_fields if f != "file"), where
        else:
            assert models == ({o.body.__name__} if o.body else set()), where
        fields = o.query.model_fields.items() if o.query else []
        declared = {(f.alias or n).lower(): (f.json_schema_extra or {}).get("in", "query") for n, f in fields}
        assert set(_READS_QUERY.findall(source)) == {n for n, w in declared.items() if w == "query"}, where
        headers = {h.lower() for h in _READS_HEADER.findall(source)} - _TRANSPORT_HEADERS
        assert headers == {n for n, w in declared.items() if w == "header"}, where
        assert set(_READS_PATH.findall(source)) <= set(_PARAM.findall(o.path)), where


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
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid"
        assert "query.k" in bad.json()["error"]["message"]
        missing = c.get("/api/v1/probe")
        assert missing.status_code == 400 and missing.json()["error"]["code"] == "missing_fields"


def test_unknown_paths_keep_the_json_404_and_405_contract():
    from bayes_app.api import build_api

    with TestClient(build_api()) as c:
        r = c.get("/api/v1/nowhere")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        r = c.delete("/api/v1/me")
        assert r.status_code == 405 and r.headers["allow"] == "GET"
        assert r.json()["error"]["code"] == "method_not_allowed"


def test_a_response_that_does_not_match_its_model_is_a_500(monkeypatch):
    from bayes_app.api import responses as R
    from bayes_app.api import routing
    from bayes_app.settings import get_settings

    async def wrong(_request: Request) -> JSONResponse:
        return JSONResponse({"mindmaps": [{"id": "m1"}]})  # node_count, title … missing

    async def right(_request: Request) -> JSONResponse:
        return JSONResponse({"revision": 3})

    async def accepted_wrong(_request: Request) -> JSONResponse:
        return JSONResponse({"revision": 3}, status_code=202)  # 202 is documented as a RunStarted

    async def accepted_right(_request: Request) -> JSONResponse:
        return JSONResponse({"run": {"id": "r1", "status": "queued"}}, status_code=202)

    monkeypatch.setenv("BAYES_API_CHECK_RESPONSES", "1")
    get_settings.cache_clear()
    try:
        scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "query_string": b""}

        def call(handler, response=R.Revision, **kw):
            return asyncio.run(routing._checked(routing.op("GET", "/x", handler, "x", response, **kw))(Request(scope)))

        out_bad, out_good = call(wrong, R.MapList), call(right)
        also = {202: R.SupportRun}
        out_202_bad, out_202_good = call(accepted_wrong, also=also), call(accepted_right, also=also)
    finally:
        get_settings.cache_clear()
    assert out_bad.status_code == 500 and b"GET /x" in out_bad.body
    assert out_good.status_code == 200
    assert out_202_bad.status_code == 500 and out_202_good.status_code == 202, out_202_good.body


def test_sign_in_forms_read_through_their_models(app_stack):
    """The session routes read forms and JSON objects through LoginForm, RegisterForm and
    PasswordForm: `confirm` is checked when sent, unknown fields are ignored."""
    import httpx

    api, email = app_stack.url + "/api/v1", f"forms-{uuid.uuid4().hex[:8]}@example.org"
    differ = httpx.post(f"{api}/session/register", json={"email": email, "password": "pw-0123456789",
                                                          "confirm": "other-0123456789"})
    assert differ.status_code == 400 and differ.json()["error"]["code"] == "passwords_differ"
    form = httpx.post(f"{api}/session/register", data={"email": email, "password": "pw-0123456789",
                                                        "confirm": "other-0123456789"})
    assert form.status_code == 303 and form.headers["location"].startswith("/register?error=passwords_differ")
    with httpx.Client(base_url=api) as c:
        made = c.post("/session/register", json={"email": email, "password": "pw-0123456789",
                                                 "confirm": "pw-0123456789", "extra": "ignored"})
        assert made.status_code == 201 and made.json()["user"]["email"] == email
        change = {"old_password": "pw-0123456789", "new_password": "new-0123456789"}
        assert c.post("/session/password", json=change | {"confirm": "nope"}).json()["error"]["code"] == "passwords_differ"
        assert c.post("/session/password", json=change).json() == {"changed": True}
    ok = httpx.post(f"{api}/session/login", data={"email": email, "password": "new-0123456789"},
                    params={"next": "/library"})
    assert ok.status_code == 303 and ok.headers["location"] == "/library"


def test_swagger_ui_is_served_from_here():
    from bayes_app.api import build_api

    with TestClient(build_api()) as c:
        page = c.get("/api/v1/docs")
        assert page.status_code == 200 and "/api/v1/openapi.json" in page.text
        assert "cdn" not in page.text.lower()
        js = c.get("/api/v1/docs/swagger-ui-bundle.js")
        css = c.get("/api/v1/docs/swagger-ui.css")
        assert js.status_code == css.status_code == 200 and len(js.content) > 500_000
