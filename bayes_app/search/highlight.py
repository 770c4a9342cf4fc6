"""Presentation helpers for search results: emphasised query terms, the best quote."""

from __future__ import annotations

import re

from bayes_app.search import sparse

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


def _stems(query: str) -> set[str]:
    return set(sparse.tokens(query))


def emphasis_segments(text: str, query: str) -> list[dict[str, str]]:
    """Split `text` into [{"text", "em": "1"|""}] where words matching a query term
    (after the same stemming the BM25 side uses) are emphasised."""
    wanted = _stems(query)
    out: list[dict[str, str]] = []
    pos = 0
    for m in re.finditer(r"\w+", text):
        word = m.group(0)
        if wanted and set(sparse.tokens(word)) & wanted:
            if m.start() > pos:
                out.append({"text": text[pos : m.start()], "em": ""})
            out.append({"text": word, "em": "1"})
            pos = m.end()
    if pos < len(text):
        out.append({"text": text[pos:], "em": ""})
    return out


def best_quote(text: str, query: str, max_chars: int = 300) -> str:
    """The sentence of a passage that shares the most terms with the query (to highlight)."""
    wanted = _stems(query)
    sentences = [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]
    if not sentences:
        return ""
    best = max(sentences, key=lambda s: (len(set(sparse.tokens(s)) & wanted), -abs(len(s) - 160)))
    return best[:max_chars]
