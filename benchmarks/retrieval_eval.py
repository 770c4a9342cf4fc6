"""Retrieval quality on SciFact: BM25 (sparse) vs dense vs hybrid (RRF), through qdrant-edge.

    .venv/bin/python benchmarks/retrieval_eval.py [--data DIR] [--qrels train.tsv]
        [--model all-MiniLM-L6-v2] [--prefetch 20 100] [--avgdl 100] [--cache DIR]

Uses the app's own code: ``bayes_app.search.sparse`` for the sparse vectors and
``bayes_app.search.embeddings`` for the dense ones, indexed in the real engine
(qdrant-edge: named dense + sparse vectors, ``Modifier.Idf``, prefetch + ``Fusion.Rrf(k=60)``).
Only queries that appear in the qrels are scored. nDCG@10 as in BEIR/trec_eval (graded
gains, ideal list from the qrels); recall@100 = share of relevant documents in the top
100. Latency: the index query alone, and with the query's encoding (sparse + dense).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a script from anywhere
from bayes_app.search import sparse
from bayes_app.search.embeddings import get_embedder

RRF_K = 60
BATCH = 256


def load(data: Path, qrels_name: str) -> tuple[list[str], list[str], dict[str, str], dict[str, dict[str, int]]]:
    """(doc ids, doc texts, query id → text, query id → {doc id: gain}) for the qrels' queries."""
    ids, texts = [], []
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            ids.append(str(d["_id"]))
            texts.append(f"{d.get('title', '')} {d['text']}".strip())
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with open(data / "qrels" / qrels_name, encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if int(row["score"]) > 0:
                qrels[row["query-id"]][row["corpus-id"]] = int(row["score"])
    queries = {}
    with open(data / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            if str(q["_id"]) in qrels:
                queries[str(q["_id"])] = q["text"]
    return ids, texts, queries, {q: qrels[q] for q in queries}


def ndcg_at(ranked: list[str], rel: dict[str, int], k: int = 10) -> float:
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rel: dict[str, int], k: int = 100) -> float:
    return len(set(ranked[:k]) & set(rel)) / len(rel) if rel else 0.0


def dense_vectors(model: str, texts: list[str], cache: Path | None) -> np.ndarray:
    """Passage embeddings (cached on disk by model + corpus hash when ``cache`` is given)."""
    key = hashlib.sha256(("\n".join(texts) + model).encode()).hexdigest()[:16]
    path = cache / f"{model}-{key}.npy" if cache else None
    if path and path.exists():
        return np.load(path)
    emb = get_embedder(model)
    t0 = time.perf_counter()
    vecs = emb.embed_passages(texts)
    dt = time.perf_counter() - t0
    print(f"embedded {len(texts)} passages with {model} in {dt:.1f} s ({len(texts) / dt:.1f}/s)", file=sys.stderr)
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
    return vecs


def build_shard(path: Path, dense: np.ndarray, sparse_vecs: list[sparse.SparseVec]) -> qe.EdgeShard:
    cfg = qe.EdgeConfig(
        vectors={"dense": qe.EdgeVectorParams(size=dense.shape[1], distance=qe.Distance.Cosine)},
        sparse_vectors={"sparse": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )
    shard = qe.EdgeShard.create(str(path), cfg)
    for start in range(0, len(dense), BATCH):
        points = [
            qe.Point(i, {"dense": dense[i].tolist(), "sparse": qe.SparseVector(*sparse_vecs[i])}, {})
            for i in range(start, min(len(dense), start + BATCH))
        ]
        shard.update(qe.UpdateOperation.upsert_points(points))
    shard.flush()
    return shard


def evaluate(
    search: Callable[[str], list[int]], doc_ids: list[str], queries: dict[str, str], qrels: dict[str, dict[str, int]]
) -> tuple[float, float, float]:
    """(mean nDCG@10, mean recall@100, p50 latency ms) of ``search(query text) -> point ids``."""
    ndcg, recall, lat = [], [], []
    for qid, text in queries.items():
        t0 = time.perf_counter()
        ranked = [doc_ids[i] for i in search(text)]
        lat.append(time.perf_counter() - t0)
        ndcg.append(ndcg_at(ranked, qrels[qid]))
        recall.append(recall_at(ranked, qrels[qid]))
    return float(np.mean(ndcg)), float(np.mean(recall)), float(np.median(lat) * 1000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    ap.add_argument("--qrels", default="train.tsv", help="file name under DATA/qrels")
    ap.add_argument("--model", default=None, help="embedding model (default: the app's default)")
    ap.add_argument("--prefetch", type=int, nargs="+", default=[20, 100], help="per-side depth(s) for RRF")
    ap.add_argument("--avgdl", type=float, default=sparse.AVGDL, help="BM25 avgdl for document vectors")
    ap.add_argument("--cache", type=Path, default=None, help="directory to cache passage embeddings")
    args = ap.parse_args()
    if min(args.prefetch) < 20:
        ap.error("--prefetch must be at least 20")

    doc_ids, texts, queries, qrels = load(args.data, args.qrels)
    model = get_embedder(args.model)
    print(
        f"SciFact: {len(texts)} documents, {len(queries)} queries ({args.qrels}); "
        f"dense model {model.name}; avgdl {args.avgdl:g}",
        file=sys.stderr,
    )
    sparse_vecs = [sparse.document_vector(t, avgdl=args.avgdl) for t in texts]
    dense = dense_vectors(model.name, texts, args.cache)

    with tempfile.TemporaryDirectory(prefix="retrieval_eval_") as tmp:
        shard = build_shard(Path(tmp) / "shard", dense, sparse_vecs)
        searches = _Searches(shard, model, queries)
        methods: list[tuple[str, Callable[[str], list[int]], bool, bool]] = [
            ("bm25 (sparse)", searches.bm25, False, True),
            (f"dense ({model.name})", searches.dense_only, True, False),
        ] + [(f"hybrid rrf k={RRF_K}, top {d}/side", searches.hybrid(d), True, True) for d in args.prefetch]
        rows = []
        for name, fn, wd, ws in methods:
            fn(next(iter(queries.values())))  # warm up
            nd, rc, p50 = evaluate(fn, doc_ids, queries, qrels)
            _, _, p50_enc = evaluate(
                lambda t, fn=fn, wd=wd, ws=ws: (searches.encode_cost(t, wd, ws), fn(t))[1], doc_ids, queries, qrels
            )
            rows.append((name, nd, rc, p50, p50_enc))
        shard.close()
    _print_rows(rows)


class _Searches:
    """The methods compared, over one shard: BM25, dense, and their RRF fusion at a prefetch depth."""

    def __init__(self, shard: Any, model: Any, queries: dict[str, str]) -> None:
        self.shard, self.model = shard, model
        self.q_sparse = {t: qe.SparseVector(*sparse.query_vector(t)) for t in queries.values()}
        self.q_dense = {t: model.embed_query(t).tolist() for t in queries.values()}

    def ids(self, req: qe.QueryRequest) -> list[int]:
        return [p.id for p in self.shard.query(req)]

    def bm25(self, t: str) -> list[int]:
        return self.ids(qe.QueryRequest(limit=100, query=qe.Query.Nearest(self.q_sparse[t], using="sparse")))

    def dense_only(self, t: str) -> list[int]:
        return self.ids(qe.QueryRequest(limit=100, query=qe.Query.Nearest(self.q_dense[t], using="dense")))

    def hybrid(self, depth: int) -> Callable[[str], list[int]]:
        def run(t: str) -> list[int]:
            return self.ids(
                qe.QueryRequest(
                    limit=100,
                    query=qe.Fusion.Rrf(k=RRF_K),
                    prefetches=[
                        qe.Prefetch(limit=depth, query=qe.Query.Nearest(self.q_dense[t], using="dense")),
                        qe.Prefetch(limit=depth, query=qe.Query.Nearest(self.q_sparse[t], using="sparse")),
                    ],
                )
            )

        return run

    def encode_cost(self, t: str, with_dense: bool, with_sparse: bool) -> None:
        if with_sparse:
            sparse.query_vector(t)
        if with_dense:
            self.model.embed_query(t)


def _print_rows(rows: list[tuple[str, float, float, float, float]]) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"{'method':<{width}}  nDCG@10  recall@100  query p50 ms  (+encode)")
    for name, nd, rc, p50, p50_enc in rows:
        print(f"{name:<{width}}  {nd:7.3f}  {rc:10.3f}  {p50:12.2f}  {p50_enc:9.2f}")
    base = rows[0][1]
    for name, nd, *_ in rows[2:]:
        print(f"{name} / bm25 nDCG@10: {nd / base:.3f}")


if __name__ == "__main__":
    main()
