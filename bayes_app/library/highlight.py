"""Where a quote is in a document and which boxes of its page(s) to highlight for it."""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel import col, select

from bayes_app.db import session_scope
from bayes_app.library import ocr, pdf, storage
from bayes_app.library.continuation import PAGE_NUMBER_TAIL
from bayes_app.library.quotes import locate_quote_loose
from bayes_app.models import PageText

Span = tuple[int, int, int]  # (page, start, end): raw offsets into that page's pdfium text
# A page's last line when it is only a page number ("12", "iv"; pdfium may glue it to a
# hyphenation mark): a sentence running on to the next page reads past it.
_PAGE_NUMBER_TAIL = PAGE_NUMBER_TAIL


def find_quote_spans(pages: dict[int, str], page: int, quote: str) -> list[Span]:
    """The character ranges of ``quote`` in a document's page texts, nearest ``page`` first.

    One span when the quote lies on one page; two when it runs from the end of a page onto the
    next (the first page's trailing page number is skipped). Empty when it is nowhere."""
    order = sorted(pages, key=lambda p: (abs(p - page), p))
    for number in order:
        found = locate_quote_loose(pages[number], quote)
        if found is not None:
            return [(number, *found)]
    for number in order:
        if number + 1 not in pages:
            continue
        head = pages[number]
        tail_number = _PAGE_NUMBER_TAIL.search(head)
        if tail_number:
            head = head[: tail_number.start()]
        joined = head + "\n" + pages[number + 1]
        found = locate_quote_loose(joined, quote)
        if found is None or not (found[0] < len(head) < found[1] - 1):
            continue
        return [(number, found[0], len(head)), (number + 1, 0, found[1] - len(head) - 1)]
    return []


def _boxes(sha256: str, span: Span, ocr_words: Sequence[Sequence[float]] | None = None) -> list[dict[str, str]]:
    if ocr_words:  # an OCR'd page: the recognised words' boxes on the page image
        boxes = ocr.word_rects(ocr_words, span[1], span[2])
    else:
        try:
            with storage.default_store().local_file(sha256) as path:
                boxes = pdf.text_rects(path, *span)
        except (OSError, pdf.PdfError, storage.StorageUnavailable):
            boxes = []
    return [
        {
            "left": f"{x0 * 100:.3f}%",
            "top": f"{top * 100:.3f}%",
            "width": f"{(x1 - x0) * 100:.3f}%",
            "height": f"{(bottom - top) * 100:.3f}%",
        }
        for x0, top, x1, bottom in boxes
    ]


def locate_pages(
    document_id: str, sha256: str, page: int, quote: str
) -> tuple[int, dict[int, list[dict[str, str]]], str]:
    """(page to show, highlight boxes per page as CSS percentages of the page, note for the reader).

    The quote is looked up in the stored page text (the requested page first, then the others
    nearest first, then across each page break) and its boxes are pdfium's character boxes of
    the matched characters, merged per printed line: the viewer draws them over the rendered
    page, so they never depend on how the browser's text layer orders or scrolls the text."""
    with session_scope() as db:
        rows = db.exec(
            select(PageText.page, PageText.text, PageText.ocr_words)
            .where(PageText.document_id == document_id)
            .order_by(col(PageText.page))
        ).all()
    pages = {number: text for number, text, _ in rows}
    words = {number: w for number, _, w in rows if w}
    spans = find_quote_spans(pages, page, quote)
    if not spans:
        return (
            page,
            {},
            (
                f"The quoted passage could not be found in this document's text, so nothing "
                f"is highlighted; showing page {page}."
            ),
        )
    shown = spans[0][0]
    rects = {span[0]: _boxes(sha256, span, words.get(span[0])) for span in spans}
    if len(spans) > 1:
        note = f"The quoted passage runs from page {shown} on to page {spans[-1][0]}."
    else:
        note = "" if shown == page else f"The quoted passage is on page {shown}, shown here."
    return shown, rects, note


def locate(document_id: str, sha256: str, page: int, quote: str) -> tuple[int, list[dict[str, str]], str]:
    """Like :func:`locate_pages`, with only the boxes of the page to show."""
    shown, rects, note = locate_pages(document_id, sha256, page, quote)
    return shown, rects.get(shown, []), note
