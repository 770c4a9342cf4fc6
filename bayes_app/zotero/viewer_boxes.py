"""The viewer's boxes for the user's Zotero annotations on one page: Zotero's rectangles (PDF
points, y up from the bottom-left) as CSS percentages of the rendered page (its crop box),
with the annotation's colour (validated `#rrggbb`) and comment."""

from __future__ import annotations

from bayes_app.library import storage
from bayes_app.library.pdf.document import PDFIUM_LOCK, PdfError, pdf_document
from bayes_app.zotero.annotations import Annotation


def page_box(sha256: str, page: int) -> tuple[float, float, float, float] | None:
    """(left, bottom, right, top) of a stored PDF's page crop box in points; None if unavailable."""
    try:
        with storage.default_store().local_file(sha256) as path, pdf_document(path) as pdf, PDFIUM_LOCK:
            if not 1 <= page <= len(pdf):
                return None
            p = pdf[page - 1]
            try:
                return tuple(p.get_cropbox())
            finally:
                p.close()
    except (OSError, storage.StorageUnavailable, PdfError, ValueError):
        return None


def css_boxes(annotations: list[Annotation], page: int, box: tuple[float, float, float, float]) -> list[dict[str, str]]:
    """CSS boxes (percent strings) of the annotations on `page`."""
    left, bottom, right, top = box
    w, h = (right - left) or 1.0, (top - bottom) or 1.0
    out = []
    for a in annotations:
        if a.page != page:
            continue
        for x1, y1, x2, y2 in a.rects:
            out.append(
                {
                    "left": f"{(x1 - left) / w * 100:.3f}%",
                    "top": f"{(top - y2) / h * 100:.3f}%",
                    "width": f"{(x2 - x1) / w * 100:.3f}%",
                    "height": f"{(y2 - y1) / h * 100:.3f}%",
                    "color": a.color,
                    "comment": a.comment[:500],
                    "type": a.type,
                    "key": a.key,
                }
            )
    return out
