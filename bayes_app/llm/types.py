"""Provider-neutral request, stream events, results and errors of the model layer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from bayes_app.llm.stream import ModelStream

Message = dict[str, Any]  # an OpenAI chat message: {"role": ..., "content": ..., ...}


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat-completion call. `messages`, `tools`, `tool_choice` and `response_format`
    use the OpenAI wire format; `extra_body` is passed through to the endpoint."""

    model: str
    messages: list[Message]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    extra_body: dict[str, Any] | None = None


# ---- stream events -----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A raw fragment of a tool call as it streams in (informational; a `ToolCall`
    with the assembled arguments follows once the call is complete)."""

    index: int
    id: str | None
    name: str | None
    arguments_fragment: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments_json: str

    def arguments(self) -> Any:
        """The decoded arguments (`{}` for an empty string); raises ValueError on bad JSON."""
        return json.loads(self.arguments_json) if self.arguments_json.strip() else {}

    def to_wire(self) -> dict[str, Any]:
        """The call as it goes back into an assistant message's `tool_calls`."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments_json}}


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one model response. `estimated` is True when the provider reported none
    and the numbers were counted locally."""

    model: str
    input_tokens: int
    cached_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False


@dataclass(frozen=True, slots=True)
class Done:
    finish_reason: str | None


StreamEvent = TextDelta | ReasoningDelta | ToolCallDelta | ToolCall | Usage | Done


# ---- results ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Completion:
    """A whole response. Unpacks as `text, tool_calls, usage = await provider.complete(r)`."""

    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    reasoning: str = ""
    finish_reason: str | None = None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.text, self.tool_calls, self.usage))


def assistant_message(text: str, tool_calls: list[ToolCall] | None = None) -> Message:
    """The assistant turn to append to `messages` after a response."""
    msg: Message = {"role": "assistant", "content": text or None}
    if tool_calls:
        msg["tool_calls"] = [c.to_wire() for c in tool_calls]
    return msg


def tool_message(call_id: str, content: str) -> Message:
    """A tool result answering the call `call_id`."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


# ---- errors -------------------------------------------------------------------------------
ErrorCode = Literal["rate_limited", "unavailable", "bad_request", "auth", "timeout"]


class ProviderError(Exception):
    """A model call failed. `retryable` says whether a new call may succeed; `partial`
    that output had already been streamed to the caller (it is never replayed)."""

    def __init__(
        self, code: ErrorCode, message: str, retryable: bool, *, status: int | None = None, partial: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.status = status
        self.partial = partial

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"ProviderError(code={self.code!r}, message={self.message!r}, "
            f"retryable={self.retryable!r}, status={self.status!r}, partial={self.partial!r})"
        )


# ---- the interface ------------------------------------------------------------------------
class ChatProvider(Protocol):
    """What the agents and the run loop talk to (OpenAI-compatible or offline)."""

    name: str

    def stream(self, request: ChatRequest) -> ModelStream:
        """Start a streamed response; iterate it (`async for`) and close it (`async with`)."""
        ...

    async def complete(self, request: ChatRequest) -> Completion: ...

    async def aclose(self) -> None: ...
