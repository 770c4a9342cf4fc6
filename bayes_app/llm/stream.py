"""`ModelStream`: the async iterator a provider's `stream()` returns.

It keeps what the caller needs when a stream ends early: the output received so far and
the usage (reported by the provider, or estimated from locally counted tokens).

Stopping a stream, either way closes the HTTP response at once:
- cancel the task that iterates it (the pending read is interrupted), or
- `await stream.aclose()` from any task (the iterating task then sees a normal end).
Use `async with provider.stream(req) as s:` so a stream is closed whatever happens.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Self

from bayes_app.llm.tokens import count_request_tokens, count_tokens
from bayes_app.llm.types import (
    ChatRequest,
    Completion,
    Done,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)


class ModelStream(ABC):
    """Events of one model response; subclasses implement `_events()` and `_abort()`."""

    usage_model: str | None = None  # the model name usage is booked under (default: the request's)

    def __init__(self, request: ChatRequest) -> None:
        self.request = request
        self.reported_usage: Usage | None = None
        self.finish_reason: str | None = None
        self._output: list[str] = []
        self._named: set[int] = set()
        self._prompt_tokens: int | None = None
        self._gen: AsyncIterator[StreamEvent] | None = None
        self._consumer: asyncio.Task[None] | None = None
        self._closing = False
        self._finished = False

    # ---- for subclasses ------------------------------------------------------------------
    @abstractmethod
    def _events(self) -> AsyncIterator[StreamEvent]:
        """The provider's raw event stream (an async generator)."""

    async def _abort(self) -> None:  # noqa: B027 - optional hook: a provider overrides it if it can interrupt
        """Interrupt an `_events()` step running in another task (close the transport)."""

    # ---- iteration -----------------------------------------------------------------------
    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._finished or self._closing:
            if not self._finished:
                await self.aclose()
            raise StopAsyncIteration
        if self._gen is None:
            self._gen = self._events()
        self._consumer = asyncio.current_task()
        try:
            event = await self._gen.__anext__()
        except StopAsyncIteration:
            self._finished = True
            raise
        except Exception:
            self._finished = True
            if self._closing:  # closed from another task: the interrupted read is not an error
                raise StopAsyncIteration from None
            raise
        except BaseException:  # cancelled: the generator has run its cleanup already
            self._finished = True
            raise
        finally:
            self._consumer = None
        self._observe(event)
        return event

    def _observe(self, event: StreamEvent) -> None:
        if isinstance(event, (TextDelta, ReasoningDelta)):
            self._output.append(event.text)
        elif isinstance(event, ToolCallDelta):
            if event.name and event.index not in self._named:
                self._named.add(event.index)
                self._output.append(event.name)
            self._output.append(event.arguments_fragment)
        elif isinstance(event, Usage) and not event.estimated:
            self.reported_usage = event
        elif isinstance(event, Done):
            self.finish_reason = event.finish_reason

    async def aclose(self) -> None:
        """Stop the stream now and release its connection (idempotent, any task)."""
        self._closing = True
        if self._finished or self._gen is None:
            self._finished = True
            return
        consumer = self._consumer
        if consumer is not None and consumer is not asyncio.current_task():
            await self._abort()
            return
        self._finished = True
        await self._gen.aclose()  # type: ignore[attr-defined]

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ---- usage ---------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._finished

    @property
    def output_text(self) -> str:
        """Everything received so far (text, reasoning, tool-call names and arguments)."""
        return "".join(self._output)

    def prompt_tokens(self) -> int:
        if self._prompt_tokens is None:
            self._prompt_tokens = count_request_tokens(self.request)
        return self._prompt_tokens

    def estimated_usage(self) -> Usage:
        """Prompt tokens counted locally + output tokens received so far, marked estimated."""
        return Usage(
            model=self.usage_model or self.request.model,
            input_tokens=self.prompt_tokens(),
            cached_tokens=0,
            output_tokens=count_tokens(self.output_text),
            estimated=True,
        )

    def final_usage(self) -> Usage:
        """What to record for this response: the provider's usage, else the estimate."""
        return self.reported_usage or self.estimated_usage()


async def collect(stream: ModelStream) -> Completion:
    """Read a whole stream into a `Completion`."""
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    usage: Usage | None = None
    async with stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                text.append(event.text)
            elif isinstance(event, ReasoningDelta):
                reasoning.append(event.text)
            elif isinstance(event, ToolCall):
                calls.append(event)
            elif isinstance(event, Usage):
                usage = event
    return Completion(
        text="".join(text),
        tool_calls=calls,
        usage=usage or stream.final_usage(),
        reasoning="".join(reasoning),
        finish_reason=stream.finish_reason,
    )
