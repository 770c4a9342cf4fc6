"""Any OpenAI-compatible chat endpoint, through the `openai` SDK's `AsyncOpenAI`.

Retries are the SDK's own (429 / 408 / 409 / 5xx / connection errors / timeouts until the
response headers arrive; exponential backoff with jitter; `Retry-After` honoured) kept within
our `RetryPolicy`: a bound on the attempts and on the total wait of one call, which the SDK
alone does not give (it honours `Retry-After` up to 60 s on every attempt). `OpenAIStream`
adds the one case the SDK cannot see: a stream cut or stalled after its headers but before
its first token is opened again, within the same bounds. A half-streamed answer is never
replayed, and Stop (`aclose()` from another task) abandons a backoff at once.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpx  # noqa: F401  (before the SDK: it reads sys.modules["httpx"] on every request)
import httpx2
import openai
from openai import AsyncOpenAI

from bayes_app.llm.stream import ModelStream, collect
from bayes_app.llm.types import (
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
)

NO_KEY = "unused"  # local servers (vLLM, llama.cpp, Ollama) need no key; the SDK insists on one
_SECRETISH = re.compile(r"(Bearer\s+)\S+|\bsk-[A-Za-z0-9_\-]{6,}", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """The bounds of one call's retries before its first streamed token."""

    max_attempts: int = 4
    max_total_wait: float = 20.0  # seconds slept across all retries of one call
    base_delay: float = 0.5
    max_delay: float = 8.0

    def backoff(self, attempt: int, rng: Callable[[], float] = random.random) -> float:
        """Delay after failed attempt `attempt` (1-based): exponential, 50-100 % jitter."""
        raw = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return float(raw * (0.5 + 0.5 * rng()))


@dataclass(slots=True)
class _Budget:
    """What one call has spent of its `RetryPolicy` so far."""

    policy: RetryPolicy
    waited: float = 0.0
    retries: int = 0

    def remaining_wait(self) -> float:
        return max(0.0, self.policy.max_total_wait - self.waited)


# Set inside the task that runs one `create()` (see `OpenAIStream._create`), so each call's
# SDK retries draw on that call's budget only.
_budget: ContextVar[_Budget | None] = ContextVar("bayes_retry_budget", default=None)


class _BudgetedClient(AsyncOpenAI):
    """`AsyncOpenAI` whose own retries stay within the current call's `RetryPolicy`: a
    `Retry-After` longer than what is left of the total wait is not waited for (the error is
    returned at once), and every backoff is ours (exponential with 50–100 % jitter, at least the
    `Retry-After`) cut to what is left. The two hooks are the SDK's retry decision and delay;
    `tests/integration/test_llm_openai.py` pins their behaviour against the fake endpoint."""

    def _should_retry(self, response: httpx2.Response) -> bool:
        budget = _budget.get()
        if budget is not None:
            after = _retry_after_seconds(response.headers)
            if after is not None and after > budget.remaining_wait():
                return False
        return super()._should_retry(response)

    def _calculate_retry_timeout(
        self, remaining_retries: int, options: Any, response_headers: httpx2.Headers | None = None
    ) -> float:
        budget = _budget.get()
        if budget is None:
            return super()._calculate_retry_timeout(remaining_retries, options, response_headers)
        budget.retries += 1
        after = _retry_after_seconds(response_headers) if response_headers is not None else None
        delay = min(max(budget.policy.backoff(budget.retries), after or 0.0), budget.remaining_wait())
        budget.waited += delay
        return delay


