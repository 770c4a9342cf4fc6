"""Scanned-paper ingestion: OCR pages/s, and end-to-end pages/s of a scanned paper (every page
an image, as a scanner makes it) next to the same paper with its text layer, as a ratio.

    .venv/bin/python benchmarks/ocr_ingest.py [--pages 20] [--dpi 300]

The scanned PDF is made from the bundled explanations paper (its first ``--pages`` pages
rendered at ``--dpi``). The pipeline is the app's own (`ingest.ingest_document` with OCR on)
writing to a temporary SQLite database and a real index server process.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
PAPER = "explanations-molecular-prediction-models.pdf"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--dpi", type=int, default=300)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bayes-bench-ocr-"))
    from tests.support import scans
    from tests.support.procs import free_port, start_index

    port = free_port()
    os.environ.update(
        BAYES_DATA_DIR=str(tmp), DATABASE_URL=f"sqlite:///{tmp / 'b.db'}", QDRANT_URL=f"http://127.0.0.1:{port}"
    )
    index_proc = start_index(tmp / "index", port, tmp / "index.log")
    try:
        import pypdfium2 as pdfium
        from sqlmodel import Session

        from bayes_app import db
        from bayes_app.accounts import service
        from bayes_app.library import ingest, ocr, uploads
        from bayes_app.search import runtime

        db.migrate()
        with db.session_scope() as s:
            owner = service.register(s, "bench@example.com", "tangerine-sky-42").id
        src = pdfium.PdfDocument(str(scans.PAPERS / PAPER))
        n = min(args.pages, len(src))
        text_pdf = pdfium.PdfDocument.new()
        text_pdf.import_pages(src, list(range(n)))
        buf = io.BytesIO()
        text_pdf.save(buf)
        text_bytes = buf.getvalue()
        scanned = scans.image_pdf([(PAPER, k + 1) for k in range(n)], dpi=args.dpi)

        # OCR alone, page by page (render + recognise)
        doc = pdfium.PdfDocument(scanned)
        t = time.perf_counter()
        for k in range(n):
            ocr.recognise(doc[k], dpi=args.dpi)
        ocr_pps = n / (time.perf_counter() - t)

        embedder, index = runtime.embedder(), runtime.index()
        embedder.embed_passages(["warm up"])
        rows = []
        for label, data, options in (
            ("text layer", text_bytes, None),
            ("scanned, OCR", scanned, ingest.OcrOptions(dpi=args.dpi)),
        ):
            acc = uploads.accept(owner, io.BytesIO(data), f"{label}.pdf")
            t = time.perf_counter()
            r = ingest.ingest_document(
                lambda: Session(db.get_engine(), expire_on_commit=False),
                acc.document_id,
                acc.generation,
                files_root=Path(tmp / "files"),
                index=index,
                embedder=embedder,
                ocr_options=options,
            )
            rows.append((label, r.pages / (time.perf_counter() - t), r.chunks))
        print(f"{'':28s}{'pages/s':>10s}{'chunks':>8s}")
        print(f"{'OCR alone (' + str(args.dpi) + ' dpi)':28s}{ocr_pps:10.2f}")
        for label, pps, chunks in rows:
            print(f"{'end to end, ' + label:28s}{pps:10.2f}{chunks:8d}")
        print(f"scanned paper is {rows[0][1] / rows[1][1]:.0f}x slower to ingest than its text-layer original")
    finally:
        index_proc.terminate()
        index_proc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
