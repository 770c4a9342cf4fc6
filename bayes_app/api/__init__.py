"""The HTTP API under /api/v1 (FastAPI), mounted into Reflex's server via `api_transformer`.

Each feature module holds one `APIRouter` (`router`) whose handlers take typed path, query
and body parameters and the caller as a dependency (`deps.CurrentUser`); `build_api`
includes them under /api/v1, translates every `DomainError` in one handler, serves the OpenAPI document at
`/api/v1/openapi.json` and Swagger UI at `/api/v1/docs` (assets from the `fastapi-swagger`
wheel, served from here: no CDN), and answers unknown paths with the JSON 404/405 contract.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

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

from bayes_app.api import (
    audits,
    auth,
    citations,
    conversations,
    credits,
    library,
    maps,
    runs,
    session,
    sharing,
    system,
    tables,
    zotero,
)
from bayes_app.api.deps import MAX_JSON_BYTES, documented_bodies
from bayes_app.api.errors import (
    ApiError,
    TooLargeAsContract,
    handle_domain_error,
    handle_http_exception,
    handle_unexpected,
    handle_validation_error,
)
from bayes_app.api.responses import ErrorOut
from bayes_app.errors import DomainError

API_PREFIX = "/api/v1"
ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
TITLE = "Bayes API"
VERSION = "1"
DESCRIPTION = (
    "The Bayes research assistant's HTTP API: library, search, runs (Ask and map runs, "
    "streamed as server-sent events), mindmaps, conversations, credits, Zotero. "
    "Authenticate with `Authorization: Bearer <token>` (POST /auth/token) or the "
    'session cookie. Errors are `{"error": {"code", "message"}}`.'
)
FEATURES = {
    "System": system,
    "Session": session,
    "Tokens": auth,
    "Library": library,
    "Runs": runs,
    "Conversations": conversations,
    "Credits": credits,
    "Mindmaps": maps,
    "Sharing": sharing,
    "Citations": citations,
    "Zotero": zotero,
    "Audits": audits,
    "Tables": tables,
}


ERRORS: dict[int | str, dict[str, Any]] = {
    "4XX": {"model": ErrorOut, "description": "Refused (the error says why)"},
    "5XX": {"model": ErrorOut, "description": "Failed on our side, or a service is unavailable"},
}


def _operation_id(route: APIRoute) -> str:
    """`get_mindmaps_map_id_nodes`: the method and the path's words (stable for clients)."""
    path = re.sub(r"\{(\w+)(?::\w+)?\}", r"\1", route.path_format.removeprefix(API_PREFIX))
    return sorted(route.methods or ())[0].lower() + re.sub(r"[^A-Za-z0-9]+", "_", path).rstrip("_")


def operations(app: FastAPI) -> list[APIRoute]:
    """Every documented operation of `app`, as routes carrying their full path (FastAPI keeps an
    included router's routes behind its inclusion; this lists them with the prefix applied)."""
    found: list[APIRoute] = []
    for route in app.router.routes:
        included = getattr(route, "original_router", None)
        if isinstance(route, APIRoute):
            found.append(route)
        elif included is not None:
            prefix = route.include_context.prefix  # type: ignore[attr-defined]
            for inner in included.routes:
                if isinstance(inner, APIRoute):
                    copy = APIRoute(
                        prefix + inner.path,
                        inner.endpoint,
                        methods=list(inner.methods or ()),
                        response_model=inner.response_model,
                        status_code=inner.status_code,
                        include_in_schema=inner.include_in_schema,
                        openapi_extra=inner.openapi_extra,
                    )
                    found.append(copy)
    return [r for r in found if r.include_in_schema]


async def _unknown_route(request: Request) -> Response:
    """404 for unknown paths; 405 (with Allow) when the path exists with other methods."""
    allowed: set[str] = set()
    for method in ALL_METHODS:
        scope = {**request.scope, "method": method}
        for route in request.app.router.routes:  # this API's operations only (Reflex is mounted here too)
            if getattr(route, "endpoint", None) is _unknown_route or not (
                isinstance(route, APIRoute) or hasattr(route, "original_router")
            ):
                continue
            match, _ = route.matches(scope)
            if match == Match.FULL:
                allowed.add(method)
                break
    if allowed:
        raise ApiError(
            405, "method_not_allowed", f"{request.method} is not allowed here.", {"Allow": ", ".join(sorted(allowed))}
        )
    raise ApiError(404, "not_found", f"No route {request.method} {request.url.path}.")


def _swagger_asset(name: str, media: str) -> Callable[[Request], Awaitable[Response]]:
    from importlib.resources import files

    path = str(files("fastapi_swagger") / "resources" / name)

    async def asset(_request: Request) -> Response:
        return FileResponse(path, media_type=media, headers={"Cache-Control": "public, max-age=86400"})

    return asset


async def _docs(_request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url=API_PREFIX + "/openapi.json",
        title=TITLE,
        swagger_js_url=API_PREFIX + "/docs/swagger-ui-bundle.js",
        swagger_css_url=API_PREFIX + "/docs/swagger-ui.css",
        swagger_favicon_url="/favicon.ico",
    )


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document plus the schemas of the bodies read by hand (sign-in forms posted as
    form or JSON, multipart uploads read within a bound), which `deps.read_by_hand` refers to."""
    if app.openapi_schema:
        return app.openapi_schema
    doc = get_openapi(title=TITLE, version=VERSION, description=DESCRIPTION, routes=app.routes)
    bodies = sorted(documented_bodies(), key=lambda m: m.__name__)
    _, defs = models_json_schema([(m, "validation") for m in bodies], ref_template="#/components/schemas/{model}")
    doc.setdefault("components", {}).setdefault("schemas", {}).update(defs.get("$defs", {}))
    app.openapi_schema = doc
    return doc


def build_api() -> FastAPI:
    """The FastAPI app holding /api/v1; Reflex mounts its own app under it. Wires the
    application layer to Dramatiq's queue (the web process's composition root)."""
    from bayes_app import registry
    from bayes_app.usecases import queue
    from jobs.queue import DramatiqQueue

    registry.register()
    queue.use(DramatiqQueue())
    app = FastAPI(
        title=TITLE,
        version=VERSION,
        openapi_url=API_PREFIX + "/openapi.json",
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        generate_unique_id_function=_operation_id,
        strict_content_type=False,
        exception_handlers={
            DomainError: handle_domain_error,
            HTTPException: handle_http_exception,
            RequestValidationError: handle_validation_error,
            Exception: handle_unexpected,
        },
    )
    for tag, module in FEATURES.items():
        # One body limit for every route (FastAPI's max_body_size; the upload routes declare a larger
        # one): 413 on a larger Content-Length, and reading stops once a chunked body passes it.
        app.include_router(module.router, prefix=API_PREFIX, tags=[tag], responses=ERRORS, max_body_size=MAX_JSON_BYTES)
    app.add_api_route(API_PREFIX + "/docs", _docs, methods=["GET"], include_in_schema=False)
    app.add_api_route(
        API_PREFIX + "/docs/swagger-ui-bundle.js",
        _swagger_asset("swagger-ui-bundle.js", "text/javascript"),
        methods=["GET"],
        include_in_schema=False,
    )
    app.add_api_route(
        API_PREFIX + "/docs/swagger-ui.css",
        _swagger_asset("swagger-ui.css", "text/css"),
        methods=["GET"],
        include_in_schema=False,
    )
    app.add_api_route(API_PREFIX + "/{path:path}", _unknown_route, methods=ALL_METHODS, include_in_schema=False)
    app.add_middleware(TooLargeAsContract)  # the route limiter's own 413 is plain text
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app
