"""The API's OpenAPI document: valid OpenAPI, every operation in it with its body, response
and credentials; and the response check that keeps it true (api/routing.py)."""

from __future__ import annotations

import asyncio

import pytest
from openapi_spec_validator import validate
from pydantic import TypeAdapter
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
        assert "4XX" in operation["responses"]
        if o.body is not None:
            ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert ref.rsplit("/", 1)[1] in schemas
        if o.response is not None and o.media is None:
            content = operation["responses"][str(o.status)]["content"]["application/json"]
            assert content["schema"], (o.method, o.path)
        assert ("security" in operation) != o.public, (o.method, o.path)
    # the fallback, the docs and their assets are not operations
    assert not [p for p in doc["paths"] if "{path}" in p or "/docs" in p]


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

    monkeypatch.setenv("BAYES_API_CHECK_RESPONSES", "1")
    get_settings.cache_clear()
    try:
        scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "query_string": b""}
        bad = routing.op("GET", "/x", wrong, "x", R.MapList)
        good = routing.op("GET", "/y", right, "y", R.Revision)
        out_bad = asyncio.run(routing._checked(bad, TypeAdapter(bad.response))(Request(scope)))
        out_good = asyncio.run(routing._checked(good, TypeAdapter(good.response))(Request(scope)))
    finally:
        get_settings.cache_clear()
    assert out_bad.status_code == 500 and b"GET /x" in out_bad.body
    assert out_good.status_code == 200


def test_swagger_ui_is_served_from_here():
    from bayes_app.api import build_api

    with TestClient(build_api()) as c:
        page = c.get("/api/v1/docs")
        assert page.status_code == 200 and "/api/v1/openapi.json" in page.text
        assert "cdn" not in page.text.lower()
        js = c.get("/api/v1/docs/swagger-ui-bundle.js")
        css = c.get("/api/v1/docs/swagger-ui.css")
        assert js.status_code == css.status_code == 200 and len(js.content) > 500_000
