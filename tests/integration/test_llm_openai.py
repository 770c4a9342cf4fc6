"""The real `openai` client (through OpenAIProvider) against the scripted fake server."""

from __future__ import annotations

import asyncio
import json
import time
import traceback

import httpx
import openai
import pytest

from bayes_app.llm import (
    ChatRequest,
    Done,
    OpenAIProvider,
    ProviderError,
    ReasoningDelta,
    RetryPolicy,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from bayes_app.llm.tokens import count_tokens
from tests.support.fake_openai import FakeOpenAI, FakeOpenAIProcess, Script, ToolCallScript

API_KEY = "sk-test-SECRET-0123456789abcdef"
FAST_RETRY = RetryPolicy(max_attempts=4, max_total_wait=5.0, base_delay=0.02, max_delay=0.1)


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI() as srv:
        yield srv


@pytest.fixture
def fake(server):
    server.reset()
    yield server
    server.reset()


def request(text: str = "What does the library say?", **kw) -> ChatRequest:
    return ChatRequest(
        model="test-model",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}],
        **kw,
    )


def provider(fake, **kw) -> OpenAIProvider:
    kw.setdefault("retry", FAST_RETRY)
    return OpenAIProvider(fake.base_url, API_KEY, **kw)


async def drain(p: OpenAIProvider, req: ChatRequest) -> tuple[list, object]:
    events = []
    try:
        async with p.stream(req) as s:
            async for ev in s:
                events.append(ev)
    finally:
        await p.aclose()
    return events, s


def test_text_and_reported_usage(fake):
    fake.script(Script.reply("The answer is forty two.", prompt_tokens=31, completion_tokens=6, cached_tokens=12))
    events, stream = asyncio.run(drain(provider(fake), request(temperature=0.2, max_tokens=50)))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The answer is forty two."
    assert len([e for e in events if isinstance(e, TextDelta)]) == 5
    usage = Usage("test-model", input_tokens=31, cached_tokens=12, output_tokens=6, estimated=False)
    assert events[-2:] == [usage, Done("stop")]
    assert stream.final_usage() == usage
    assert stream.attempts == 1

    [rec] = fake.chat_requests()
    assert rec["body"]["stream"] is True
    assert rec["body"]["stream_options"] == {"include_usage": True}
    assert rec["body"]["max_tokens"] == 50
    assert rec["body"]["temperature"] == 0.2
    assert rec["headers"]["authorization"] == f"Bearer {API_KEY}"
    assert rec["completed"]
    assert not rec["disconnected"]


def test_reasoning_deltas(fake):
    fake.script(Script(reasoning="First think it through.", text="Done."))
    events, _ = asyncio.run(drain(provider(fake), request()))
    reasoning = [e.text for e in events if isinstance(e, ReasoningDelta)]
    assert "".join(reasoning) == "First think it through."
    assert len(reasoning) == 4
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert all(isinstance(e, ReasoningDelta) for e in events[:first_text])


def test_tool_calls_assembled_from_fragments(fake):
    fake.script(
        Script(
            tool_calls=[
                ToolCallScript(
                    "search_knowledge_base", {"query": "sleep and insulin", "top_k": 7}, id="call_a", fragments=5
                ),
                ToolCallScript("calculator", '{"expression": "2*(3+4)"}', id="call_b", fragments=3),
            ]
        )
    )
    req = request(
        tools=[{"type": "function", "function": {"name": "search_knowledge_base", "parameters": {}}}],
        tool_choice="auto",
    )
    events, stream = asyncio.run(drain(provider(fake), req))
    fragments = [e for e in events if isinstance(e, ToolCallDelta)]
    assert len(fragments) == 1 + 5 + 1 + 3
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls == [
        ToolCall("call_a", "search_knowledge_base", '{"query": "sleep and insulin", "top_k": 7}'),
        ToolCall("call_b", "calculator", '{"expression": "2*(3+4)"}'),
    ]
    assert calls[0].arguments() == {"query": "sleep and insulin", "top_k": 7}
    assert events.index(calls[-1]) > events.index(fragments[-1])
    assert events[-1] == Done("tool_calls")
    assert stream.finish_reason == "tool_calls"
    assert fake.chat_requests()[0]["body"]["tools"][0]["function"]["name"] == "search_knowledge_base"


