"""Does the configured model answer? One tiny chat request to the endpoint, through the same
`OpenAIProvider` (the real `openai` client) runs use, without retries, told in the user's words.

    check_model(settings=None) -> ModelCheck    blocking: call it in a thread
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Literal

from bayes_app.llm.openai_provider import OpenAIProvider, RetryPolicy
from bayes_app.llm.types import ChatRequest, ProviderError

Outcome = Literal["ok", "offline", "refused_key", "unreachable", "timeout", "no_model", "rate_limited", "error"]
CONNECT_TIMEOUT_S, READ_TIMEOUT_S = 5.0, 30.0
OPENAI_DEFAULT = "https://api.openai.com/v1"  # the SDK's endpoint when OPENAI_BASE_URL is unset


@dataclass(frozen=True)
class ModelCheck:
    """The check's outcome: `ok`, a machine-readable `outcome`, and `message` for the user."""

    ok: bool
    outcome: Outcome
    message: str
    endpoint: str | None  # the base URL called (never the key)
    model: str
    seconds: float = 0.0


def _plain(value: Any) -> str | None:
    if value is not None and hasattr(value, "get_secret_value"):
        value = value.get_secret_value()
    return value or None


def check_model(settings: Any = None) -> ModelCheck:
    """Send the default model a one-word request and say whether it works and, if not, why:
    offline mode (nothing configured), the key refused, nothing answering at the address, no
    answer in time, no such model on the server, rate-limited, or another error."""
    if settings is None:
        from bayes_app.settings import get_settings

        settings = get_settings()
    url, key = _plain(settings.openai_base_url), _plain(settings.openai_api_key)
    model = settings.model_default
    if url is None and key is None:
        return ModelCheck(
            False,
            "offline",
            "No model is connected: Bayes runs in offline mode (answers and maps quote your papers' own "
            "sentences). Set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server, and restart Bayes.",
            None,
            "offline",
        )
    where = url or OPENAI_DEFAULT
    provider = OpenAIProvider(
        url,
        key,
        retry=RetryPolicy(max_attempts=1),
        connect_timeout=CONNECT_TIMEOUT_S,
        read_timeout=READ_TIMEOUT_S,
    )
    request = ChatRequest(model=model, messages=[{"role": "user", "content": "Reply with the word OK."}], max_tokens=5)

    async def call() -> None:
        try:
            await provider.complete(request)
        finally:
            await provider.aclose()

    t0 = time.monotonic()
    try:
        asyncio.run(call())
    except ProviderError as err:
        return _failed(err, where, model, time.monotonic() - t0)
    took = time.monotonic() - t0
    return ModelCheck(True, "ok", f"The model answers: {model} at {where} replied in {took:.1f} s.", where, model, took)


def _failed(err: ProviderError, where: str, model: str, took: float) -> ModelCheck:
    detail = f" ({err.message})" if err.status else ""
    if err.code == "auth":
        outcome: Outcome = "refused_key"
        text = f"The server at {where} refused the key{detail}. Check OPENAI_API_KEY."
    elif err.code == "timeout":
        outcome, text = "timeout", f"{where} did not answer within {READ_TIMEOUT_S:.0f} seconds."
    elif err.code == "rate_limited":
        outcome = "rate_limited"
        text = f"The server at {where} accepted the request but is rate-limiting it{detail}; try again shortly."
    elif err.code == "unavailable" and err.status is None:
        outcome = "unreachable"
        text = f"Nothing answers at {where}. Is the server running, and is OPENAI_BASE_URL right?"
    elif err.status == 404:
        outcome = "no_model"
        text = (
            f"The server at {where} answers but has no model {model}{detail}. "
            "Set BAYES_MODEL_DEFAULT to a model it serves."
        )
    else:
        outcome, text = "error", f"The server at {where} answered with an error: {err.message}"
    return ModelCheck(False, outcome, text, where, model, took)
