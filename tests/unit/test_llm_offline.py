"""The offline provider, passage convention, token counting and the provider factory."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from bayes_app.llm import (
    ChatRequest,
    Done,
    OfflineProvider,
    OpenAIProvider,
    Passage,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    count_tokens,
    format_passages,
    get_provider,
    is_offline,
    parse_passages,
    tool_message,
)
from bayes_app.llm.offline import NO_PASSAGES, split_sentences
from bayes_app.llm.tokens import count_request_tokens, tokenizer_name

PASSAGES = [
    Passage(
        1,
        "Coffee consumption was associated with a lower risk of type 2 diabetes in the cohort. "
        "The study followed 40,000 adults for ten years.",
        "Coffee and Diabetes (2019)",
        7,
    ),
    Passage(
        2,
        "Sleep duration below six hours increased insulin resistance, e.g. in shift workers. "
        "Effects were reversible after two weeks of recovery sleep.",
        "Sleep, p. and Metabolism",
        12,
    ),
    Passage(
        3,
        "Green tea showed no effect on diabetes risk. Fig. 3 shows the dose response curve for tea drinkers.",
        "Tea (meta-analysis",
        None,
    ),
]
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search_knowledge_base",
        "description": "Hybrid search",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "top_k": {"type": "integer"}},
            "required": ["query"],
        },
    },
}


def run(coro):
    return asyncio.run(coro)


def ask(question: str, passages=PASSAGES, **kw) -> ChatRequest:
    messages = (
        [
            {"role": "system", "content": "Answer from these passages:\n" + format_passages(passages)},
            {"role": "user", "content": question},
        ]
        if passages
        else [{"role": "user", "content": question}]
    )
    return ChatRequest(model="gpt-x", messages=messages, **kw)


def test_format_and_parse_passages_round_trip():
    text = format_passages(PASSAGES)
    assert text.splitlines()[0].startswith("[1] (Coffee and Diabetes (2019), p. 7) Coffee consumption")
    parsed = parse_passages("Some preamble\n" + text + "\nQuestion: why?")
    assert [p.n for p in parsed] == [1, 2, 3]
    assert parsed[0].title == "Coffee and Diabetes (2019)"
    assert parsed[0].page == 7
    assert parsed[1].title == "Sleep, p. and Metabolism"
    assert parsed[1].page == 12
    assert parsed[2].title == "Tea [meta-analysis"  # unbalanced paren cleaned
    assert parsed[2].page is None
    assert [p.text for p in parsed] == [" ".join(p.text.split()) for p in PASSAGES]


def test_format_passages_accepts_dicts_and_skips_empty_text():
    text = format_passages(
        [
            {"title": "A", "page": 2, "text": "one\n two"},
            {"title": "B", "text": "  "},
            {"n": 9, "title": "", "text": "x y"},
        ]
    )
    assert text == "[1] (A, p. 2) one two\n[9] (untitled) x y"


def test_sentence_split_keeps_abbreviations():
    assert split_sentences("Use e.g. coffee. Fig. 3 shows it! Done? Yes") == [
        "Use e.g. coffee.",
        "Fig. 3 shows it!",
        "Done?",
        "Yes",
    ]


def _quoted(text: str) -> list[tuple[str, str]]:
    """(sentence, marker) of an offline answer's bullets ("- p. 7: sentence … sentence [1]")."""
    out = []
    for body, n in re.findall(r"^- (?:p\. \S+: )?(.+) \[(\d+)\]$", text, re.M):
        out += [(part, n) for part in body.split(" … ")]
    return out


def test_answer_is_verbatim_cited_sentences():
    comp = run(OfflineProvider().complete(ask("Does coffee lower the risk of diabetes?")))
    text, calls, usage = comp
    assert calls == []
    assert comp.finish_reason == "stop"
    pieces = _quoted(text)
    assert pieces, text
    by_n = {p.n: " ".join(p.text.split()) for p in PASSAGES}
    for sentence, n in pieces:
        assert sentence in by_n[int(n)]  # copied, never invented
    assert pieces[0][0].startswith("Coffee consumption was associated with a lower risk of type 2 diabetes")
    assert usage.model == "offline"
    assert not usage.estimated
    assert usage.input_tokens == count_request_tokens(ask("Does coffee lower the risk of diabetes?"))
    assert usage.output_tokens == count_tokens(text)


def test_streams_small_deltas_then_usage_and_done():
    async def go():
        events = []
        async with OfflineProvider().stream(ask("insulin resistance and sleep")) as s:
            async for ev in s:
                events.append(ev)
        return events, s

    events, stream = run(go())
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 5
    assert all(len(d.text.split()) == 1 for d in deltas)
    assert isinstance(events[-2], Usage)
    assert events[-1] == Done("stop")
    answer = "".join(d.text for d in deltas)
    assert answer.startswith("No language model is connected")
    assert "Sleep duration below six hours increased insulin resistance, e.g. in" in answer
    assert stream.final_usage() == events[-2]


def test_no_passages_and_no_overlap():
    assert run(OfflineProvider().complete(ask("anything?", passages=[]))).text == NO_PASSAGES
    # nothing overlaps: the closest sentences by meaning, still verbatim and cited
    text = run(OfflineProvider().complete(ask("quantum chromodynamics"))).text
    parts = _quoted(text)
    assert 1 <= len(parts) <= 5
    assert all(s.strip() in PASSAGES[int(n) - 1].text for s, n in parts)