def test_complete_convenience(fake):
    fake.script(Script(reasoning="hmm", text="Short answer.", tool_calls=[ToolCallScript("calculator", "{}")]))

    async def go():
        p = provider(fake)
        try:
            return await p.complete(request())
        finally:
            await p.aclose()

    comp = asyncio.run(go())
    text, calls, usage = comp
    assert text == "Short answer."
    assert comp.reasoning == "hmm"
    assert [c.name for c in calls] == ["calculator"]
    assert not usage.estimated
    assert comp.finish_reason == "tool_calls"


def test_429_then_success_honours_retry_after(fake):
    fake.script(Script.error(429, retry_after=1, message="slow down"), Script.reply("ok now"))
    t0 = time.monotonic()
    events, stream = asyncio.run(drain(provider(fake), request()))
    elapsed = time.monotonic() - t0
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "ok now"
    assert stream.attempts == 2
    assert len(fake.chat_requests()) == 2
    assert 1.0 <= elapsed < 2.0  # waited for Retry-After, not the (tiny) backoff


def test_the_sdk_retries_within_our_budget(fake):
    """The retries are the SDK's own (it numbers them in a header), with our backoff bound."""
    fake.script(Script.error(503), Script.error(429, retry_after="0.2"), Script.reply("third time"))
    t0 = time.monotonic()
    events, stream = asyncio.run(drain(provider(fake), request()))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "third time"
    assert [r["headers"].get("x-stainless-retry-count") for r in fake.chat_requests()] == ["0", "1", "2"]
    assert stream.attempts == 3
    assert 0.2 <= time.monotonic() - t0 < 1.5


def test_aclose_during_the_sdk_backoff_ends_it_at_once(fake):
    """Stop while the SDK waits out a Retry-After: no second request, the consumer ends now."""
    fake.script(Script.error(429, retry_after="8"), Script.reply("never asked for"))

    async def go():
        p = provider(fake, retry=RetryPolicy(max_total_wait=20.0))
        s = p.stream(request())

        async def consume():
            return [ev async for ev in s]

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.4)  # the 429 is in; the SDK is sleeping
        t0 = time.monotonic()
        await s.aclose()
        events = await asyncio.wait_for(task, 1)  # ends normally, as any Stop does
        latency = time.monotonic() - t0
        await p.aclose()
        return latency, events, s

    latency, events, stream = asyncio.run(go())
    assert latency < 0.3
    assert events == []
    assert stream.closed
    time.sleep(0.2)
    assert len(fake.chat_requests()) == 1


def test_retry_after_beyond_the_budget_fails_at_once(fake):
    fake.script(Script.error(429, retry_after=30))
    t0 = time.monotonic()
    with pytest.raises(ProviderError) as exc:
        asyncio.run(drain(provider(fake, retry=RetryPolicy(max_total_wait=2.0)), request()))
    assert time.monotonic() - t0 < 1.0
    assert exc.value.code == "rate_limited"
    assert exc.value.retryable
    assert exc.value.status == 429
    assert len(fake.chat_requests()) == 1


def test_5xx_retried_then_bounded(fake):
    fake.script(Script.error(500, times=10))
    t0 = time.monotonic()
    with pytest.raises(ProviderError) as exc:
        asyncio.run(drain(provider(fake, retry=RetryPolicy(max_attempts=3, base_delay=0.05, max_delay=1)), request()))
    assert time.monotonic() - t0 < 1.5
    assert exc.value.code == "unavailable"
    assert exc.value.retryable
    assert exc.value.status == 500
    assert not exc.value.partial
    assert len(fake.chat_requests()) == 3

    fake.reset()
    fake.script(Script.error(503), Script.error(502), Script.reply("recovered"))
    events, stream = asyncio.run(drain(provider(fake), request()))
    assert stream.attempts == 3
    assert isinstance(events[-1], Done)


def test_client_errors_are_not_retried(fake):
    fake.script(Script.error(400, message="unknown model"), Script.error(404))
    errors = []
    for _ in range(2):
        with pytest.raises(ProviderError) as exc:
            asyncio.run(drain(provider(fake), request()))
        errors.append(exc.value)
    assert [(e.code, e.status, e.retryable) for e in errors] == [
        ("bad_request", 400, False),
        ("bad_request", 404, False),
    ]
    assert "unknown model" in str(errors[0])
    assert len(fake.chat_requests()) == 2


