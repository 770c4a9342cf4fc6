"""Vector index: the index server (qdrant-client -> REST -> qdrant-edge) vs qdrant-edge in-process.

    .venv/bin/python benchmarks/search_index.py [--sizes 10000 100000] [--queries 200]

Per size: upsert throughput, then hybrid query p50/p95 (dense + ~50-term sparse, both
prefetched x40 with the owner filter, RRF k=60, top 10 with payload) before and after
the segment optimizer has built the HNSW index. Three ways in:
  edge    the raw engine in this process (the limit),
  http    raw HTTP to the index server (httpx + orjson, no qdrant-client models),
  client  IndexClient (qdrant-client), which is what the app runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import orjson
import qdrant_edge as qe

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from bayes_app.search.index import IndexClient, IndexPoint
from bayes_app.search.index_server.convert import to_edge_config, to_points, to_query_request

DIM, NNZ, VOCAB, BATCH = 384, 50, 50_000, 256
REPO = Path(__file__).resolve().parents[1]


class IndexServer:
    """The index server in its own process, on a free port."""

    def __init__(self, path: Path, *extra: str) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.log = path.parent / "server.log"
        cmd = [sys.executable, "-m", "bayes_app.search.index_server", "--path", str(path), "--port", str(port), *extra]
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=out, stderr=out
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("index server did not start") from None
                time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)


class Data:
    """Random chunks: unit 384-d dense, zipf-ish ~50-term sparse, 100 chunks/doc, docs dealt to owners."""

    def __init__(self, n: int, nq: int, owners: int = 10, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        p = 1.0 / (np.arange(VOCAB) + 10.0)
        p /= p.sum()
        term_ids = rng.choice(2**31 - 1, size=VOCAB, replace=False)

        def sparse(k: int, tf: bool) -> tuple[list[int], list[float]]:
            idx = np.unique(term_ids[rng.choice(VOCAB, size=k, p=p)])
            vals = rng.integers(1, 5, len(idx)).astype(float) if tf else np.ones(len(idx))
            return idx.tolist(), vals.tolist()

        dense = rng.standard_normal((n, DIM)).astype(np.float32)
        dense /= np.linalg.norm(dense, axis=1, keepdims=True)
        self.points = [
            IndexPoint(
                id=uuid.UUID(int=int(rng.integers(2**62)) << 64 | i).hex,
                dense=dense[i],
                sparse=sparse(NNZ, True),
                owner_id=f"user-{(i // 100) % owners}",
                document_id=f"doc-{i // 100}",
                collection_ids=[f"col-{(i // 1000) % 7}"],
                page=(i % 100) // 5,
                chunk_index=i % 100,
            )
            for i in range(n)
        ]
        qd = rng.standard_normal((nq, DIM)).astype(np.float32)
        qd /= np.linalg.norm(qd, axis=1, keepdims=True)
        self.queries = [(qd[i].tolist(), sparse(8, False), f"user-{rng.integers(owners)}") for i in range(nq)]


def query_body(dense: list[float], sparse: tuple[list[int], list[float]], owner: str) -> dict:
    """The JSON IndexClient.hybrid_search sends."""
    flt = {"must": [{"key": "owner_id", "match": {"value": owner}}]}
    return {
        "prefetch": [
            {"query": dense, "using": "dense", "limit": 40, "filter": flt},
            {"query": {"indices": sparse[0], "values": sparse[1]}, "using": "sparse", "limit": 40, "filter": flt},
        ],
        "query": {"rrf": {"k": 60}},
        "filter": flt,
        "limit": 10,
        "with_payload": True,
    }


def point_json(p: IndexPoint) -> dict:
    return {
        "id": str(uuid.UUID(p.id)),
        "vector": {"dense": p.dense.tolist(), "sparse": {"indices": p.sparse[0], "values": p.sparse[1]}},
        "payload": {
            "owner_id": p.owner_id,
            "document_id": p.document_id,
            "collection_ids": p.collection_ids,
            "page": p.page,
            "chunk_index": p.chunk_index,
        },
    }


COLLECTION_BODY = {
    "vectors": {"dense": {"size": DIM, "distance": "Cosine"}},
    "sparse_vectors": {"sparse": {"modifier": "idf"}},
}


def latency(fn: Callable[[int], object], nq: int) -> dict[str, float]:
    for i in range(min(10, nq)):
        fn(i)
    lat = []
    for i in range(nq):
        t = time.perf_counter()
        fn(i)
        lat.append(time.perf_counter() - t)
    ms = np.array(lat) * 1000
    return {"p50": round(float(np.percentile(ms, 50)), 2), "p95": round(float(np.percentile(ms, 95)), 2)}


def bench_edge(data: Data, root: Path) -> dict:
    """The raw engine, same config and request as the server builds."""
    config, _ = to_edge_config(COLLECTION_BODY)
    shard = qe.EdgeShard.create(str(root / "edge"), config)
    for key in ("owner_id", "document_id", "collection_ids"):
        shard.update(qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword))
    pts = data.points
    t = time.perf_counter()
    for s in range(0, len(pts), BATCH):
        batch = to_points({"points": [point_json(p) for p in pts[s : s + BATCH]]})
        shard.update(qe.UpdateOperation.upsert_points(batch))
    shard.flush()
    res: dict = {"upsert_pts_s": round(len(pts) / (time.perf_counter() - t))}
    reqs = [to_query_request(query_body(*q)) for q in data.queries]
    res["before"] = latency(lambda i: shard.query(reqs[i]), len(reqs))
    t = time.perf_counter()
    shard.optimize()
    res["optimize_s"] = round(time.perf_counter() - t, 1)
    res["after"] = latency(lambda i: shard.query(reqs[i]), len(reqs))
    shard.close()
    return res


def wait_optimized(srv: IndexServer, timeout: float = 3600) -> float:
    """Stay idle until the server's optimizer has run; its duration from the server log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"optimized chunks in ([\d.]+)s", srv.log.read_text())
        if found:
            return float(found.group(1))
        time.sleep(1)
    raise TimeoutError("optimizer did not run")


