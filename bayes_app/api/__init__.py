"""The HTTP API under /api/v1 (FastAPI), mounted into Reflex's server via `api_transformer`.

Each feature module lists its operations (`routes`, built with `routing.op`); `build_api`
turns them into documented FastAPI routes, serves the OpenAPI document at
`/api/v1/openapi.json` and Swagger UI at `/api/v1/docs` (assets from the `fastapi-swagger`
wheel, served from here: no CDN), and answers unknown paths with the JSON 404/405 contract.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic.json_schema import models_json_schema
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Match

from bayes_app.api import auth, citations, conversations, credits, library, maps, runs, session, system, zotero
from bayes_app.api.errors import (ApiError, handle_domain_error, handle_http_exception, handle_unexpected,
                                  handle_validation_error)
from bayes_app.api.routing import Op, api_route
from bayes_app.errors import DomainError

API_PREFIX = "/api/v1"
ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
TITLE = "Bayes API"
VERSION = "1"
DESCRIPTION = ("The Bayes research assistant's HTTP API: library, search, runs (Ask and map runs, "
               "streamed as server-sent events), mindmaps, conversations, credits, Zotero. "
               "Authenticate with `Authorization: Bearer <token>` (POST /auth/token) or the "
               "session cookie. Errors are `{\"error\": {\"code\", \"message\"}}`.")
FEATURES = {"System": system, "Session": session, "Tokens": auth, "Library": library, "Runs": runs,
            "Conversations": conversations, "Credits": credits, "Mindmaps": maps, "Citations": citations,
            "Zotero": zotero}


def _known_routes() -> list[Op]:
    return [o for module in FEATURES.values() for o in module.routes]


async def _unknown_route(request: Request):
    """404 for unknown paths; 405 (with Allow) when the path exists with other methods."""
    allowed: set[str] = set()
    for route in request.app.router.routes:
        if isinstance(route, APIRoute) and route.include_in_schema:
            match, _ = route.matches(request.scope)
            if match == Match.PARTIAL and route.methods:
                allowed |= route.methods
    if allowed:
        raise ApiError(405, "method_not_allowed", f"{request.method} is not allowed here.",
                       {"Allow": ", ".join(sorted(allowed))})
    raise ApiError(404, "not_found", f"No route {request.method} {request.url.path}.")


def _swagger_asset(name: str, media: str):
    from importlib.resources import files

    path = str(files("fastapi_swagger") / "resources" / name)

    async def asset(_request: Request) -> Response:
        return FileResponse(path, media_type=media, headers={"Cache-Control": "public, max-age=86400"})
    return asset


async def _docs(_request: Request) -> HTMLResponse:
    return get_swagger_ui_html(openapi_url=API_PREFIX + "/openapi.json", title=TITLE,
                               swagger_js_url=API_PREFIX + "/docs/swagger-ui-bundle.js",
                               swagger_css_url=API_PREFIX + "/docs/swagger-ui.css",
                               swagger_favicon_url="/favicon.ico")


def _openapi(app: FastAPI) -> dict:
    """FastAPI's document plus the request body schemas (the handlers read bodies themselves,
    so FastAPI does not see them: `routing` refers to them by name) and the two ways to
    authenticate."""
    if app.openapi_schema:
        return app.openapi_schema
    doc = get_openapi(title=TITLE, version=VERSION, description=DESCRIPTION, routes=app.routes)
    bodies = sorted({o.body for o in _known_routes() if o.body is not None}, key=lambda m: m.__name__)
    _, defs = models_json_schema([(m, "validation") for m in bodies], ref_template="#/components/schemas/{model}")
    components = doc.setdefault("components", {})
    components.setdefault("schemas", {}).update(defs.get("$defs", {}))
    components["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "An API token from POST /auth/token."},
        "session": {"type": "apiKey", "in": "cookie", "name": "bayes_session",
                    "description": "The browser session (state-changing requests must come from this origin)."},
    }
    app.openapi_schema = doc
    return doc


def build_api() -> FastAPI:
    """The FastAPI app holding /api/v1; Reflex mounts its own app under it. Wires the
    application layer to Dramatiq's queue (the web process's composition root)."""
    from bayes_app import registry
    from bayes_app.app import queue
    from jobs.queue import DramatiqQueue

    registry.register()
    queue.use(DramatiqQueue())
    app = FastAPI(title=TITLE, version=VERSION, openapi_url=API_PREFIX + "/openapi.json", docs_url=None,
                  redoc_url=None, swagger_ui_oauth2_redirect_url=None,
                  exception_handlers={DomainError: handle_domain_error, HTTPException: handle_http_exception,
                                      RequestValidationError: handle_validation_error, Exception: handle_unexpected})
    for tag, module in FEATURES.items():
        for o in module.routes:
            app.router.routes.append(api_route(o, API_PREFIX, tag))
    app.add_api_route(API_PREFIX + "/docs", _docs, methods=["GET"], include_in_schema=False)
    app.add_api_route(API_PREFIX + "/docs/swagger-ui-bundle.js", _swagger_asset("swagger-ui-bundle.js", "text/javascript"),
                      methods=["GET"], include_in_schema=False)
    app.add_api_route(API_PREFIX + "/docs/swagger-ui.css", _swagger_asset("swagger-ui.css", "text/css"),
                      methods=["GET"], include_in_schema=False)
    app.add_api_route(API_PREFIX + "/{path:path}", _unknown_route, methods=ALL_METHODS, include_in_schema=False)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app
