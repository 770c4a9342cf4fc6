"""Quoted source text as literal Markdown (issue 24.7): rendered by a CommonMark parser it
gives back exactly its characters and no link, image, heading, emphasis, list or HTML."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from bayes_app.chat.grounding import ground
from bayes_app.llm.markup import literal, plain
from bayes_app.llm.offline_answer import extractive_answer

HOSTILE = [
    "[the trial registry, sign in to view](https://evil.example/login)",
    "![x](/api/v1/health)",
    "# Results are *great* and __bold__ with `code`",
    "1. first item",
    "- a bullet",
    "> a quote",
    "a <img src=x onerror=alert(1)> &amp; b",
    "see <https://evil.example> or https://evil.example/x",
    "| a | b |",
    "~~struck~~ and a \\ backslash [5]",
    "[ref]: https://evil.example",
]

_md = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _render(text: str) -> str:
    return _md.render(text)


@pytest.mark.parametrize("text", HOSTILE)
def test_literal_renders_as_the_same_characters_and_no_markup(text):
    out = _render(literal(text))
    assert re.fullmatch(r"<p>.*</p>\n", out, re.S), out  # one paragraph, nothing else
    inner = out[3:-5]
    assert "<" not in inner.replace("&lt;", ""), out  # no tag at all inside it
    assert html.unescape(inner) == " ".join(text.split())
    assert plain(literal(text)) == " ".join(text.split())


def test_the_unescaped_text_would_have_been_markup():
    # the cases above are real: without escaping the parser makes links, images, headings
    assert "<a href" in _render(HOSTILE[0])
    assert "<img" in _render(HOSTILE[1])
    assert "<h1>" in _render(HOSTILE[2])
    assert "<ol>" in _render(HOSTILE[3])


def test_offline_answers_and_library_quotes_escape_the_source_text():
    answer = extractive_answer([(HOSTILE[0], 1), (HOSTILE[1], 2)])
    out = _render(answer)
    assert "<a" not in out
    assert "<img" not in out
    assert "[1]" in out
    assert "[2]" in out
    # (sentence choice leaves out sentences carrying URLs; an image reference still gets through)
    g = ground(
        "Trials are listed somewhere.",
        "Where are the wound trials listed?",
        [
            {
                "n": 1,
                "text": f"The authors found the wound trials listed in {HOSTILE[1]} and reviewed each of "
                "them carefully.",
                "title": "t",
                "page": 1,
            }
        ],
    )
    assert g.state == "quoted"
    out = _render(g.addition)
    assert "<img" not in out
    assert "<strong>From the library</strong>" in out
    assert HOSTILE[1] in html.unescape(out)