def test_json_claims_mode():
    req = ask("What about tea and diabetes risk?", response_format={"type": "json_object"})
    data = json.loads(run(OfflineProvider().complete(req)).text)
    assert data["claims"][0] == {
        "text": "Green tea showed no effect on diabetes risk.",
        "quote": "Green tea showed no effect on diabetes risk.",
        "passage": 3,
    }
    assert all(c["text"] == c["quote"] for c in data["claims"])
    schema_req = ask("nothing", passages=[], response_format={"type": "json_schema", "json_schema": {"name": "x"}})
    assert json.loads(run(OfflineProvider().complete(schema_req)).text) == {"claims": []}


def test_tool_call_when_no_passages_then_answer_from_tool_result():
    provider = OfflineProvider()
    req = ask("How does sleep affect insulin?", passages=[], tools=[SEARCH_TOOL])

    async def go(r):
        async with provider.stream(r) as s:
            return [ev async for ev in s]

    events = run(go(req))
    assert isinstance(events[0], ToolCallDelta)
    call = next(e for e in events if isinstance(e, ToolCall))
    assert call.name == "search_knowledge_base"
    assert call.arguments() == {"query": "How does sleep affect insulin?"}
    assert events[-1] == Done("tool_calls")
    assert events[-2].output_tokens > 0

    follow = ChatRequest(
        model="m",
        tools=[SEARCH_TOOL],
        messages=req.messages
        + [
            {"role": "assistant", "content": None, "tool_calls": [call.to_wire()]},
            tool_message(call.id, format_passages(PASSAGES[1:2])),
        ],
    )
    text, calls, _ = run(provider.complete(follow))
    assert calls == []
    assert "- p. 12: Sleep duration below six hours" in text
    assert text.endswith("[2]")
    # an empty search result does not loop into another tool call
    empty = ChatRequest(model="m", tools=[SEARCH_TOOL], messages=req.messages + [tool_message(call.id, "")])
    assert run(provider.complete(empty)).text == NO_PASSAGES
    # tool_choice="none" answers directly
    assert run(provider.complete(ask("x", passages=[], tools=[SEARCH_TOOL], tool_choice="none"))).tool_calls == []


def test_tool_argument_name_follows_the_schema():
    tool = {
        "type": "function",
        "function": {
            "name": "search_knowledge_base",
            "parameters": {
                "type": "object",
                "properties": {"k": {"type": "integer"}, "q": {"type": "string"}},
                "required": ["q"],
            },
        },
    }
    _, calls, _ = run(OfflineProvider().complete(ask("sleep", passages=[], tools=[tool])))
    assert calls[0].arguments() == {"q": "sleep"}


def test_cancel_mid_answer_keeps_estimated_usage():
    async def go():
        stream = OfflineProvider().stream(ask("sleep insulin coffee diabetes tea"))
        got = []
        async for ev in stream:
            got.append(ev)
            if len(got) == 3:
                break
        await stream.aclose()
        return stream

    stream = run(go())
    usage = stream.final_usage()
    assert usage.estimated
    assert usage.model == "offline"
    assert 0 < usage.output_tokens <= 6


def test_count_tokens_is_offline_bpe():
    assert tokenizer_name() == "bpe:o200k_base"
    assert count_tokens("") == 0
    assert count_tokens("Hello world") == 2
    assert count_tokens("<|endoftext|>") > 1  # special tokens count as text, never raise


def test_factory(monkeypatch):
    assert is_offline(None, None, settings=type("S", (), {"openai_base_url": None, "openai_api_key": None})())
    assert isinstance(
        get_provider(settings=type("S", (), {"openai_base_url": None, "openai_api_key": ""})()), OfflineProvider
    )
    p = get_provider("http://127.0.0.1:9/v1", None)
    assert isinstance(p, OpenAIProvider)
    assert not is_offline("http://127.0.0.1:9/v1")
    assert isinstance(get_provider(None, "sk-abc"), OpenAIProvider)

    from pydantic import SecretStr

    from bayes_app import settings as app_settings

    monkeypatch.setenv("OPENAI_BASE_URL", "")  # env wins over a .env file
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-123")
    app_settings.get_settings.cache_clear()
    try:
        assert not is_offline()
        assert isinstance(get_provider(), OpenAIProvider)
        monkeypatch.setenv("OPENAI_API_KEY", "")
        app_settings.get_settings.cache_clear()
        assert is_offline()
    finally:
        app_settings.get_settings.cache_clear()
    s = type("S", (), {"openai_base_url": None, "openai_api_key": SecretStr("sk-secret")})()
    assert isinstance(get_provider(settings=s), OpenAIProvider)


@pytest.mark.parametrize("content", ["plain", [{"type": "text", "text": "parts"}]])
def test_request_token_count_handles_content_forms(content):
    assert count_request_tokens(ChatRequest(model="m", messages=[{"role": "user", "content": content}])) > 6


def test_table_rows_are_never_quoted_as_sentences():
    from bayes_app.llm.offline import rank_candidates, tabular

    row = (
        "Method AutoScholarQuery RealScholarQuery Crawler Recall Precision w/o [Expand] 0.3355 0.1445 "
        "0.2536 0.3359 w/o RL training 0.6556 0.1476 0.4210"
    )
    prose = [
        "Accuracy rose from 71.2 to 78.9 (p < 0.01) over 12 epochs of Crawler training.",
        "Scores were 0.81, 0.79 and 0.85 for the three Crawler runs.",
    ]
    assert tabular(row)
    assert not any(tabular(p) for p in prose)
    picked = rank_candidates(
        "How does the Crawler training change recall and precision?",
        [(row, 1, 0, 0), (prose[0], 2, 1, 0), (prose[1], 3, 2, 0)],
    )
    assert prose[0] in [s for s, _ in picked]
    assert row not in [s for s, _ in picked]