class OpenAIProvider:
    """Chat completions against `base_url` (None = the SDK default / OPENAI_BASE_URL)."""

    name = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        max_tokens_param: str = "max_tokens",
        default_headers: dict[str, str] | None = None,
    ) -> None:
        self._api_key = api_key or NO_KEY
        self.retry = retry or RetryPolicy()
        # "max_completion_tokens" for OpenAI's reasoning models; most compatible servers take both.
        self.max_tokens_param = max_tokens_param
        self.client = _BudgetedClient(
            base_url=base_url,
            api_key=self._api_key,
            max_retries=self.retry.max_attempts - 1,
            timeout=openai.Timeout(read_timeout, connect=connect_timeout),
            default_headers=default_headers,
        )

    def __repr__(self) -> str:
        return f"OpenAIProvider(base_url={str(self.client.base_url)!r})"

    @property
    def endpoint(self) -> str:
        """The base URL (what structured-output support is remembered under)."""
        return str(self.client.base_url)

    def stream(self, request: ChatRequest) -> OpenAIStream:
        return OpenAIStream(self, request)

    async def complete(self, request: ChatRequest) -> Completion:
        return await collect(self.stream(request))

    async def aclose(self) -> None:
        await self.client.close()

    # ---- helpers used by OpenAIStream ------------------------------------------------------
    def params(self, request: ChatRequest) -> dict[str, Any]:
        p: dict[str, Any] = {
            "model": request.model,
            "messages": request.messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            p["tools"] = request.tools
        if request.tool_choice is not None:
            p["tool_choice"] = request.tool_choice
        if request.response_format is not None:
            p["response_format"] = request.response_format
        if request.temperature is not None:
            p["temperature"] = request.temperature
        extra = dict(request.extra_body or {})
        if request.max_tokens is not None:
            if self.max_tokens_param == "max_tokens":
                p["max_tokens"] = request.max_tokens
            else:
                extra[self.max_tokens_param] = request.max_tokens
        if extra:
            p["extra_body"] = extra
        return p

    def redact(self, text: str) -> str:
        if self._api_key and self._api_key != NO_KEY and len(self._api_key) >= 4:
            text = text.replace(self._api_key, "[redacted]")
        return _SECRETISH.sub(lambda m: (m.group(1) or "sk-") + "[redacted]", text)


@dataclass(slots=True)
class _ToolCallParts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _Decoder:
    """Turns SDK chunks into events; assembles tool calls from their fragments."""

    def __init__(self) -> None:
        self.calls: dict[int, _ToolCallParts] = {}
        self.flushed = False
        self.finish_reason: str | None = None
        self.usage: Any = None

    def feed(self, chunk: Any) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        for choice in chunk.choices or ():
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta is not None:
                reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
                if isinstance(reasoning, str) and reasoning:
                    out.append(ReasoningDelta(reasoning))
                if delta.content:
                    out.append(TextDelta(delta.content))
                out.extend(self._tool_call(tc) for tc in delta.tool_calls or ())
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
                out.extend(self.flush())
        return out

    def _tool_call(self, tc: Any) -> ToolCallDelta:
        """One fragment of a tool call, added to the call's parts."""
        parts = self.calls.setdefault(tc.index, _ToolCallParts())
        fn = tc.function
        if tc.id:
            parts.id = tc.id
        if fn is not None and fn.name and not parts.name:  # some servers repeat it
            parts.name = fn.name
        frag = (fn.arguments or "") if fn is not None else ""
        parts.arguments.append(frag)
        return ToolCallDelta(tc.index, parts.id or None, parts.name or None, frag)

    def flush(self) -> list[ToolCall]:
        if self.flushed:
            return []
        self.flushed = True
        return [
            ToolCall(id=p.id or f"call_{i}", name=p.name, arguments_json="".join(p.arguments))
            for i, p in sorted(self.calls.items())
        ]


class OpenAIStream(ModelStream):
    """One streamed chat completion (see the module docstring for retries)."""

    def __init__(self, provider: OpenAIProvider, request: ChatRequest) -> None:
        super().__init__(request)
        self._provider = provider
        self._sdk_stream: Any = None
        self._abort_event = asyncio.Event()
        self._budget = _Budget(provider.retry)
        self._opened = 0

    @property
    def attempts(self) -> int:
        """Requests sent so far: each opening plus the SDK's retries inside them."""
        return self._opened + self._budget.retries

    async def _abort(self) -> None:
        self._abort_event.set()
        if self._sdk_stream is not None:
            await self._sdk_stream.close()

    async def _events(self) -> AsyncIterator[StreamEvent]:
        params = self._provider.params(self.request)
        budget = self._budget
        emitted = False
        while True:
            decoder = _Decoder()
            try:
                self._sdk_stream = await self._open(params)
                async for chunk in self._sdk_stream:
                    for event in decoder.feed(chunk):
                        emitted = True
                        yield event
                break
            except openai.OpenAIError as err:
                error = self._to_provider_error(err, partial=emitted)
                # Only a stream that ended before its first token is opened again (the SDK
                # already retried what failed before the headers, and said no to the rest).
                reopen = self._sdk_stream is not None and not emitted and error.retryable
                if not reopen or self.attempts >= budget.policy.max_attempts or self._closing:
                    raise error from None
                delay = min(budget.policy.backoff(self.attempts), budget.remaining_wait())
                if delay <= 0.0:
                    raise error from None
                budget.waited += delay
                await self._wait(delay)
            finally:
                if self._sdk_stream is not None:
                    await self._sdk_stream.close()
                    self._sdk_stream = None
        for event in decoder.flush():
            yield event
        yield self._usage_event(decoder)
        yield Done(decoder.finish_reason)

    async def _create(self, params: dict[str, Any]) -> Any:
        """`create()` with the SDK's retries drawing on this call's budget (its own task, so
        the budget is seen by this call only)."""
        _budget.set(self._budget)
        left = self._budget.policy.max_attempts - self.attempts - 1
        client = self._provider.client
        if left != client.max_retries:
            client = client.with_options(max_retries=max(0, left))
        self._opened += 1
        return await client.chat.completions.create(**params)

    async def _open(self, params: dict[str, Any]) -> Any:
        """`create()`, abandoned at once (with any SDK backoff in it) when `aclose()` comes
        from another task before the endpoint has sent its response headers."""
        create = asyncio.ensure_future(self._create(params))
        aborted = asyncio.ensure_future(self._abort_event.wait())
        try:
            await asyncio.wait({create, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
            if not create.done():
                create.cancel()
                await asyncio.wait({create})  # let it close the connection; never swallows our cancel
        if self._abort_event.is_set():
            if not create.cancelled() and create.exception() is None:
                await create.result().close()
            raise ProviderError("unavailable", "stream closed before the response started", retryable=False)
        return create.result()

    async def _wait(self, delay: float) -> None:
        try:  # an aclose() from another task ends the backoff at once
            await asyncio.wait_for(self._abort_event.wait(), delay)
        except TimeoutError:
            return
        raise ProviderError("unavailable", "stream closed during retry backoff", retryable=False)

    def _usage_event(self, decoder: _Decoder) -> Usage:
        u = decoder.usage
        if u is None:
            return self.estimated_usage()
        details = getattr(u, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) or 0
        # The requested name, not the endpoint's echo (a dated snapshot): prices are keyed by it.
        return Usage(
            model=self.request.model,
            input_tokens=u.prompt_tokens or 0,
            cached_tokens=cached,
            output_tokens=u.completion_tokens or 0,
            estimated=False,
        )

    def _to_provider_error(self, err: openai.OpenAIError, partial: bool) -> ProviderError:
        redact = self._provider.redact
        if isinstance(err, openai.APIStatusError):
            status = err.status_code
            detail = redact(_status_detail(err))
            rid = f" (request id {err.request_id})" if err.request_id else ""
            msg = f"HTTP {status}: {detail}{rid}"
            if status == 429:
                return ProviderError("rate_limited", msg, True, status=status, partial=partial)
            if status in (401, 403):
                return ProviderError("auth", msg, False, status=status, partial=partial)
            if status == 408:
                return ProviderError("timeout", msg, True, status=status, partial=partial)
            if status >= 500:
                return ProviderError("unavailable", msg, True, status=status, partial=partial)
            return ProviderError("bad_request", msg, False, status=status, partial=partial)
        if isinstance(err, openai.APITimeoutError):
            return ProviderError("timeout", "the model endpoint timed out", True, partial=partial)
        if isinstance(err, openai.APIConnectionError):
            cause = type(err.__cause__).__name__ if err.__cause__ else "connection error"
            where = "mid-stream" if partial else "before the response"
            return ProviderError(
                "unavailable", f"connection to the model endpoint failed {where} ({cause})", True, partial=partial
            )
        if isinstance(err, openai.APIError):  # an error event inside the stream
            return ProviderError("unavailable", redact(f"stream error: {err.message}"), False, partial=partial)
        return ProviderError("bad_request", redact(f"{type(err).__name__}: {err}"), False, partial=partial)


def _status_detail(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])[:500]
    return (err.message or "")[:500]


def _retry_after_seconds(headers: httpx2.Headers | None) -> float | None:
    """Seconds from `retry-after-ms` / `retry-after` (seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None
