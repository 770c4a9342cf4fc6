"""The model layer: one streaming interface over any OpenAI-compatible endpoint or the
offline extractive provider. Pure domain code (no Reflex, database or broker)."""

from bayes_app.llm.factory import get_provider, is_offline
from bayes_app.llm.offline import OfflineProvider, Passage, format_passages, parse_passages
from bayes_app.llm.openai_provider import OpenAIProvider, RetryPolicy
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
