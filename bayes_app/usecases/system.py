"""System use cases: the health report (the components' details for an administrator only)
and the supervisor's processes for the admin page."""

from __future__ import annotations

from typing import Any

from bayes_app import health as health_checks
from bayes_app.usecases.schemas.accounts import Health


def health(is_admin: bool) -> Health:
    """The status ("ok" | "degraded"); the broken parts and each component's details only for
    an administrator (None otherwise)."""
    report = health_checks.check_health()
    return Health.model_validate(report if is_admin else health_checks.public_view(report))


def supervised_processes() -> dict[str, Any] | None:
    """The supervisor's programs and restarts (None when the app does not run under it)."""
    return health_checks.supervised_processes()
