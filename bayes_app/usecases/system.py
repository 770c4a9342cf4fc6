"""System use cases: the health report (the components' details for an administrator only),
the supervisor's processes for the admin page, and the model connection check."""

from __future__ import annotations

from typing import Any

from bayes_app import health as health_checks
from bayes_app.llm import check
from bayes_app.usecases.schemas.accounts import Health, ModelCheck


def health(is_admin: bool) -> Health:
    """The status ("ok" | "degraded"); the broken parts and each component's details only for
    an administrator (None otherwise)."""
    report = health_checks.check_health()
    return Health.model_validate(report if is_admin else health_checks.public_view(report))


def supervised_processes() -> dict[str, Any] | None:
    """The supervisor's programs and restarts (None when the app does not run under it)."""
    return health_checks.supervised_processes()


def model_check() -> ModelCheck:
    """Whether the configured model answers a tiny request, in the user's words (blocking: up to
    the check's timeouts; front doors call it in a thread)."""
    return ModelCheck.model_validate(check.check_model(), from_attributes=True)


def model_setup() -> str:
    """How the model is configured, in words (never the key): for an admin's eyes only."""
    from bayes_app.settings import get_settings

    s = get_settings()
    if s.model_default == "offline":
        return "Offline mode: no model is configured (OPENAI_API_KEY or OPENAI_BASE_URL)."
    key = "a key" if s.openai_api_key and s.openai_api_key.get_secret_value() else "no key"
    where = s.openai_base_url or "OpenAI (https://api.openai.com/v1)"
    return f"Model {s.model_default} at {where}, with {key}."
