"""Embedding throughput per model, next to its tokenizer alone, plus one paper's ingestion.

    .venv/bin/python benchmarks/embed_speed.py [--models all-MiniLM-L6-v2 multilingual-e5-small]
        [--n 96] [--paper PDF]

Passages: SciFact abstracts of 240-256 MiniLM WordPiece tokens (about one ~250-token
chunk). Paper: the chunker's chunks of a real PDF; "pages/s" counts text extraction,
chunking, sparse vectors and embedding (not the index upsert or the database).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script from anywhere
from bayes_app.search import sparse
from bayes_app.search.embeddings import DEFAULT_MODEL, E5Embedder, MiniLMEmbedder, get_embedder

SHARED = REPO.parent / "shared" / "data"


def rate(fn: Callable[[], object], count: int) -> float:
    t0 = time.perf_counter()
    fn()
    return count / (time.perf_counter() - t0)


def passages(corpus: Path, n: int) -> list[str]:
    """``n`` SciFact abstracts of 240-256 MiniLM tokens."""
    tok = get_embedder(DEFAULT_MODEL)._tokenizer  # type: ignore[attr-defined]
    out = []
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            text = f"{d['title']} {d['text']}"
            if len(tok.encode(text).ids) >= 240 and len(text) < 2000:
                out.append(text)
                if len(out) == n:
                    break
    return out


def tokenizer_rate(emb: object, texts: list[str]) -> float:
    if isinstance(emb, MiniLMEmbedder):
        return rate(lambda: emb._tokenizer.encode_batch(texts), len(texts))
    if isinstance(emb, E5Embedder):
        return rate(lambda: [emb._model.token_count(t) for t in texts], len(texts))
    return float("nan")


def paper_chunks(pdf: Path) -> tuple[int, list[str], float]:
    from bayes_app.library.chunking import chunk_pages, embedding_text
    from bayes_app.library.pdf import iter_pages

    t0 = time.perf_counter()
    pages = list(iter_pages(pdf))
    texts = [embedding_text(c.text) for c in chunk_pages(pages)]
    return len(pages), texts, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["all-MiniLM-L6-v2", "multilingual-e5-small"])
    ap.add_argument("--n", type=int, default=96, help="passages per model")
    ap.add_argument("--corpus", type=Path, default=SHARED / "scifact" / "corpus.jsonl")
    ap.add_argument("--paper", type=Path, default=SHARED / "papers" / "explanations-molecular-prediction-models.pdf")
    args = ap.parse_args()

    texts = passages(args.corpus, args.n)
    n_pages, chunks, parse_s = paper_chunks(args.paper)
    t0 = time.perf_counter()
    for c in chunks:
        sparse.document_vector(c)
    sparse_s = time.perf_counter() - t0
    queries = [
        "What is the effect of temperature on enzyme activity?",
        "Does long-term aspirin use cause stomach bleeding?",
    ] * 20
    print(
        f"paper {args.paper.name}: {n_pages} pages, {len(chunks)} chunks, "
        f"text+chunking {parse_s:.2f} s, sparse vectors {sparse_s:.2f} s"
    )
    print(
        f"{'model':<24}{'tokenizer p/s':>15}{'embed p/s':>11}{'query p50 ms':>14}"
        f"{'paper chunks/s':>16}{'paper pages/s':>15}"
    )
    for name in args.models:
        emb = get_embedder(name)
        emb.embed_passages(texts[:4])  # warm up
        tok = tokenizer_rate(emb, texts)
        speed = rate(lambda: emb.embed_passages(texts), len(texts))
        lat = []
        for q in queries:
            t = time.perf_counter()
            emb.embed_query(q)
            lat.append(time.perf_counter() - t)
        t = time.perf_counter()
        emb.embed_passages(chunks)
        embed_s = time.perf_counter() - t
        pages_s = n_pages / (parse_s + sparse_s + embed_s)
        print(
            f"{emb.name:<24}{tok:>15.0f}{speed:>11.1f}{np.median(lat) * 1000:>14.1f}"
            f"{len(chunks) / embed_s:>16.1f}{pages_s:>15.1f}"
        )


if __name__ == "__main__":
    main()
