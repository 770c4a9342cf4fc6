"""Pages without a usable text layer, read by OCR during ingestion: the page's layout (text,
lines with boxes and sizes) built from the recognised words, so structure analysis, chunking
and quotes treat it like any page; the words' boxes are kept for highlighting."""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass

import pypdfium2 as pdfium

from bayes_app.library import ocr, pdf
from bayes_app.library.line_features import doc_stats
from bayes_app.library.pdf import PDFIUM_LOCK, PageLayout, TextLine
from bayes_app.library.pdf.document import open_page
from bayes_app.models import DocStatus
from bayes_app.search import crosslang

_SCAN_AREA = 0.5  # an image covering this share of the page is the scan, not a figure in it


@dataclass(frozen=True, slots=True)
class ScannedPage:
    layout: PageLayout
    words: tuple[ocr.OcrWord, ...]
    lang: str


_ASCENDING = frozenset("bdfhklt0123456789()[]{}|/\\!?&%$#@'\"")
_DESCENDING = frozenset("gjpqy()[]{}|")


def ink_share(line: str) -> float:
    """The share of the font size a line's ink spans, from the glyphs it holds: x-height ≈ 0.47
    or ascenders/capitals ≈ 0.7 above the baseline, plus descenders ≈ 0.21 (commas ≈ 0.12)
    below it. Dividing every box's height by one share (0.9) made lines without descenders
    ("3 Datasets", "rized as follows:") read a fifth too small, and labelled them small print."""
    above = 0.7 if any(c.isupper() or c in _ASCENDING for c in line) else 0.47
    if any(c in _DESCENDING for c in line):
        return above + 0.21
    return above + (0.12 if any(c in ",;" for c in line) else 0.0)


_LINE_END_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=\r\n[^\W\d_])")


def mark_hyphenation(text: str) -> str:
    """A hyphen at a line's end between letters becomes the hyphenation mark pdfium gives a text
    layer (U+FFFE, same length, so word offsets hold): a recognised page's broken words are then
    joined, quoted and matched as a text page's are (`library.hyphens`, `library.quotes`)."""
    return _LINE_END_HYPHEN.sub("\ufffe", text)


def _font_size(text: str, boxes: list[ocr.OcrWord], height: float) -> float:
    """A line's font size: the median of its words' box heights over the share of the size their
    glyphs span (a superscript mark "He*¹" makes its word's box taller, not the line's size)."""
    sizes = sorted((b.bottom - b.top) * height / ink_share(text[b.start : b.end]) for b in boxes)
    return round(statistics.median(sizes), 2)


def _lines(text: str, words: tuple[ocr.OcrWord, ...], width: float, height: float) -> tuple[TextLine, ...]:
    """A TextLine per recognised line (``\\r\\n``-separated), boxed by its words, in points."""
    lines = []
    pos = 0
    k = 0
    for raw in text.split("\r\n"):
        start, end = pos, pos + len(raw)
        pos = end + 2
        boxes = []
        while k < len(words) and words[k].start < end:
            if words[k].start >= start:
                boxes.append(words[k])
            k += 1
        if not boxes:
            continue
        top, bottom = min(b.top for b in boxes) * height, max(b.bottom for b in boxes) * height
        lines.append(
            TextLine(
                start,
                end,
                min(b.x0 for b in boxes) * width,
                top,
                max(b.x1 for b in boxes) * width,
                bottom,
                _font_size(text, boxes, height),
            )
        )
    return tuple(lines)


def read_page(
    document: pdfium.PdfDocument,
    layout: PageLayout,
    lang: str,
    *,
    dpi: int = ocr.DPI,
    timeout_s: float = 60.0,
    max_pixels: int = ocr.MAX_PIXELS,
) -> ScannedPage:
    """OCR one page of an open document (rendering holds the pdfium lock, recognition does not)
    and return its layout in place of ``layout`` (regions kept). ocr.PageTooLarge for a page
    the pixel budget cannot hold at a readable resolution (nothing is rendered)."""
    with PDFIUM_LOCK, open_page(document, layout.number - 1) as (page, _textpage):
        image = ocr.render(page, dpi, max_pixels)
    result = ocr.recognise_image(image, lang, timeout_s)
    del image  # the page's pixels go before the next page is drawn
    text = mark_hyphenation(result.text)
    lines = _lines(text, result.words, layout.width, layout.height)
    # The scan itself is an image over the whole page: kept as a region, every recognised line
    # would be "figure" text (never quoted, ranked low). Only smaller images stay figures.
    page_area = max(layout.width * layout.height, 1.0)
    regions = tuple(r for r in layout.regions if (r[2] - r[0]) * (r[3] - r[1]) < _SCAN_AREA * page_area)
    return ScannedPage(
        PageLayout(layout.number, text, layout.width, layout.height, lines, regions), result.words, result.lang
    )