def test_stream_cut_without_usage_gives_estimated_usage(fake):
    fake.script(Script.reply("one two three four five six seven eight", cut_after=4))

    async def go():
        p = provider(fake)
        got = []
        s = p.stream(request())
        with pytest.raises(ProviderError) as exc:  # noqa: PT012 - it fails mid-stream, after the events it keeps
            async with s:
                async for ev in s:
                    got.append(ev)
        await p.aclose()
        return got, s, exc.value

    got, stream, err = asyncio.run(go())
    assert [e.text for e in got] == ["one ", "two ", "three ", "four "]
    assert err.code == "unavailable"
    assert err.partial
    assert "mid-stream" in err.message
    assert stream.attempts == 1
    assert len(fake.chat_requests()) == 1  # never replayed
    usage = stream.final_usage()
    assert usage.estimated
    assert usage.output_tokens == count_tokens("one two three four ")
    assert usage.input_tokens == stream.prompt_tokens() > 10
    assert fake.chat_requests()[0]["cut"]


def test_stream_without_usage_chunk_ends_with_estimated_usage(fake):
    fake.script(Script.reply("no usage here", usage=False))
    events, stream = asyncio.run(drain(provider(fake), request()))
    usage = events[-2]
    assert isinstance(usage, Usage)
    assert usage.estimated
    assert usage.output_tokens == count_tokens("no usage here")
    assert stream.reported_usage is None


def test_cut_before_first_token_is_retried(fake):
    fake.script(Script.reply("lost", cut_after=0), Script.reply("second try"))
    events, stream = asyncio.run(drain(provider(fake), request()))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "second try"
    assert stream.attempts == 2


def test_stall_before_first_token_times_out_and_retries(fake):
    fake.script(Script.reply("late", stall_s=3), Script.reply("fresh"))
    t0 = time.monotonic()
    events, stream = asyncio.run(drain(provider(fake, read_timeout=0.3), request()))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "fresh"
    assert stream.attempts == 2
    assert time.monotonic() - t0 < 2


async def _cancel_after(p: OpenAIProvider, req: ChatRequest, seconds: float) -> tuple[float, int]:
    """Consume in a task, cancel it after `seconds`; returns (cancel time, events seen)."""
    seen = 0

    async def consume():
        nonlocal seen
        async with p.stream(req) as s:
            async for _ in s:
                seen += 1

    task = asyncio.create_task(consume())
    await asyncio.sleep(seconds)
    t_cancel = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await p.aclose()
    return t_cancel, seen


@pytest.mark.parametrize(
    "script",
    [
        Script.reply("tok " * 300, tokens_per_s=30),
        Script.reply("after the stall", stall_s=10, stall_at=3),
        Script.reply("no headers yet", headers_delay_s=10),
    ],
    ids=["streaming", "stalled", "before-headers"],
)
def test_cancel_closes_the_http_stream_at_once(fake, script):
    fake.script(script)
    t_cancel, seen = asyncio.run(_cancel_after(provider(fake), request(), 0.35))
    rec = fake.wait_for_disconnect(0, timeout=2)
    latency = rec["disconnected_at"] - t_cancel
    assert latency < 0.5, latency
    # a chunk may have been in flight when the consumer stopped reading
    assert not rec["completed"]
    assert seen <= rec["chunks_sent"] <= seen + 1
    time.sleep(0.1)
    assert fake.chat_requests()[0]["chunks_sent"] == rec["chunks_sent"]  # no more model work after Stop


@pytest.mark.parametrize(
    "script",
    [Script.reply("word " * 300, tokens_per_s=50), Script.reply("word", headers_delay_s=10)],
    ids=["streaming", "before-headers"],
)
def test_aclose_from_another_task_ends_the_consumer_normally(fake, script):
    fake.script(script)

    async def go():
        p = provider(fake)
        s = p.stream(request())
        texts = []

        async def consume():
            async for ev in s:
                texts.append(ev)
            return "ended"

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.3)
        t0 = time.monotonic()
        await s.aclose()
        result = await asyncio.wait_for(task, 1)
        await p.aclose()
        return result, t0, s, texts

    result, t0, stream, texts = asyncio.run(go())
    assert result == "ended"
    assert stream.closed
    assert stream.attempts == 1
    assert len(texts) >= 5 or not script.tokens_per_s
    rec = fake.wait_for_disconnect(0, timeout=2)
    assert rec["disconnected_at"] - t0 < 0.5
    assert stream.final_usage().estimated
    assert stream.final_usage().output_tokens == count_tokens("word " * len(texts))


