"""A paper's quotable sentences, in reading order, each verbatim on its page.

A cell's quote is one of these sentences exactly as the page text holds it (whitespace runs
collapsed), with the page and the character range that the viewer highlights. Matching uses a
cleaned copy (`match`: line-end hyphens joined), never the quote itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlmodel import Session, col, select

from bayes_app.library.hyphens import join_broken_words
from bayes_app.library.structure import QUOTABLE, Span
from bayes_app.llm.sentences import split_sentences
from bayes_app.models import PageText

# Text a table may quote: the product's quotable roles, and an abstract where the structure
# analysis labels one (an abstract is the most-read text of a paper).
TABLE_QUOTABLE = frozenset({*QUOTABLE, "abstract"})
# The structure analysis can take a first page's abstract for front matter; a full sentence
# there (long, ending with a stop) is prose, not a title or an author line.
FRONT_PROSE_WORDS = 10
MIN_WORDS = 4
MAX_CHARS = 700


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a paper: `text` verbatim (whitespace collapsed), `match` cleaned for
    matching, its page, its range in the page text, and its position in reading order."""

    text: str
    match: str
    page: int
    char_start: int
    char_end: int
    position: int
    section: str = ""


def _spans(raw: Sequence[Sequence[object]], length: int) -> list[Span]:
    spans = [Span.from_json(s) for s in raw]
    return spans or [Span(0, length, "body")]


_PARAGRAPH = re.compile(r"\n\s*\n")
_ABSTRACT_HEAD = re.compile(r"^\s*(?:abstract|summary)\s*[.:]?\s*\n", re.I)


def _pieces(block: str, front: bool) -> list[str]:
    """The sentences of a block; in front matter, paragraph by paragraph (a title or an author
    line above an abstract is never part of its first sentence)."""
    if not front:
        return split_sentences(block)
    return [p for part in _PARAGRAPH.split(block) for p in split_sentences(_ABSTRACT_HEAD.sub("", part))]


def page_sentences(page: int, text: str, raw_spans: Sequence[Sequence[object]], first: int = 0) -> list[Sentence]:
    """The quotable sentences of one page (`first`: the position of the first)."""
    out: list[Sentence] = []
    for span in _spans(raw_spans, len(text)):
        if span.role not in TABLE_QUOTABLE and span.role != "front_matter":
            continue
        block = text[span.start : span.end]
        cursor = 0
        for piece in _pieces(block, front=span.role == "front_matter"):
            at = block.find(piece, cursor)
            if at < 0:
                continue
            cursor = at + len(piece)
            words = piece.split()
            if len(words) < MIN_WORDS or len(piece) > MAX_CHARS:
                continue
            if span.role == "front_matter" and (len(words) < FRONT_PROSE_WORDS or piece.rstrip()[-1:] not in ".!?"):
                continue
            out.append(
                Sentence(
                    text=" ".join(words),
                    match=" ".join(join_broken_words(piece).split()),
                    page=page,
                    char_start=span.start + at,
                    char_end=span.start + at + len(piece),
                    position=first + len(out),
                    section=span.section,
                )
            )
    return out


def sentences_from_pages(pages: Iterable[tuple[int, str, Sequence[Sequence[object]]]]) -> list[Sentence]:
    """Every quotable sentence of a paper's pages `(page, text, spans)`, in reading order."""
    out: list[Sentence] = []
    for page, text, spans in sorted(pages, key=lambda p: p[0]):
        out.extend(page_sentences(page, text, spans, first=len(out)))
    return out


def document_sentences(db: Session, document_id: str) -> list[Sentence]:
    """Every quotable sentence of a stored document, in reading order."""
    rows = db.exec(
        select(PageText.page, PageText.text, PageText.spans)
        .where(PageText.document_id == document_id)
        .order_by(col(PageText.page))
    ).all()
    return sentences_from_pages((p, t, s or []) for p, t, s in rows)
