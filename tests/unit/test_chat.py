"""The Ask chat's pure parts: the safe calculator, the memory budget, analysis parsing."""

from __future__ import annotations

import json
import math

import pytest

from bayes_app.chat.analysis import extractive_analysis
from bayes_app.chat.calculator import CalculatorError, calculate
from bayes_app.chat.memory import HISTORY_BUDGET_CHARS, Exchange, fit
from bayes_app.chat.tools import TOOL_NAMES, TOOLS, current_time, parse_analysis


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("2 ** 10", 1024),
        ("2^3", 8),
        ("7 // 2", 3),
        ("7 % 4", 3),
        ("-3 + +4", 1),
        ("sqrt(16) + abs(-2)", 6.0),
        ("round(pi, 3)", 3.142),
        ("max(1, 5, 3)", 5),
        ("log(e)", 1.0),
        ("1.5e3 / 3", 500.0),
        ("6 × 7", 42),
        ("84 ÷ 2", 42.0),
    ],
)
def test_calculator_computes(expr, value):
    assert calculate(expr) == pytest.approx(value)


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os').system('true')",
        "open('/etc/passwd')",
        "x + 1",
        "(1).__class__",
        "[1, 2]",
        "'a' * 3",
        "lambda: 1",
        "1 if True else 2",
        "sqrt(x=4)",
        "exec('1')",
        "True + 1",
        "a.b",
        "1; 2",
    ],
)
def test_calculator_refuses_anything_but_arithmetic(expr):
    with pytest.raises(CalculatorError):
        calculate(expr)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("1 / 0", "Division by zero"),
        ("9 ** 9 ** 9", "Exponents above"),
        ("", "empty"),
        ("1 +", "Not an arithmetic expression"),
        ("sqrt(-1)", "Cannot compute"),
        ("1" * 600, "longer than"),
        ("10.0 ** 400", "Cannot compute"),
    ],
)
def test_calculator_errors_are_clear(expr, message):
    with pytest.raises(CalculatorError, match=message):
        calculate(expr)


def test_calculator_never_calls_eval(monkeypatch):
    import builtins

    def boom(*_a, **_k):
        raise AssertionError("eval must not be used")

    monkeypatch.setattr(builtins, "eval", boom)
    assert calculate("3 * (4 + 5)") == 27


def test_memory_drops_the_oldest_pairs_first_to_fit_the_budget():
    big = "x" * 10_000
    history = [Exchange(f"q{i} crawler {big}", f"a{i} {big}") for i in range(5)]  # ~100k chars
    mem = fit(history, "new question on the crawler")
    assert mem.budget_chars == HISTORY_BUDGET_CHARS == 48_000
    assert mem.used_chars <= 48_000
    assert mem.dropped == 3
    assert [e.question[:2] for e in mem.kept] == ["q3", "q4"]  # the newest survive, in order
    assert "last 2 of 5 earlier questions" in mem.line()
    assert "the oldest 3 no longer fit" in mem.line()
    small = fit(history[:1], "And then?")
    assert small.dropped == 0
    assert len(small.kept) == 1
    assert small.line() == "This answer took the earlier question of the conversation into account."
    assert fit([], "q").line() == ""  # a first question: nothing to remember, no line


def test_memory_line_counts_only_earlier_questions_about_this_one():
    history = [
        Exchange("How is the PaSa crawler trained?", "In two stages [1]."),
        Exchange("What is SHAP?", "A feature attribution method [2]."),
    ]
    assert fit(history, "What baking temperature suits sourdough bread?").line() == ""
    assert fit(history, "Which reward does the crawler get?").line() == (
        "This answer took 1 of the 2 earlier questions into account (the others are about something else)."
    )
    assert (
        fit(history, "Why is that?").line() == "This answer took all 2 earlier questions of the conversation "
        "into account."
    )


def test_memory_with_a_single_huge_exchange_keeps_nothing_rather_than_overflow():
    mem = fit([Exchange("q", "a" * 60_000)], "question")
    assert mem.kept == []
    assert mem.dropped == 1
    assert mem.used_chars == len("question")


def test_tool_schemas_are_the_six_tools():
    assert {
        "search_knowledge_base",
        "list_documents",
        "analyze_document",
        "compare_documents",
        "calculator",
        "current_time",
    } == TOOL_NAMES
    for tool in TOOLS:
        params = tool["function"]["parameters"]
        assert params["type"] == "object"
        assert set(params["required"]) <= set(params["properties"])
    assert "UTC" in current_time()


def test_parse_analysis_accepts_json_with_chatter_and_rejects_junk():
    data = {"topics": ["a"], "entities": ["B"], "key_facts": ["c"], "summary": "d"}
    assert parse_analysis(json.dumps(data)) == data
    assert parse_analysis("Here you go: " + json.dumps(data) + " Hope it helps") == data
    assert parse_analysis("no json") is None
    assert parse_analysis('{"claims": []}') is None


def test_extractive_analysis_uses_quoted_claims_and_frequent_terms():
    passages = [
        {
            "text": "Graph neural networks predict molecular properties. Graph models need "
            "explanations. The Tox21 benchmark and the Tox21 data are used."
        }
    ]
    claims = json.dumps({"claims": [{"text": "x", "quote": "Graph models need explanations."}]})
    out = extractive_analysis(passages, claims)
    assert out["key_facts"] == ["Graph models need explanations."]
    assert "graph" in out["topics"]
    assert "Tox21" in out["entities"]
    fallback = extractive_analysis(passages, "not json")
    assert fallback["key_facts"] == ["Graph neural networks predict molecular properties."]
    assert not math.isnan(len(fallback["summary"]))
