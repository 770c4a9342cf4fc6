"""Health, identity and model-check routes."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from bayes_app.api.deps import AdminUser, CurrentUser, StrictJSONRoute, optional_user
from bayes_app.usecases import schemas as R
from bayes_app.usecases import system

router = APIRouter(route_class=StrictJSONRoute)


@router.get(
    "/health",
    response_model=R.Health,
    response_model_exclude_none=True,  # without admin credentials: the status only
    responses={503: {"model": R.Health, "description": "Degraded"}},
    summary="Health: the status; for administrators also the database, Redis, workers, index and "
    "processes (503 when degraded)",
)
def health(request: Request, response: Response) -> R.Health:
    """Status for anyone; the components' details for an administrator (token or cookie)."""
    user = optional_user(request)
    report = system.health(user is not None and user.is_admin)
    response.status_code = 200 if report.status == "ok" else 503
    response.headers["Cache-Control"] = "no-store"
    return report


@router.get("/me", response_model=R.UserOut, summary="The signed-in user")
async def me(user: CurrentUser) -> R.UserOut:
    return user


@router.get(
    "/system/model-check",
    response_model=R.ModelCheck,
    summary="Check the model connection: one tiny request to the configured endpoint (administrators)",
)
def model_check(_admin: AdminUser, response: Response) -> R.ModelCheck:
    """Whether the configured model answers, and if not why, in words (200 either way)."""
    response.headers["Cache-Control"] = "no-store"
    return system.model_check()
