"""Ingestion throughput: pages/s end to end (parse → chunk → embed → index) next to raw
pypdfium2 text extraction (the limit), as a ratio.

    .venv/bin/python benchmarks/ingest.py [--pdf PATH] [--copies 4]

Each copy gets distinct bytes (a trailing PDF comment) so it is a new document. The
pipeline is the app's own (`bayes_app.library.ingest.ingest_document`) writing to a
temporary SQLite database and to a real index server process over qdrant-client.
`harness` and `ingest_bytes` are shared with `ocr_ingest.py`.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


@contextmanager
def harness(prefix: str) -> Iterator[SimpleNamespace]:
    """A temporary data dir, SQLite database and index server process, a registered owner,
    and the app's warmed-up embedder and index client: (tmp, owner, embedder, index)."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    from tests.support.procs import free_port, start_index

    port = free_port()
    os.environ.update(
        BAYES_DATA_DIR=str(tmp), DATABASE_URL=f"sqlite:///{tmp / 'b.db'}", QDRANT_URL=f"http://127.0.0.1:{port}"
    )
    index_proc = start_index(tmp / "index", port, tmp / "index.log")
    try:
        from bayes_app import db
        from bayes_app.accounts import service
        from bayes_app.search import runtime

        db.migrate()
        with db.session_scope() as s:
            owner = service.register(s, "bench@example.com", "tangerine-sky-42").id
        embedder = runtime.embedder()
        embedder.embed_passages(["warm up"])
        # loaded on the first non-English passage otherwise (~4 s, not ingestion work)
        from bayes_app.search import crosslang
        from bayes_app.search.embeddings import get_embedder

        get_embedder(crosslang.CROSS_MODEL).embed_passages(["warm up"])
        yield SimpleNamespace(tmp=tmp, owner=owner, embedder=embedder, index=runtime.index())
    finally:
        index_proc.terminate()
        index_proc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


def accept(h: SimpleNamespace, data: bytes, name: str):
    """Store an upload for the harness's owner (not timed)."""
    from bayes_app.library import uploads

    return uploads.accept(h.owner, io.BytesIO(data), name)


def ingest_bytes(h: SimpleNamespace, acc, ocr_options=None):
    """Ingest one accepted upload with the app's pipeline; its IngestResult."""
    from sqlmodel import Session

    from bayes_app import db
    from bayes_app.library import ingest

    return ingest.ingest_document(
        lambda: Session(db.get_engine(), expire_on_commit=False),
        acc.document_id,
        acc.generation,
        files_root=Path(h.tmp / "files"),
        index=h.index,
        embedder=h.embedder,
        ocr_options=ocr_options,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pdf", default=str(REPO / "tests/fixtures/papers/explanations-molecular-prediction-models.pdf"))
    ap.add_argument("--copies", type=int, default=4)
    args = ap.parse_args()

    with harness("bayes-bench-ingest-") as h:
        from bayes_app.library import pdf

        data = Path(args.pdf).read_bytes()

        # the limit: raw pypdfium2 text extraction
        t = time.perf_counter()
        pages = 0
        for _ in range(args.copies):
            pages += len(pdf.extract_pages(data))
        raw_pps = pages / (time.perf_counter() - t)

        docs = [accept(h, data + f"\n% copy {i}\n".encode(), f"copy{i}.pdf") for i in range(args.copies)]
        t = time.perf_counter()
        pages = chunks = 0
        for acc in docs:
            r = ingest_bytes(h, acc)
            pages += r.pages
            chunks += r.chunks
        dt = time.perf_counter() - t
        e2e_pps = pages / dt
        print(f"{'':28s}{'pages/s':>10s}")
        print(f"{'raw pypdfium2 extraction':28s}{raw_pps:10.1f}")
        print(
            f"{'Bayes end to end':28s}{e2e_pps:10.1f}   ({chunks / dt:.1f} chunks/s, "
            f"{pages} pages, {chunks} chunks, {dt:.1f} s, embedder {h.embedder.name})"
        )
        print(
            f"ratio end-to-end / raw: {e2e_pps / raw_pps:.3f}   target ≥ 10 pages/s: "
            f"{'met' if e2e_pps >= 10 else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
