"""Scanned-paper ingestion: OCR pages/s, and end-to-end pages/s of a scanned paper (every page
an image, as a scanner makes it) next to the same paper with its text layer, as a ratio.

    .venv/bin/python benchmarks/ocr_ingest.py [--pages 20] [--dpi 300]

The scanned PDF is made from the bundled explanations paper (its first ``--pages`` pages
rendered at ``--dpi``). The pipeline and harness are `ingest.py`'s (`ingest.ingest_document`
with OCR on, a temporary SQLite database, a real index server process).
"""

from __future__ import annotations

import argparse
import io
import time

from ingest import accept, harness, ingest_bytes

PAPER = "explanations-molecular-prediction-models.pdf"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--dpi", type=int, default=300)
    args = ap.parse_args()

    with harness("bayes-bench-ocr-") as h:
        import pypdfium2 as pdfium

        from bayes_app.library import ingest, ocr
        from tests.support import scans

        src = pdfium.PdfDocument(str(scans.PAPERS / PAPER))
        n = min(args.pages, len(src))
        text_pdf = pdfium.PdfDocument.new()
        text_pdf.import_pages(src, list(range(n)))
        buf = io.BytesIO()
        text_pdf.save(buf)
        scanned = scans.image_pdf([(PAPER, k + 1) for k in range(n)], dpi=args.dpi)

        # OCR alone, page by page (render + recognise)
        doc = pdfium.PdfDocument(scanned)
        t = time.perf_counter()
        for k in range(n):
            ocr.recognise(doc[k], dpi=args.dpi)
        ocr_s = time.perf_counter() - t

        rows = []
        for label, data, options in (
            ("text layer", buf.getvalue(), None),
            ("scanned, OCR", scanned, ingest.OcrOptions(dpi=args.dpi)),
        ):
            acc = accept(h, data, f"{label}.pdf")
            t = time.perf_counter()
            r = ingest_bytes(h, acc, options)
            rows.append((label, r.pages / (time.perf_counter() - t), r.chunks))
        print(f"{n} pages of {PAPER} at {args.dpi} dpi")
        print(f"{'':28s}{'pages/s':>10s}{'s/page':>8s}{'chunks':>8s}")
        print(f"{'OCR alone (render+Tesseract)':28s}{n / ocr_s:10.2f}{ocr_s / n:8.2f}")
        for label, pps, chunks in rows:
            print(f"{'end to end, ' + label:28s}{pps:10.2f}{1 / pps:8.2f}{chunks:8d}")
        print(
            f"ratio: the scanned paper is {rows[0][1] / rows[1][1]:.0f}x slower to ingest than its text-layer original"
        )


if __name__ == "__main__":
    main()
