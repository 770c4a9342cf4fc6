"""The offline answer as a reader sees it: the library's own best sentences, grouped by paper and
in reading order, with what they are and how to connect a model said first (issue 37)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bayes_app.llm import choose
from bayes_app.llm.markup import literal

if TYPE_CHECKING:
    from bayes_app.llm.offline import Passage

NO_PASSAGES = (
    "Nothing in your library addresses this question. Try other words, widen the scope, or add papers on the topic."
)
_BALANCED = re.compile(r"^(?:[^()]|\([^()]*\))*$")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clean_title(title: str) -> str:
    title = _one_line(title)
    if not _BALANCED.match(title):  # keep the header parseable
        title = title.replace("(", "[").replace(")", "]")
    return title


OFFLINE_LEAD = (
    "No language model is connected, so this is not a written answer: these are the sentences of your "
    "library that best answer the question, quoted as the papers state them, grouped by paper (best first) "
    "and in reading order within each. Connect a model in Settings (an OpenAI key or a local "
    "OpenAI-compatible server) for a written answer."
)


def reader_text(sentence: str) -> str:
    """A quoted sentence as a reader sees it in an offline answer: its list prefix, footnote
    digits glued to a word and the paper's own reference markers ("[1, 3]") dropped, on one line."""
    return choose.wording(re.sub(r"\s+(?=[,.;:])", "", _one_line(sentence)))


def _place(passage: Passage | None, quote: str) -> tuple[float, int, int]:
    page = passage.page if passage is not None else None
    num = float(page) if isinstance(page, int) or (isinstance(page, str) and page.isdigit()) else float("inf")
    at = _one_line(passage.text).find(_one_line(quote)) if passage is not None else -1
    return (num, passage.n if passage is not None else 0, at)


def extractive_answer(picked: list[tuple[str, int]], passages: list[Passage] | None = None) -> str:
    """The picked sentences (best first) as an offline answer a reader can use: a line saying
    what they are, then the sentences grouped by paper — the paper holding the best first — in
    reading order within it, one passage's sentences per bullet with its page and citation
    marker (the link to the page). Source text is literal Markdown: it never becomes markup."""
    if not picked:
        return NO_PASSAGES
    by_n = {p.n: p for p in passages or ()}
    groups: dict[str, list[tuple[str, int]]] = {}
    for sentence, n in picked:
        p = by_n.get(n)
        groups.setdefault(_clean_title(p.title) if p is not None and p.title else "", []).append((sentence, n))
    lines = [OFFLINE_LEAD]
    for title, items in groups.items():
        lines.append("")
        if title:
            lines.append(f"**{literal(title)}**")
        # one bullet per passage: its sentences in reading order
        bullets: dict[int, list[str]] = {}
        for sentence, n in sorted(items, key=lambda it: _place(by_n.get(it[1]), it[0])):
            bullets.setdefault(n, []).append(sentence)
        for n, sentences in sorted(bullets.items(), key=lambda kv: _place(by_n.get(kv[0]), kv[1][0])):
            p = by_n.get(n)
            page = f"p. {p.page}: " if p is not None and p.page not in (None, "") else ""
            body = literal(reader_text(sentences[0]))
            text = _one_line(p.text) if p is not None else ""
            for before, s in zip(sentences, sentences[1:]):
                # adjacent in the passage: one run of text; else an ellipsis marks the gap
                end = text.find(_one_line(before)) + len(_one_line(before))
                joined = text.find(_one_line(s), end) == end + 1
                body += (" " if joined else " … ") + literal(reader_text(s))
            lines.append(f"- {page}{body} [{n}]")
    return "\n".join(lines)
