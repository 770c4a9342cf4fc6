"""The model layer: one streaming interface over any OpenAI-compatible endpoint or the
offline extractive provider. Pure domain code (no Reflex, database or broker)."""

from typing import TYPE_CHECKING, Any

from bayes_app.llm.factory import get_provider, is_offline
from bayes_app.llm.offline import OfflineProvider, Passage, format_passages, parse_passages
from bayes_app.llm.stream import ModelStream
from bayes_app.llm.tokens import count_tokens
from bayes_app.llm.types import (
    ChatProvider,
    ChatRequest,
    Completion,
    Done,
    ProviderError,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    assistant_message,
    tool_message,
)

if TYPE_CHECKING:
    from bayes_app.llm.openai_provider import OpenAIProvider, RetryPolicy


def __getattr__(name: str) -> Any:
    # The `openai` SDK takes a second to import: a worker restarting after a crash settles
    # the lost runs first and imports it with its first run on an endpoint.
    if name in ("OpenAIProvider", "RetryPolicy"):
        from bayes_app.llm import openai_provider

        return getattr(openai_provider, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ChatProvider",
    "ChatRequest",
    "Completion",
    "Done",
    "ModelStream",
    "OfflineProvider",
    "OpenAIProvider",
    "Passage",
    "ProviderError",
    "ReasoningDelta",
    "RetryPolicy",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "Usage",
    "assistant_message",
    "count_tokens",
    "format_passages",
    "get_provider",
    "is_offline",
    "parse_passages",
    "tool_message",
]