def bench_server(data: Data, root: Path) -> dict:
    srv = IndexServer(root / "server", "--optimize-idle", "5", "--optimize-min-changes", "1000")
    try:
        http = httpx.Client(base_url=srv.url, timeout=600)
        ix = IndexClient(srv.url, collection="chunks", timeout=600)
        ix.ensure_collection(dim=DIM)
        t = time.perf_counter()
        ix.upsert_chunks(data.points)
        res: dict = {"client_upsert_pts_s": round(len(data.points) / (time.perf_counter() - t))}
        bodies = [orjson.dumps(query_body(*q)) for q in data.queries]
        nq = len(bodies)

        def raw(i: int) -> None:
            r = http.post(
                "/collections/chunks/points/query", content=bodies[i], headers={"content-type": "application/json"}
            )
            assert len(orjson.loads(r.content)["result"]["points"]) == 10

        def client(i: int) -> None:
            d, sp, owner = data.queries[i]
            assert len(ix.hybrid_search(d, sp, owner, limit=10, prefetch_limit=40)) == 10

        res["http_before"] = latency(raw, nq)
        res["client_before"] = latency(client, nq)
        res["optimize_s"] = round(wait_optimized(srv), 1)
        res["http_after"] = latency(raw, nq)
        res["client_after"] = latency(client, nq)

        # raw-HTTP upsert into a second collection: the server's own write cost
        http.put("/collections/raw", json=COLLECTION_BODY).raise_for_status()
        n = min(len(data.points), 20_000)
        chunks = [
            orjson.dumps({"points": [point_json(p) for p in data.points[s : s + BATCH]]}) for s in range(0, n, BATCH)
        ]
        t = time.perf_counter()
        for body in chunks:
            http.put(
                "/collections/raw/points?wait=true", content=body, headers={"content-type": "application/json"}
            ).raise_for_status()
        res["http_upsert_pts_s"] = round(n / (time.perf_counter() - t))
        ix.close()
        http.close()
    finally:
        srv.stop()
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--owners", type=int, default=10, help="1 = a single user owns every chunk")
    ap.add_argument("--skip-edge", action="store_true")
    args = ap.parse_args()
    rows = []
    for n in args.sizes:
        data = Data(n, args.queries, args.owners)
        root = Path(tempfile.mkdtemp(prefix="bayes-bench-index-"))
        try:
            edge = {} if args.skip_edge else bench_edge(data, root)
            server = bench_server(data, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        row = {"n": n, "owners": args.owners, "edge": edge, "server": server}
        rows.append(row)
        print(json.dumps(row), flush=True)

    print(
        f"\n{'points':>8} {'phase':>7} | {'edge p50/p95':>14} | {'http p50/p95':>14} "
        f"| {'client p50/p95':>15} | client/edge p95"
    )
    for r in rows:
        e, s = r["edge"], r["server"]
        for phase in ("before", "after"):
            ep = e.get(phase, {"p50": float("nan"), "p95": float("nan")})
            hp, cp = s[f"http_{phase}"], s[f"client_{phase}"]
            print(
                f"{r['n']:>8} {phase:>7} | {ep['p50']:>6.2f}/{ep['p95']:<7.2f} | {hp['p50']:>6.2f}/{hp['p95']:<7.2f} |"
                f" {cp['p50']:>6.2f}/{cp['p95']:<8.2f} | {cp['p95'] / ep['p95']:.2f}x"
            )
        print(
            f"{'':>8} upsert  | edge {e.get('upsert_pts_s', 0):>7} pts/s | http {s['http_upsert_pts_s']:>6} pts/s |"
            f" client {s['client_upsert_pts_s']:>6} pts/s | optimize edge {e.get('optimize_s')} s,"
            f" server {s['optimize_s']} s"
        )


if __name__ == "__main__":
    main()
