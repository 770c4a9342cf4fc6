"""The offline answer as a reader sees it: the library's own best sentences, grouped by paper (each
paper's best first, then in reading order), with what they are and how to connect a model said first (issue 37)."""

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
    "library that best answer the question, quoted as the papers state them, grouped by paper (best first), "
    "each paper's best sentence first and the rest in reading order. Connect a model in Settings (an OpenAI "
    "key or a local OpenAI-compatible server) for a written answer."
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
    what they are, then the sentences grouped by paper — the paper holding the best first. Within
    a paper its best sentence leads (with the picked sentences that follow it in its passage), then
    the rest in reading order; one run of a passage's sentences per bullet, with its page and
    citation marker (the link to the page). Source text is literal Markdown: it never becomes markup."""
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
        lines += [_bullet(by_n.get(n), n, sentences) for n, sentences in _runs(items, by_n)]
    return "\n".join(lines)


def _runs(items: list[tuple[str, int]], by_n: dict[int, Passage]) -> list[tuple[int, list[str]]]:
    """One paper's picked sentences (best first) as bullets: (passage number, its sentences in
    reading order). The best sentence's bullet comes first and opens with it; the picked sentences
    before it in its passage, and the other passages, follow in reading order."""
    best_sentence, best_n = items[0]
    ordered = sorted(items, key=lambda it: _place(by_n.get(it[1]), it[0]))
    lead = [s for s, n in ordered if n == best_n and _place(by_n.get(n), s) >= _place(by_n.get(n), best_sentence)]
    rest: dict[int, list[str]] = {}
    for s, n in ordered:
        if not (n == best_n and s in lead):
            rest.setdefault(n, []).append(s)
    return [(best_n, lead), *rest.items()]


def _bullet(p: Passage | None, n: int, sentences: list[str]) -> str:
    page = f"p. {p.page}: " if p is not None and p.page not in (None, "") else ""
    body = literal(reader_text(sentences[0]))
    text = _one_line(p.text) if p is not None else ""
    for before, s in zip(sentences, sentences[1:]):
        # adjacent in the passage: one run of text; else an ellipsis marks the gap
        end = text.find(_one_line(before)) + len(_one_line(before))
        joined = text.find(_one_line(s), end) == end + 1
        body += (" " if joined else " … ") + literal(reader_text(s))
    return f"- {page}{body} [{n}]"
