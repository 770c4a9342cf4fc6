"""OCR every page of a PDF the way ingestion does (library.scanned.recognise_pages, the
settings' pixel budget) in THIS process, and print JSON: the pages read, the unread pages'
reasons, and the process's peak RSS. Run as its own process so the peak is OCR's alone:

    python -m tests.support.ocr_peak FILE.pdf [MAX_PIXELS]
"""

from __future__ import annotations

import json
import sys


def main(path: str, max_pixels: int | None = None) -> dict:
    from bayes_app.library import ocr, pdf
    from bayes_app.library.pdf.document import TextBudget
    from bayes_app.library.scanned import OcrOptions, recognise_pages

    options = OcrOptions(max_pixels=max_pixels or ocr.MAX_PIXELS)
    unread: list[str] = []
    words: dict = {}
    error = ""
    with pdf.pdf_document(path) as document:
        pages = list(pdf.iter_layouts(document, budget=TextBudget(), require_text=False))
        try:
            recognise_pages(document, pages, words, options, lambda *a, **k: None, unread)
        except pdf.PdfError as err:
            error = err.message
    return {
        "read": sorted(words),
        "with_text": [p.number for p in pages if pdf.page_has_text(p.text)],
        "unread": unread,
        "error": error,
        "peak_rss_mb": _peak_rss_mb(),
    }


def _peak_rss_mb() -> float:
    """This process image's own peak RSS (VmHWM). Not getrusage's ru_maxrss: Linux carries that
    across exec, so a child spawned (vfork) by a 1 GB pytest worker would report the worker's."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)))
