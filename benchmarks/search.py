"""Hybrid search latency through the app's search function (query embedding included) at
10k and 100k chunks, next to the index query alone and the query embedding alone.

    .venv/bin/python benchmarks/search.py [--sizes 10000 100000] [--queries 200]
        [--scifact ../shared/data/scifact]

Chunk texts are SciFact abstracts (cycled), so the BM25 side sees real term statistics;
dense vectors of the stored chunks are random unit vectors (embedding 100k passages would
take ~30 min on 2 cores and does not change query latency). Queries are SciFact queries.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def pct(xs: list[float], p: float) -> float:
    return float(np.percentile(np.array(xs) * 1000, p))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--scifact", default=str(REPO.parent / "shared/data/scifact"))
    args = ap.parse_args()
    with open(Path(args.scifact) / "corpus.jsonl") as lines:
        corpus = [json.loads(line) for line in lines]
    texts = [(d.get("title", "") + ". " + d["text"])[:1500] for d in corpus]
    with open(Path(args.scifact) / "queries.jsonl") as lines:
        queries = [json.loads(line)["text"] for line in lines][: args.queries]

    from tests.support.procs import free_port, start_index

    print(
        f"{'chunks':>8s} {'app search p50':>15s} {'p95':>8s} {'index only p50':>15s} {'p95':>8s} "
        f"{'embed q p50':>12s} {'ratio app/index p95':>20s}"
    )
    for n in args.sizes:
        tmp = Path(tempfile.mkdtemp(prefix="bayes-bench-search-"))
        port = free_port()
        os.environ.update(
            BAYES_DATA_DIR=str(tmp), DATABASE_URL=f"sqlite:///{tmp / 'b.db'}", QDRANT_URL=f"http://127.0.0.1:{port}"
        )
        from bayes_app import settings

        settings.get_settings.cache_clear()
        proc = start_index(tmp / "index", port, tmp / "index.log")
        try:
            run_size(n, texts, queries)
        finally:
            proc.terminate()
            proc.wait(10)
            shutil.rmtree(tmp, ignore_errors=True)
            from bayes_app import db
            from bayes_app.search import runtime

            runtime.reset()
            db.dispose_engines()


def run_size(n: int, texts: list[str], queries: list[str]) -> None:
    from sqlalchemy import insert

    from bayes_app import db
    from bayes_app.accounts import service
    from bayes_app.models import Chunk, Document
    from bayes_app.search import runtime, sparse
    from bayes_app.search.hybrid import search
    from bayes_app.search.index import IndexPoint

    db.migrate()
    with db.session_scope() as s:
        owner = service.register(s, "bench@example.com", "tangerine-sky-42").id
        doc = Document(owner_id=owner, filename="corpus.pdf", file_sha256="0" * 64, title="SciFact", status="indexed")
        s.add(doc)
        s.flush()
        doc_id = doc.id
    index, emb = runtime.index(), runtime.embedder()
    rng = np.random.default_rng(0)
    rows = []
    batch = []
    for i in range(n):
        text = texts[i % len(texts)]
        cid = f"{i:032x}"
        rows.append(
            {
                "id": cid,
                "document_id": doc_id,
                "owner_id": owner,
                "chunk_index": i,
                "page": 1 + i // 5,
                "char_start": 0,
                "char_end": len(text),
                "text": text,
                "content_hash": cid * 2,
                "token_count": 200,
            }
        )
        v = rng.standard_normal(emb.dim).astype(np.float32)
        sv = sparse.document_vector(text)
        batch.append(
            IndexPoint(
                id=cid, dense=v / np.linalg.norm(v), sparse=(sv.indices, sv.values), owner_id=owner, document_id=doc_id
            )
        )
        if len(batch) == 1000:
            index.upsert_chunks(batch)
            batch = []
    if batch:
        index.upsert_chunks(batch)
    with db.get_engine().begin() as conn:
        for i in range(0, len(rows), 5000):
            conn.execute(insert(Chunk), rows[i : i + 5000])
    time.sleep(5)  # let the index server's optimizer run after the bulk load

    from sqlmodel import Session

    for q in queries[:10]:  # warm up
        with Session(db.get_engine()) as s:
            search(s, index, emb, owner, q, 10)
    app, only, embed = [], [], []
    for q in queries:
        t = time.perf_counter()
        with Session(db.get_engine()) as s:
            hits = search(s, index, emb, owner, q, 10)
        app.append(time.perf_counter() - t)
        assert hits
        t = time.perf_counter()
        dense = emb.embed_query(q)
        embed.append(time.perf_counter() - t)
        sv = sparse.query_vector(q)
        t = time.perf_counter()
        index.hybrid_search(dense, (sv.indices, sv.values), owner_id=owner, limit=10)
        only.append(time.perf_counter() - t)
    print(
        f"{n:8d} {pct(app, 50):13.1f}ms {pct(app, 95):6.1f}ms {pct(only, 50):13.1f}ms "
        f"{pct(only, 95):6.1f}ms {pct(embed, 50):10.1f}ms {pct(app, 95) / pct(only, 95):20.2f}"
        f"   target p95 ≤ 50 ms: {'met' if pct(app, 95) <= 50 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
