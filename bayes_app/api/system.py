"""Health and identity routes."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bayes_app.api import responses as R
from bayes_app.api.routing import op
from bayes_app.api.deps import optional_user, require_user
from bayes_app.health import check_health, public_view


async def health(request: Request) -> Response:
    """Status for anyone; the components' details for an administrator (token or cookie)."""
    report = await run_in_threadpool(check_health)
    user = await optional_user(request)
    if user is None or not user.is_admin:
        report = public_view(report)
    return JSONResponse(report, status_code=200 if report["status"] == "ok" else 503,
                        headers={"Cache-Control": "no-store"})


async def me(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(user.to_json())


routes = [
    op("GET", "/health", health, "Health: the status; for administrators also the database, Redis, workers, index and processes (503 when degraded)", R.Health, public=True,
       also={503: R.Health}),
    op("GET", "/me", me, "The signed-in user", R.UserOut),
]
