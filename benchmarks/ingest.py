"""Ingestion throughput: pages/s end to end (parse → chunk → embed → index) next to raw
pypdfium2 text extraction (the limit), as a ratio.

    .venv/bin/python benchmarks/ingest.py [--pdf PATH] [--copies 4]

Each copy gets distinct bytes (a trailing PDF comment) so it is a new document. The
pipeline is the app's own (`bayes_app.library.ingest.ingest_document`) writing to a
temporary SQLite database and to a real index server process over qdrant-client.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pdf", default=str(REPO / "tests/fixtures/papers/explanations-molecular-prediction-models.pdf"))
    ap.add_argument("--copies", type=int, default=4)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bayes-bench-ingest-"))
    from tests.support.procs import free_port, start_index

    port = free_port()
    os.environ.update(
        BAYES_DATA_DIR=str(tmp), DATABASE_URL=f"sqlite:///{tmp / 'b.db'}", QDRANT_URL=f"http://127.0.0.1:{port}"
    )
    index_proc = start_index(tmp / "index", port, tmp / "index.log")
    try:
        from sqlmodel import Session

        from bayes_app import db
        from bayes_app.accounts import service
        from bayes_app.library import ingest, pdf, uploads
        from bayes_app.search import runtime

        db.migrate()
        with db.session_scope() as s:
            owner = service.register(s, "bench@example.com", "tangerine-sky-42").id
        data = Path(args.pdf).read_bytes()

        # the limit: raw pypdfium2 text extraction
        t = time.perf_counter()
        pages = 0
        for _ in range(args.copies):
            pages += len(pdf.extract_pages(data))
        raw_pps = pages / (time.perf_counter() - t)

        embedder = runtime.embedder()
        index = runtime.index()
        embedder.embed_passages(["warm up"])
        # loaded on the first non-English passage otherwise (~4 s, not ingestion work)
        from bayes_app.search import crosslang
        from bayes_app.search.embeddings import get_embedder

        get_embedder(crosslang.CROSS_MODEL).embed_passages(["warm up"])
        docs = []
        for i in range(args.copies):
            acc = uploads.accept(owner, io.BytesIO(data + f"\n% copy {i}\n".encode()), f"copy{i}.pdf")
            docs.append(acc)
        t = time.perf_counter()
        pages = chunks = 0
        for acc in docs:
            r = ingest.ingest_document(
                lambda: Session(db.get_engine(), expire_on_commit=False),
                acc.document_id,
                acc.generation,
                files_root=Path(tmp / "files"),
                index=index,
                embedder=embedder,
            )
            pages += r.pages
            chunks += r.chunks
        dt = time.perf_counter() - t
        e2e_pps = pages / dt
        print(f"{'':28s}{'pages/s':>10s}")
        print(f"{'raw pypdfium2 extraction':28s}{raw_pps:10.1f}")
        print(
            f"{'Bayes end to end':28s}{e2e_pps:10.1f}   ({chunks / dt:.1f} chunks/s, "
            f"{pages} pages, {chunks} chunks, {dt:.1f} s, embedder {embedder.name})"
        )
        print(
            f"ratio end-to-end / raw: {e2e_pps / raw_pps:.3f}   target ≥ 10 pages/s: "
            f"{'met' if e2e_pps >= 10 else 'NOT met'}"
        )
    finally:
        index_proc.terminate()
        index_proc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