def test_api_key_never_in_errors(fake):
    fake.script(Script.error(401, message=f"Incorrect API key provided: {API_KEY}", echo_auth=True))
    with pytest.raises(ProviderError) as exc:
        asyncio.run(drain(provider(fake), request()))
    err = exc.value
    assert err.code == "auth"
    assert not err.retryable
    rendered = [str(err), repr(err), err.message, "".join(traceback.format_exception(err))]
    assert all(API_KEY not in r and API_KEY[3:] not in r for r in rendered), rendered
    assert "[redacted]" in err.message

    # connection refused: nothing listens on the port
    with pytest.raises(ProviderError) as exc:
        asyncio.run(
            drain(
                OpenAIProvider("http://127.0.0.1:9/v1", API_KEY, retry=RetryPolicy(max_attempts=2, base_delay=0.01)),
                request(),
            )
        )
    assert exc.value.code == "unavailable"
    assert exc.value.retryable
    assert API_KEY not in repr(exc.value)
    assert API_KEY not in "".join(traceback.format_exception(exc.value))
    assert API_KEY not in repr(OpenAIProvider("http://x/v1", API_KEY))


def test_scripts_matched_by_header_or_marker(fake):
    fake.script(
        Script.reply("fifo"), Script.reply("by marker", match="[[case-7]]"), Script.reply("by header", match="h1")
    )

    async def go():
        p = provider(fake)
        out = []
        for req, headers in [
            (request("hello [[case-7]]"), None),
            (request("plain"), {"X-Fake-Script": "h1"}),
            (request("plain"), None),
            (request("plain"), None),
        ]:
            q = OpenAIProvider(fake.base_url, API_KEY, default_headers=headers) if headers else p
            out.append((await q.complete(req)).text)
            if q is not p:
                await q.aclose()
        await p.aclose()
        return out

    assert asyncio.run(go()) == ["by marker", "by header", "fifo", "OK"]  # then the default reply


def test_separate_process_scripted_over_http(tmp_path):
    script_file = tmp_path / "scripts.json"
    script_file.write_text(json.dumps([Script.reply("from file").to_dict()]))
    with FakeOpenAIProcess(script_file=str(script_file)) as srv:
        srv.script(
            Script.reply("pushed later", reasoning="r"),
            Script(tool_calls=[ToolCallScript("calculator", {"x": 1})], match="calc"),
        )
        assert httpx.get(srv.base_url + "/models").json()["data"][0]["id"] == "fake-model"

        async def go():
            p = OpenAIProvider(srv.base_url, API_KEY, retry=FAST_RETRY)
            texts = [(await p.complete(request())).text for _ in range(2)]
            calls = (await p.complete(request("please calc"))).tool_calls
            # the plain SDK, non-streaming, speaks the same protocol
            sdk = openai.AsyncOpenAI(base_url=srv.base_url, api_key=API_KEY, max_retries=0)
            srv.script(Script.reply("whole body", reasoning="thought"))
            whole = await sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
            await sdk.close()
            await p.aclose()
            return texts, calls, whole

        texts, calls, whole = asyncio.run(go())
        assert texts == ["from file", "pushed later"]
        assert calls[0].name == "calculator"
        assert calls[0].arguments() == {"x": 1}
        assert whole.choices[0].message.content == "whole body"
        assert whole.usage.completion_tokens == 3
        recs = srv.chat_requests()
        assert len(recs) == 4
        assert all(r["completed"] for r in recs)

        # cancel across processes: the server process records the disconnect
        srv.script(Script.reply("tok " * 300, tokens_per_s=30))
        t_cancel, _ = asyncio.run(_cancel_after(OpenAIProvider(srv.base_url, API_KEY), request(), 0.3))
        rec = srv.wait_for_disconnect(-1, timeout=2)
        assert rec["disconnected_at"] - t_cancel < 0.5
