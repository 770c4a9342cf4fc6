"""Where a quote is in a document and which boxes of the page to highlight for it."""

from __future__ import annotations

from sqlmodel import col, select

from bayes_app.db import session_scope
from bayes_app.library import ocr, pdf, storage
from bayes_app.library.quotes import locate_quote_loose
from bayes_app.models import PageText


def locate(document_id: str, sha256: str, page: int, quote: str) -> tuple[int, list[dict[str, str]], str]:
    """(page to show, highlight boxes as CSS percentages, note for the reader).

    The quote is looked up in the stored page text (the requested page first, then the others
    nearest first) and its boxes come from pdfium's character boxes, so figure labels and
    captions are highlighted even where the browser's text layer orders them differently."""
    with session_scope() as db:
        rows = db.exec(select(PageText.page, PageText.text, PageText.ocr_words).where(
            PageText.document_id == document_id).order_by(col(PageText.page))).all()
    pages = {number: text for number, text, _ in rows}
    words = {number: w for number, _, w in rows if w}
    order = sorted(pages, key=lambda p: (abs(p - page), p))
    for number in order:
        found = locate_quote_loose(pages[number], quote)
        if found is None:
            continue
        if number in words:  # an OCR'd page: the recognised words' boxes on the image
            boxes = ocr.word_rects(words[number], *found)
        else:
            try:
                with storage.default_store().local_file(sha256) as path:
                    boxes = pdf.text_rects(path, number, *found)
            except (OSError, pdf.PdfError, storage.StorageUnavailable):
                boxes = []
        rects = [{"left": f"{x0 * 100:.3f}%", "top": f"{top * 100:.3f}%",
                  "width": f"{(x1 - x0) * 100:.3f}%", "height": f"{(bottom - top) * 100:.3f}%"}
                 for x0, top, x1, bottom in boxes]
        note = "" if number == page else f"The quoted passage is on page {number}, shown here."
        return number, rects, note
    return page, [], (f"The quoted passage could not be found in this document's text, so nothing "
                      f"is highlighted; showing page {page}.")
