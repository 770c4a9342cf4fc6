"""Parsing speed with and without the structure analysis, pages/s, side by side.

    .venv/bin/python benchmarks/structure_speed.py [--repeat 5] [PDF ...]

"before": the pipeline's text path before roles existed (pdfium page text → chunks);
"after": what ingestion runs now (page text + line boxes, font sizes and picture regions →
roles → reference list → role-run chunks). Embedding, which dominates ingestion
(benchmarks/ingest.py), is the same in both and left out.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bayes_app.library import chunking, pdf, references, structure

PAPERS = sorted((REPO / "tests" / "fixtures" / "papers").glob("*.pdf"))


def before(path: Path) -> int:
    pages = pdf.extract_pages(path)
    chunking.chunk_pages(pages)
    return len(pages)


def after(path: Path) -> int:
    for fn in vars(structure).values():  # no help from memoised line tests of an earlier run
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()
    pages = list(pdf.iter_layouts(path))
    spans = structure.analyze(pages)
    references.parse_references(pages, spans)
    list(chunking.iter_structured_chunks(pages, spans))
    return len(pages)


def rate(fn, path: Path, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        n = fn(path)
        best = min(best, time.perf_counter() - t)
    return n / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pdfs", nargs="*", type=Path, default=PAPERS)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'paper':48} {'pages':>5} {'before p/s':>11} {'after p/s':>10} {'after/before':>12}")
    for path in args.pdfs:
        b, a = rate(before, path, args.repeat), rate(after, path, args.repeat)
        n = len(pdf.extract_pages(path))
        print(f"{path.name[:48]:48} {n:5d} {b:11.0f} {a:10.0f} {a / b:12.2f}")


if __name__ == "__main__":
    main()
