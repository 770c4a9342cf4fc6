"""A page's layout: text lines with font sizes and boxes, figure and table regions, and the
character boxes of a text range (for highlighting)."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from bayes_app.library.pdf.document import (
    PDFIUM_LOCK,
    PdfSource,
    TextBudget,
    bounded_text,
    each_page,
    open_page,
    pdf_document,
)

# --------------------------------------------------------------------------- layout

_FIGURE_OBJECTS = (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_FORM)
_MIN_REGION_SIDE = 40.0  # points: smaller images/forms are icons (ORCID logos, bullets)
_MAX_RULES = 200  # a page with more thin lines is a drawing, not a table


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of a page's text: ``text[start:end]`` (no line break), its box and font size.

    Coordinates are PDF points from the page's top-left corner (y grows downwards). A pdfium
    "line" can span several printed lines when a hyphenated word joins them; the box then
    covers all of them. ``size`` is the median printed font size of a few characters
    (0 when pdfium gives no boxes): the nominal size times the character matrix's scale, so
    scaled text (figure labels) gets its printed size.
    """

    start: int
    end: int
    x0: float
    top: float
    x1: float
    bottom: float
    size: float


@dataclass(frozen=True, slots=True)
class PageLayout:
    """A page's text (identical to :func:`iter_pages`), its lines and its picture regions."""

    number: int
    text: str
    width: float
    height: float
    lines: tuple[TextLine, ...]
    regions: tuple[tuple[float, float, float, float], ...]  # (x0, top, x1, bottom) of images/forms


def _char_box(textpage: pdfium.PdfTextPage, index: int, loose: bool) -> tuple[float, float, float, float] | None:
    try:
        return textpage.get_charbox(index, loose=loose)
    except pdfium.PdfiumError:
        return None


def _printed_size(textpage: pdfium.PdfTextPage, index: int) -> float:
    """Font size as printed: the nominal size scaled by the character's matrix (figures drawn
    as scaled forms report size 1.0 with a 9x matrix)."""
    matrix = pdfium_c.FS_MATRIX()
    size = pdfium_c.FPDFText_GetFontSize(textpage, index)
    if pdfium_c.FPDFText_GetMatrix(textpage, index, matrix):
        size *= abs(matrix.a * matrix.d - matrix.b * matrix.c) ** 0.5
    return min(size, 500.0)


