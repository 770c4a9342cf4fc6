"""Where a quote is in a document and which boxes of the page to highlight for it."""

from __future__ import annotations

from sqlmodel import col, select

from bayes_app.db import session_scope
from bayes_app.library import pdf, storage
from bayes_app.library.quotes import locate_quote_loose
from bayes_app.models import PageText
from bayes_app.settings import get_settings


def locate(document_id: str, sha256: str, page: int, quote: str) -> tuple[int, list[dict[str, str]], str]:
    """(page to show, highlight boxes as CSS percentages, note for the reader).

    The quote is looked up in the stored page text (the requested page first, then the others
    nearest first) and its boxes come from pdfium's character boxes, so figure labels and
    captions are highlighted even where the browser's text layer orders them differently."""
    with session_scope() as db:
        pages = dict(db.exec(select(PageText.page, PageText.text).where(
            PageText.document_id == document_id).order_by(col(PageText.page))).all())
    order = sorted(pages, key=lambda p: (abs(p - page), p))
    for number in order:
        found = locate_quote_loose(pages[number], quote)
        if found is None:
            continue
        path = storage.path_for(get_settings().files_path, sha256)
        try:
            boxes = pdf.text_rects(path, number, *found)
        except (OSError, pdf.PdfError):
            boxes = []
        rects = [{"left": f"{x0 * 100:.3f}%", "top": f"{top * 100:.3f}%",
                  "width": f"{(x1 - x0) * 100:.3f}%", "height": f"{(bottom - top) * 100:.3f}%"}
                 for x0, top, x1, bottom in boxes]
        note = "" if number == page else f"The quoted passage is on page {number}, shown here."
        return number, rects, note
    return page, [], (f"The quoted passage could not be found in this document's text, so nothing "
                      f"is highlighted; showing page {page}.")