@dataclass(frozen=True)
class OcrOptions:
    """Reading pages without a text layer (settings ``BAYES_OCR``, ``BAYES_OCR_PAGE_TIMEOUT_S``)."""

    page_timeout_s: float = 60.0
    dpi: int = ocr.DPI
    lang: str = ""  # an installed Tesseract language chosen at upload ("" = follow detection)
    max_pixels: int = ocr.MAX_PIXELS  # BAYES_OCR_MAX_PIXELS


def _match_sizes(pages: list[pdf.PageLayout], scanned: set[int]) -> None:
    """Scale the recognised pages' line sizes so that their body text has the size of the
    text-layer pages' body text (sizes read from OCR boxes are estimates): structure analysis
    then tells body, small print and headings apart on both kinds of page alike."""
    text_pages = [p for p in pages if p.number not in scanned]
    target = doc_stats(text_pages).body_size if text_pages else 0.0
    if not target:
        return
    for i, page in enumerate(pages):
        if page.number not in scanned or not page.lines:
            continue
        own = doc_stats([page]).body_size
        if own:
            k = target / own
            lines = tuple(dataclasses.replace(ln, size=round(ln.size * k, 2)) for ln in page.lines)
            pages[i] = dataclasses.replace(page, lines=lines)


def recognise_pages(
    document,
    pages: list[pdf.PageLayout],
    words: dict[int, tuple[ocr.OcrWord, ...]],
    options: OcrOptions,
    report: Callable[..., None],
    unread: list[str] | None = None,
) -> str:
    """OCR the pages that need it, in place; returns the Tesseract languages used ("" when no
    page needed OCR). The language is the upload's choice (``options.lang``), else follows the
    text-layer pages' (or the first recognised page's) detected language. A page that cannot be
    read (too large for the pixel budget, or past the time limit) stays without text and its
    reason, naming it, is added to ``unread``; the other pages are kept. No text at all →
    PdfError("no_text"), with the unread pages' reasons."""
    unread = [] if unread is None else unread
    scans = [p for p in pages if ocr.needs_ocr(p.text)]
    lang = ""
    if scans:
        known = " ".join(p.text for p in pages if not ocr.needs_ocr(p.text))[:20_000]
        if options.lang:
            lang = ocr.chosen_lang(options.lang)
        else:
            lang = ocr.tesseract_lang(crosslang.passage_languages([known])[0] if known.strip() else None)
        detect_first = not options.lang and not known.strip()  # from the first recognised page
        for k, page in enumerate(scans):
            report(DocStatus.RECOGNISING, k, len(scans), force=k == 0)
            try:
                scanned = read_page(
                    document,
                    page,
                    lang,
                    dpi=options.dpi,
                    timeout_s=options.page_timeout_s,
                    max_pixels=options.max_pixels,
                )
            except ocr.PageTooLarge as err:
                unread.append(f"Page {page.number} was not read: {err}.")
                continue
            except TimeoutError:
                unread.append(
                    f"Page {page.number} was not read: text recognition took longer than "
                    f"{options.page_timeout_s:.0f} s; the page may be damaged."
                )
                continue
            pages[page.number - 1] = scanned.layout
            if scanned.words:
                words[page.number] = scanned.words
            if k == 0 and detect_first and scanned.layout.text.strip():
                lang = ocr.tesseract_lang(crosslang.passage_languages([scanned.layout.text])[0])
        report(DocStatus.RECOGNISING, len(scans), len(scans), force=True)
        _match_sizes(pages, {p.number for p in scans})
    if not any(pdf.page_has_text(p.text) for p in pages):
        if unread:
            raise pdf.PdfError("no_text", "No page of this PDF could be read. " + " ".join(unread[:5]))
        raise pdf.PdfError(
            "no_text",
            "No text could be found in this PDF, not even by text recognition (OCR): "
            "its pages look like pictures without words.",
        )
    return lang
