"""Health and identity routes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from bayes_app.api import responses as R
from bayes_app.api.deps import CurrentUser, StrictJSONRoute
from bayes_app.health import check_health

router = APIRouter(route_class=StrictJSONRoute)


@router.get("/health", response_model=R.Health, responses={503: {"model": R.Health, "description": "Degraded"}},
            summary="Health of the database, Redis, workers, index and processes (503 when degraded)")
async def health(response: Response) -> dict[str, Any]:
    report = await run_in_threadpool(check_health)
    response.status_code = 200 if report["status"] == "ok" else 503
    response.headers["Cache-Control"] = "no-store"
    return report


@router.get("/me", response_model=R.UserOut, summary="The signed-in user")
async def me(user: CurrentUser) -> dict[str, Any]:
    return user.to_json()
