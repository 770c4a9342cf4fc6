"""Calibrate the search relevance floor on SciFact train: what share of real queries would
the floor mark "no strong match", and how many nonsense queries it catches.

    .venv/bin/python benchmarks/relevance_floor.py [--data DIR] [--model all-MiniLM-L6-v2]
        [--cache DIR] [--target 0.02]

For every SciFact train claim (the real queries), the best cosine between the query and any
corpus abstract (what the search's strongest hit would score in a library holding the
corpus) and the cosine of its best gold abstract. The floor in
``bayes_app.search.relevance.FLOORS`` is printed next to the highest floor that keeps the
share of hidden real queries under ``--target``; nonsense queries (random letter strings
and off-topic questions) show what the floor is for.
"""

from __future__ import annotations

import argparse
import random
import string
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from retrieval_eval import dense_vectors, load

from bayes_app.search import relevance
from bayes_app.search.embeddings import get_embedder

OFF_TOPIC = [
    "qwxzzv blorf",
    "recipe for chocolate chip cookies",
    "who won the football world cup",
    "cheap flights to lisbon in may",
    "how to tie a bowline knot",
    "lyrics of a famous pop song",
    "best hiking boots for winter",
    "fix a flat bicycle tyre",
    "medieval castle architecture styles",
    "stock price forecast for tomorrow",
    "zzzz yyyy xxxx",
    "asdf jkl qwerty uiop",
]


def nonsense(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [
            "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 8)))
            for _ in range(rng.randint(1, 3))
        ]
        out.append(" ".join(words))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=REPO.parent.parent / "shared" / "data" / "scifact")
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/bayes-bench-cache"))
    ap.add_argument("--target", type=float, default=0.02)
    args = ap.parse_args()
    if not args.data.exists():
        args.data = Path("/work/shared/data/scifact")
    args.cache.mkdir(parents=True, exist_ok=True)
    ids, texts, queries, qrels = load(args.data, "train.tsv")
    model = get_embedder(args.model)
    corpus = dense_vectors(model.name, texts, args.cache)
    pos = {d: k for k, d in enumerate(ids)}

    def best(q: str) -> float:
        return float(np.max(corpus @ model.embed_query(q)))

    top, gold = [], []
    for qid, text in queries.items():
        qv = model.embed_query(text)
        sims = corpus @ qv
        top.append(float(sims.max()))
        gold.append(max(float(sims[pos[d]]) for d in qrels[qid] if d in pos))
    top_a, gold_a = np.array(top), np.array(gold)
    junk = np.array([best(q) for q in nonsense(200)])
    off = np.array([best(q) for q in OFF_TOPIC])

    grid = np.round(np.arange(0.05, 0.8, 0.005), 3)
    ok = [f for f in grid if (top_a < f).mean() < args.target]
    suggested = max(ok) if ok else None
    floor = relevance.FLOORS.get(model.name)
    print(f"model {model.name}: {len(queries)} SciFact train queries, {len(ids)} abstracts")
    p1, p2, p5, p50 = np.percentile(top_a, [1, 2, 5, 50])
    print(f"top-1 cosine of real queries: p1 {p1:.3f}  p2 {p2:.3f}  p5 {p5:.3f}  median {p50:.3f}")
    print(f"best nonsense query: {junk.max():.3f} (p50 {np.median(junk):.3f}); off-topic: max {off.max():.3f}")
    print()
    print(f"{'floor':>22} | real queries hidden | gold abstract below floor | nonsense caught | off-topic caught")
    rows = [("in code (relevance.py)", floor), (f"highest under {args.target:.0%}", suggested)]
    rows += [("", f) for f in (0.30, 0.33, 0.35)]
    for name, f in rows:
        if f is None:
            print(f"{name:>22} | (none)")
            continue
        print(
            f"{name + f' {f:.3f}':>22} | {(top_a < f).mean():19.2%} | {(gold_a < f).mean():25.2%} | "
            f"{(junk < f).mean():15.1%} | {(off < f).mean():16.1%}"
        )


if __name__ == "__main__":
    main()
