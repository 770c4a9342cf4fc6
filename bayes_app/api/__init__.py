"""The HTTP API under /api/v1, mounted into Reflex's server via `api_transformer`."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.routing import Match, Mount, Route, Router

from bayes_app.api import auth, conversations, credits, library, maps, runs, session, system, zotero
from bayes_app.api.errors import ApiError, handle_domain_error, handle_http_exception, handle_unexpected
from bayes_app.errors import DomainError

API_PREFIX = "/api/v1"
ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


def _known_routes() -> list[Route]:
    return [*system.routes, *session.routes, *auth.routes, *library.routes, *runs.routes, *conversations.routes,
            *credits.routes, *maps.routes, *zotero.routes]


async def _unknown_route(request: Request):
    """404 for unknown paths; 405 (with Allow) when the path exists with other methods."""
    allowed: set[str] = set()
    for route in _known_routes():
        match, _ = route.matches(request.scope)
        if match == Match.PARTIAL and route.methods:
            allowed |= route.methods
    if allowed:
        raise ApiError(405, "method_not_allowed", f"{request.method} is not allowed here.",
                       {"Allow": ", ".join(sorted(allowed))})
    raise ApiError(404, "not_found", f"No route {request.method} {request.url.path}.")


def api_routes() -> list:
    """Every API route (relative to /api/v1), the unknown-route fallback last."""
    return [*_known_routes(), Route("/{path:path}", _unknown_route, methods=ALL_METHODS)]


def build_api() -> Starlette:
    """The Starlette app holding /api/v1; Reflex mounts its own app under it. Wires the
    application layer to Dramatiq's queue (the web process's composition root)."""
    from bayes_app import registry
    from bayes_app.app import queue
    from jobs.queue import DramatiqQueue

    registry.register()
    queue.use(DramatiqQueue())
    return Starlette(
        routes=[Mount(API_PREFIX, app=Router(routes=api_routes()))],
        exception_handlers={
            DomainError: handle_domain_error,
            HTTPException: handle_http_exception,
            Exception: handle_unexpected,
        },
    )
