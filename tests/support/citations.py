"""Citations of the bundled papers for the viewer's highlight test, and their character boxes.

A citation is a sentence of a page's pdfium text, as a model would quote it (whitespace
collapsed), with the raw character range it came from; `char_boxes` gives pdfium's box of
every printed character in that range, which the test projects onto the rendered canvas."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium

from bayes_app.llm.sentences import split_sentences


@dataclass(frozen=True)
class Citation:
    paper: str  # file name under tests/fixtures/papers
    kind: str  # "sentence" (crosses a line), "column" or "page" (crosses that break)
    quote: str
    parts: tuple[tuple[int, int, int], ...]  # (page, start, end) raw ranges, in reading order


def _letters(s: str) -> str:
    return re.sub(r"[^0-9a-z]", "", s.lower())


def page_texts(path: Path) -> dict[int, str]:
    pdf = pdfium.PdfDocument(str(path))
    try:
        return {i + 1: pdf[i].get_textpage().get_text_range() for i in range(len(pdf))}
    finally:
        pdf.close()


def _sentences(text: str) -> list[tuple[int, int]]:
    """Raw (start, end) of each sentence of a page's text."""
    out, at = [], 0
    for s in split_sentences(text):
        start = text.find(s, at)
        if start < 0:
            continue
        out.append((start, start + len(s)))
        at = start + len(s)
    return out


def _quote(raw: str) -> str:
    return " ".join(raw.replace("\ufffe", "").split())


def _good(raw: str, page_text: str) -> bool:
    letters = _letters(raw)
    return (
        60 <= len(raw) <= 320
        and "\n" in raw
        and len(letters) > 0.7 * len(raw.replace(" ", ""))
        and _letters(page_text).count(letters) == 1
        and raw[0].isupper()
    )


def sentences(path: Path, pages: list[int], per_page: int) -> list[Citation]:
    """`per_page` sentences crossing a line break from each of `pages` (spread over the page)."""
    texts = page_texts(path)
    out: list[Citation] = []
    for page in pages:
        found = [(a, b) for a, b in _sentences(texts[page]) if _good(texts[page][a:b], texts[page])]
        step = max(1, len(found) // per_page)
        for a, b in found[::step][:per_page]:
            out.append(Citation(path.name, "sentence", _quote(texts[page][a:b]), ((page, a, b),)))
    return out


def char_boxes(path: Path, page: int, start: int, end: int) -> list[tuple[float, float, float, float]]:
    """pdfium's box of each printed character of ``text[start:end]`` as page fractions
    (x0, top, x1, bottom), top-left origin like the screen."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        pg = pdf[page - 1]
        left, bottom, right, top = pg.get_cropbox()
        w, h = right - left, top - bottom
        tp = pg.get_textpage()
        text = tp.get_text_range()
        boxes = []
        for i in range(start, end):
            if text[i].isspace() or text[i] in "\ufffe\u00ad\u0002":
                continue
            x0, b, r, t = tp.get_charbox(i)
            if r > x0 and t > b:
                boxes.append(((x0 - left) / w, (top - t) / h, (r - left) / w, (top - b) / h))
        return boxes
    finally:
        pdf.close()


def cross_column(path: Path, pages: list[int]) -> Citation | None:
    """A sentence that ends the left column and goes on at the top of the right one."""
    texts = page_texts(path)
    for page in pages:
        for a, b in _sentences(texts[page]):
            raw = texts[page][a:b]
            if not (40 <= len(raw) <= 400) or not raw[0].isupper():
                continue
            boxes = char_boxes(path, page, a, b)
            if not boxes or _letters(texts[page]).count(_letters(raw)) != 1:
                continue
            firsts, lasts = boxes[0], boxes[-1]
            if firsts[2] < 0.5 < lasts[0] and lasts[1] < firsts[1] - 0.3:
                return Citation(path.name, "column", _quote(raw), ((page, a, b),))
    return None


def cross_page(path: Path) -> Citation | None:
    """A sentence that starts at the foot of a page and ends at the top of the next one (the
    page number printed between them is not part of the quote)."""
    texts = page_texts(path)
    for page in sorted(texts)[:-1]:
        head = re.sub(r"[\r\n]+[ \t]*\d{1,4}\s*$", "", texts[page])
        sents = _sentences(head)
        if not sents or head.rstrip()[-1:] in ".!?:" or len(head) - sents[-1][0] < 30:
            continue
        a = sents[-1][0]
        nxt = texts[page + 1]
        first = _sentences(nxt)
        if not first or not first[0][1] < 200:
            continue
        b = first[0][1]
        if not head[a : a + 1].isupper() or nxt[b - 1 : b] != ".":
            continue
        quote = _quote(head[a:] + " " + nxt[:b])
        return Citation(path.name, "page", quote, ((page, a, len(head)), (page + 1, 0, b)))
    return None