def _lines_of(textpage: pdfium.PdfTextPage, text: str, height: float) -> list[TextLine]:
    """Split ``text`` at its line breaks and measure each line from a few sampled characters."""
    geometry = textpage.count_chars() == len(text)  # text offsets are char indices
    lines: list[TextLine] = []
    pos = 0
    for raw in text.split("\r\n"):
        start, end = pos, pos + len(raw)
        pos = end + 2
        visible = [k for k in range(start, end) if not text[k].isspace() and text[k] != "\ufffe"]
        if not visible:
            continue
        if not geometry:
            lines.append(TextLine(start, end, 0.0, 0.0, 0.0, 0.0, 0.0))
            continue
        samples = {visible[0], visible[len(visible) // 2], visible[-1]}
        boxes = [b for k in sorted(samples) if (b := _char_box(textpage, k, True)) is not None]
        if not boxes:
            lines.append(TextLine(start, end, 0.0, 0.0, 0.0, 0.0, 0.0))
            continue
        sizes = sorted(_printed_size(textpage, k) for k in samples)
        left = min(b[0] for b in boxes)
        right = max(b[2] for b in boxes)
        top = max(b[3] for b in boxes)
        bottom = min(b[1] for b in boxes)
        lines.append(TextLine(start, end, left, height - top, right, height - bottom, round(sizes[len(sizes) // 2], 2)))
    return lines


def _regions(page: pdfium.PdfPage, width: float, height: float) -> list[tuple[float, float, float, float]]:
    """Boxes of pictures (images, forms) and of ruled tables (two or more horizontal rules of
    the same width, as booktabs draws them), top-down coordinates."""
    out = []
    rules: list[tuple[float, float, float]] = []  # (left, right, y)
    for obj in page.get_objects(filter=_FIGURE_OBJECTS + (pdfium_c.FPDF_PAGEOBJ_PATH,), max_depth=1):
        if len(rules) > _MAX_RULES:
            break
        try:
            left, bottom, right, top = obj.get_bounds()
        except pdfium.PdfiumError:
            continue
        left, right = max(0.0, left), min(width, right)
        bottom, top = max(0.0, bottom), min(height, top)
        if obj.type == pdfium_c.FPDF_PAGEOBJ_PATH:
            if top - bottom < 2.5 and right - left > 60:
                rules.append((left, right, height - (top + bottom) / 2))
        elif right - left >= _MIN_REGION_SIDE and top - bottom >= _MIN_REGION_SIDE:
            out.append((left, height - top, right, height - bottom))
    groups: dict[tuple[int, int], list[float]] = {}
    for left, right, y in rules:
        groups.setdefault((round(left / 4), round(right / 4)), []).append(y)
    for (left4, right4), ys in groups.items():
        if len(ys) >= 2 and max(ys) - min(ys) > 8:
            out.append((left4 * 4 - 4, min(ys) - 1, right4 * 4 + 4, max(ys) + 1))
    return out


def _page_layout(pdf: pdfium.PdfDocument, index: int, budget: TextBudget, used: int) -> PageLayout:
    with open_page(pdf, index) as (page, textpage):
        width, height = page.get_size()
        text = bounded_text(textpage, index + 1, budget, used)
        lines = _lines_of(textpage, text, height)
        regions = _regions(page, width, height)
    return PageLayout(index + 1, text, width, height, tuple(lines), tuple(regions))


def iter_layouts(
    source: PdfSource | pdfium.PdfDocument,
    *,
    max_pages: int | None = None,
    require_text: bool = True,
    budget: TextBudget = TextBudget(),
) -> Iterator[PageLayout]:
    """Like :func:`iter_pages`, with each page's lines, font sizes and picture regions."""
    return each_page(source, _page_layout, max_pages=max_pages, require_text=require_text, budget=budget)


def text_rects(source: PdfSource, page_number: int, start: int, end: int) -> list[tuple[float, float, float, float]]:
    """Boxes of ``text[start:end]`` of a page as fractions (x0, top, x1, bottom) of its size.

    One box per printed line segment (pdfium merges neighbouring characters), for drawing a
    highlight over the rendered page. Empty when the page or the range does not exist.
    """
    with pdf_document(source) as pdf, PDFIUM_LOCK:
        if not 1 <= page_number <= len(pdf):
            return []
        page = pdf[page_number - 1]
        try:
            left, bottom, right, top = page.get_cropbox()
            width, height = (right - left) or 1.0, (top - bottom) or 1.0
            textpage = page.get_textpage()
            try:
                count = textpage.count_chars()
                start, end = max(0, start), min(end, count)
                if end <= start:
                    return []
                rects = []
                for i in range(textpage.count_rects(start, end - start)):
                    x0, b, r, t = textpage.get_rect(i)
                    rects.append(((x0 - left) / width, (top - t) / height, (r - left) / width, (top - b) / height))
                return rects
            finally:
                textpage.close()
        finally:
            page.close()


# --------------------------------------------------------------------------- superscripts

_MARK_CHARS = set("0123456789*∗†‡§¶,–-")
SUPERSCRIPT_SIZE = 0.85  # a mark is printed at most this share of its word's size
SUPERSCRIPT_RISE = 0.15  # and its baseline raised by at least this share of the word's size


def _origin_y(textpage: pdfium.PdfTextPage, index: int) -> float | None:
    x, y = ctypes.c_double(), ctypes.c_double()
    if not pdfium_c.FPDFText_GetCharOrigin(textpage, index, ctypes.byref(x), ctypes.byref(y)):
        return None
    return y.value


def _is_raised(anchor: tuple[float, float] | None, size: float, y: float | None) -> bool:
    """Smaller than the anchor letter and on a baseline raised above it."""
    return (
        anchor is not None
        and y is not None
        and 0 < size <= SUPERSCRIPT_SIZE * anchor[0]
        and y - anchor[1] >= SUPERSCRIPT_RISE * anchor[0]
    )


def _raised_marks(textpage: pdfium.PdfTextPage, text: str, start: int, end: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    anchor: tuple[float, float] | None = None  # (size, baseline) of the last letter read
    run_start = None
    for i in range(start, end):
        ch = text[i]
        anchor, raised = _read_char(textpage, ch, i, anchor)
        if raised:
            run_start = i if run_start is None else run_start
            continue
        if run_start is not None:
            out.append((run_start, i))
            run_start = None
        anchor = _anchor_after(ch, anchor)
    if run_start is not None:
        out.append((run_start, end))
    # a mark is digits or symbols; a raised comma or dash alone is not one
    return [(s, e) for s, e in out if any(c not in ",–-" for c in text[s:e])]


def _read_char(
    textpage: pdfium.PdfTextPage, ch: str, i: int, anchor: tuple[float, float] | None
) -> tuple[tuple[float, float] | None, bool]:
    """(the anchor after character ``i``, is the character a raised mark?): a letter printed on
    the line becomes the anchor; a mark character after one may sit raised above it."""
    if ch.isalpha() or ch == ")":
        size, y = _printed_size(textpage, i), _origin_y(textpage, i)
        # a raised letter keeps the anchor; it is no mark
        if ch.isalpha() and size > 0 and y is not None and not _is_raised(anchor, size, y):
            return (size, y), False
        return anchor, False
    if ch in _MARK_CHARS and anchor is not None:
        return anchor, _is_raised(anchor, _printed_size(textpage, i), _origin_y(textpage, i))
    return anchor, False


def _anchor_after(ch: str, anchor: tuple[float, float] | None) -> tuple[float, float] | None:
    """The anchor after a character that is no raised mark: kept over spaces, letters and closing
    punctuation, dropped after a digit or symbol printed on the line or other characters."""
    if ch in _MARK_CHARS and ch not in ",–-" and not ch.isalpha():
        return None  # a raised number after a digit is an exponent ("2¹⁰"), not a mark
    if not ch.isspace() and not ch.isalpha() and ch not in _MARK_CHARS:
        return anchor if ch in ".,;:)]”’\"'" else None
    return anchor


def superscripts(source: PdfSource, page_number: int, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Character ranges of ``text[start:end]`` of a page (offsets into the page text) that are
    footnote or reference marks set as superscripts: digits or symbols after a word, printed
    smaller than the word and on a raised baseline ("ar5iv⁸" → the "8"). Empty when the page
    does not exist or pdfium gives no character geometry."""
    with pdf_document(source) as pdf, PDFIUM_LOCK:
        if not 1 <= page_number <= len(pdf):
            return []
        with open_page(pdf, page_number - 1) as (_page, textpage):
            count = textpage.count_chars()
            text = textpage.get_text_range(0, count) if count else ""
            if len(text) != count:  # offsets would not be character indices
                return []
            return _raised_marks(textpage, text, max(0, start), min(count, count if end is None else end))
