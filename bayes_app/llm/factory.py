"""Which provider this installation uses: the configured endpoint, or offline mode."""

from __future__ import annotations

from typing import Any

from bayes_app.llm.offline import OfflineProvider
from bayes_app.llm.types import ChatProvider


def _plain(value: Any) -> str | None:
    if value is not None and hasattr(value, "get_secret_value"):  # pydantic SecretStr
        value = value.get_secret_value()
    return value or None


def _endpoint(base_url: Any, api_key: Any, settings: Any) -> tuple[str | None, str | None]:
    if base_url is None and api_key is None:
        if settings is None:
            from bayes_app.settings import get_settings

            settings = get_settings()
        base_url, api_key = settings.openai_base_url, settings.openai_api_key
    return _plain(base_url), _plain(api_key)


def is_offline(base_url: Any = None, api_key: Any = None, *, settings: Any = None) -> bool:
    """True when neither an endpoint nor a key is configured (the UI shows "offline mode").
    Without arguments, reads OPENAI_BASE_URL / OPENAI_API_KEY from `settings` (default: the
    process settings)."""
    url, key = _endpoint(base_url, api_key, settings)
    return url is None and key is None


def get_provider(base_url: Any = None, api_key: Any = None, *, settings: Any = None, **options: Any) -> ChatProvider:
    """`OpenAIProvider` when a base URL or an API key is configured, else `OfflineProvider`.
    `options` go to `OpenAIProvider` (retry policy, timeouts, ...)."""
    url, key = _endpoint(base_url, api_key, settings)
    if url is None and key is None:
        if settings is None:
            from bayes_app.settings import get_settings

            settings = get_settings()
        return OfflineProvider(word_delay_s=getattr(settings, "offline_word_delay_ms", 0) / 1000)
    from bayes_app.llm.openai_provider import OpenAIProvider  # the SDK: imported on first use

    return OpenAIProvider(url, key, **options)
