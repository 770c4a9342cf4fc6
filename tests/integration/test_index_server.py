"""The index server as a real separate process, driven through IndexClient / qdrant-client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from qdrant_client import QdrantClient, models
from qdrant_client.common.version_check import is_compatible
from qdrant_client.http.exceptions import UnexpectedResponse

from bayes_app.search.index import Hit, IndexClient, IndexPoint
from tests.support.procs import free_port

pytestmark = [pytest.mark.timeout(180), pytest.mark.waits]  # waits: see pytest.ini
REPO = Path(__file__).resolve().parents[2]
DIM = 8


# ----------------------------------------------------------------------------- helpers


class IndexServer:
    """`python -m bayes_app.search.index_server` in its own process."""

    def __init__(self, path: Path, *extra: str, port: int | None = None) -> None:
        self.path = path
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = path.parent / f"index-{self.port}.log"
        cmd = [
            sys.executable,
            "-m",
            "bayes_app.search.index_server",
            "--path",
            str(path),
            "--port",
            str(self.port),
            *extra,
        ]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self, timeout: float = 30) -> IndexServer:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"index server exited with {self.proc.returncode}:\n{self.output()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"index server not ready:\n{self.output()}")

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill9()


def rand_points(
    n: int,
    owner: str,
    *,
    dim: int = DIM,
    docs: int = 4,
    collections: tuple[str, ...] = (),
    seed: int = 0,
    nnz: int = 5,
) -> list[IndexPoint]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        terms = np.unique(rng.integers(0, 1000, nnz))
        out.append(
            IndexPoint(
                id=uuid.uuid4().hex,
                dense=rng.standard_normal(dim).astype(np.float32),
                sparse=(terms.tolist(), rng.integers(1, 4, len(terms)).astype(float).tolist()),
                owner_id=owner,
                document_id=f"{owner}-doc{i % docs}",
                collection_ids=list(collections),
                page=i // 3,
                chunk_index=i,
            )
        )
    return out


def search(ix: IndexClient, owner: str, seed: int = 1, **kw) -> list[Hit]:
    rng = np.random.default_rng(seed)
    terms = np.unique(rng.integers(0, 1000, 4)).tolist()
    return ix.hybrid_search(rng.standard_normal(DIM).tolist(), (terms, [1.0] * len(terms)), owner, **kw)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexServer]:
    srv = IndexServer(tmp_path_factory.mktemp("index") / "data").wait_ready()
    yield srv
    srv.stop()


@pytest.fixture
def ix(server: IndexServer) -> Iterator[IndexClient]:
    client = IndexClient(server.url, collection=f"t_{uuid.uuid4().hex[:10]}")
    client.ensure_collection(client.collection, DIM)
    yield client
    client.client.delete_collection(client.collection)
    client.close()


# ------------------------------------------------------------------------------- tests


def test_version_is_compatible_with_installed_client(server: IndexServer) -> None:
    from importlib import metadata

    info = httpx.get(server.url + "/").json()
    assert is_compatible(metadata.version("qdrant-client"), info["version"])


def test_owner_isolation_and_filters(ix: IndexClient) -> None:
    a = rand_points(60, "alice", collections=("col-a",), seed=1)
    b = rand_points(40, "bob", collections=("col-b",), seed=2)
    ix.upsert_chunks(a + b)
    assert (ix.count(), ix.count(owner_id="alice"), ix.count(owner_id="bob")) == (100, 60, 40)

    for seed in range(10):
        hits = search(ix, "bob", seed, limit=50)
        assert hits
        assert all(h.payload["owner_id"] == "bob" for h in hits)
    # alice's document, asked for by bob: nothing
    assert search(ix, "bob", document_ids=["alice-doc0"], limit=50) == []
    assert search(ix, "bob", collection_ids=["col-a"], limit=50) == []

    hits = search(ix, "alice", document_ids=["alice-doc1", "alice-doc2"], limit=100)
    assert {h.payload["document_id"] for h in hits} == {"alice-doc1", "alice-doc2"}
    assert len(hits) == 30
    assert len(search(ix, "alice", collection_ids=["col-a"], limit=100)) == 60
    assert search(ix, "alice", document_ids=[]) == []
    # point ids come back as the app's 32-hex chunk ids
    ids = {p.id for p in a}
    assert {h.point_id for h in search(ix, "alice", limit=100)} == ids


def test_delete_document_and_set_collections(ix: IndexClient) -> None:
    ix.upsert_chunks(rand_points(40, "alice", docs=4, collections=("inbox",)))
    assert ix.count(document_id="alice-doc0") == 10

    ix.set_collections("alice-doc1", ["thesis", "reading"])
    moved = search(ix, "alice", collection_ids=["thesis"], limit=100)
    assert {h.payload["document_id"] for h in moved} == {"alice-doc1"}
    assert len(moved) == 10
    assert all(h.payload["collection_ids"] == ["thesis", "reading"] for h in moved)
    assert len(search(ix, "alice", collection_ids=["inbox"], limit=100)) == 30

    ix.delete_document("alice-doc0")
    assert ix.count(document_id="alice-doc0") == 0
    assert ix.count(owner_id="alice") == 30
    assert all(h.payload["document_id"] != "alice-doc0" for h in search(ix, "alice", limit=100))


def test_reupsert_same_ids_is_idempotent(ix: IndexClient) -> None:
    pts = rand_points(30, "alice")
    ix.upsert_chunks(pts)
    ix.upsert_chunks(pts)
    assert ix.count() == 30
    changed = [IndexPoint(**{**_fields(p), "page": 999}) for p in pts[:5]]
    ix.upsert_chunks(changed)
    assert ix.count() == 30
    got = ix.client.retrieve(ix.collection, [str(uuid.UUID(p.id)) for p in pts[:6]])
    assert sorted(r.payload["page"] for r in got) == sorted([999] * 5 + [pts[5].page])
    ix.delete_chunks([p.id for p in pts[:3]])
    assert ix.count() == 27


def _fields(p: IndexPoint) -> dict:
    return {f: getattr(p, f) for f in IndexPoint.__slots__}


def test_roles_filter_relabel_and_cosine(ix: IndexClient) -> None:
    """Excluded roles stay out (points without a role stay in), set_roles relabels kept
    points, and with_cosine returns the query-passage cosine."""
    pts = rand_points(12, "rhea", docs=1, seed=5)
    pts = [IndexPoint(**{**_fields(p), "role": "reference" if k < 4 else "body"}) for k, p in enumerate(pts)]
    ix.upsert_chunks(pts)
    ids = {p.id for p in pts}
    ref_ids = {p.id for p in pts[:4]}
    every = {h.point_id for h in search(ix, "rhea", limit=50)}
    assert every == ids
    kept = {h.point_id for h in search(ix, "rhea", limit=50, exclude_roles=["reference"])}
    assert kept == ids - ref_ids
    ix.set_roles([p.id for p in pts[:2]], "body")
    kept = {h.point_id for h in search(ix, "rhea", limit=50, exclude_roles=["reference"])}
    assert kept == ids - {p.id for p in pts[2:4]}
    target = pts[6]
    dense = np.asarray(target.dense, dtype=np.float64)
    [top] = ix.hybrid_search((dense / np.linalg.norm(dense)).tolist(), target.sparse, "rhea", limit=1, with_cosine=True)
    assert top.point_id == target.id
    assert top.dense == pytest.approx(1.0, abs=1e-3)


def test_ensure_collection_is_idempotent_and_checks_dim(ix: IndexClient) -> None:
    ix.ensure_collection(ix.collection, DIM)
    info = ix.client.get_collection(ix.collection)
    assert set(info.payload_schema) == {"owner_id", "document_id", "collection_ids", "role"}
    assert info.config.params.sparse_vectors["sparse"].modifier == models.Modifier.IDF
    with pytest.raises(ValueError, match="dense size 8"):
        ix.ensure_collection(ix.collection, 16)


def test_qdrant_api_surface(server: IndexServer) -> None:
    """The raw qdrant-client calls beyond IndexClient, incl. int ids and Qdrant's errors."""
    c = QdrantClient(url=server.url)
    name = f"raw_{uuid.uuid4().hex[:8]}"
    assert not c.collection_exists(name)
    c.create_collection(
        name,
        vectors_config={"d": models.VectorParams(size=4, distance=models.Distance.DOT)},
        sparse_vectors_config={"s": models.SparseVectorParams()},
    )
    assert c.collection_exists(name)
    assert name in [x.name for x in c.get_collections().collections]
    with pytest.raises(UnexpectedResponse) as err:
        c.create_collection(name, vectors_config={"d": models.VectorParams(size=4, distance=models.Distance.DOT)})
    assert err.value.status_code == 409
    assert "already exists" in err.value.structured()["status"]["error"]

    c.upsert(
        name,
        [
            models.PointStruct(
                id=i,
                vector={"d": [float(i), 1, 0, 0], "s": models.SparseVector(indices=[i % 3], values=[1.0])},
                payload={"tag": "even" if i % 2 == 0 else "odd", "n": i},
            )
            for i in range(1, 21)
        ],
    )
    c.upsert(
        name,
        models.Batch(
            ids=[100, 101], vectors={"d": [[0, 0, 1, 0], [0, 0, 0, 1]]}, payloads=[{"tag": "b"}, {"tag": "b"}]
        ),
    )
    assert c.count(name).count == 22
    _assert_queries(c, name)
    c.set_payload(name, {"tag": "x"}, points=[1, 2])
    assert {r.id: r.payload["tag"] for r in c.retrieve(name, [1, 2, 3])} == {1: "x", 2: "x", 3: "odd"}
    c.delete(name, points_selector=models.PointIdsList(points=[1, 2]))
    assert c.count(name, exact=True).count == 20

    with pytest.raises(UnexpectedResponse) as err:
        c.query_points(name, query=[1, 0, 0], using="d")
    assert err.value.status_code == 400
    assert "dimension" in err.value.structured()["status"]["error"]
    c.delete_collection(name)
    with pytest.raises(UnexpectedResponse) as err:
        c.get_collection(name)
    assert err.value.status_code == 404
    assert err.value.structured()["status"]["error"] == f"Not found: Collection `{name}` doesn't exist!"
    assert not c.delete_collection(name)

    bad = httpx.post(f"{server.url}/collections/{name}/points/count", content=b"{not json")
    assert bad.status_code == 400
    assert bad.json()["status"]["error"].startswith("Format error in JSON body")
    c.close()


def _assert_queries(c: QdrantClient, name: str) -> None:
    """Nearest, filtered, fused (RRF), sparse, batched queries and a filtered scroll over the 22 points."""
    top = c.query_points(name, query=[1, 0, 0, 0], using="d", limit=3).points
    assert [p.id for p in top] == [20, 19, 18]
    flt = models.Filter(
        must=[models.FieldCondition(key="tag", match=models.MatchValue(value="odd"))],
        must_not=[models.HasIdCondition(has_id=[19])],
    )
    assert [p.id for p in c.query_points(name, query=[1, 0, 0, 0], using="d", query_filter=flt, limit=2).points] == [
        17,
        15,
    ]
    twice = [models.Prefetch(query=[1, 0, 0, 0], using="d", limit=5)] * 2
    fused = c.query_points(name, prefetch=twice, query=models.FusionQuery(fusion=models.Fusion.RRF), limit=3).points
    assert [p.id for p in fused] == [20, 19, 18]
    assert fused[0].score == pytest.approx(2 / 2)  # Qdrant's default RRF k is 2
    sparse = c.query_points(name, query=models.SparseVector(indices=[1], values=[1.0]), using="s", limit=20).points
    assert sorted(p.id for p in sparse) == [i for i in range(1, 21) if i % 3 == 1]
    batch = c.query_batch_points(
        name,
        [
            models.QueryRequest(query=[1, 0, 0, 0], using="d", limit=1),
            models.QueryRequest(query=[0, 0, 1, 0], using="d", limit=1),
        ],
    )
    assert [r.points[0].id for r in batch] == [20, 100]

    seen, offset = [], None
    while True:
        page, offset = c.scroll(
            name,
            limit=7,
            offset=offset,
            scroll_filter=models.Filter(
                must=[models.FieldCondition(key="tag", match=models.MatchAny(any=["even", "b"]))]
            ),
        )
        seen += [p.id for p in page]
        if offset is None:
            break
    assert sorted(seen) == [*range(2, 21, 2), 100, 101]


def test_real_shape_dim_384(server: IndexServer) -> None:
    ix = IndexClient(server.url, collection=f"t384_{uuid.uuid4().hex[:8]}")
    ix.ensure_collection(ix.collection, 384)
    pts = rand_points(1500, "alice", dim=384, docs=30, nnz=50, seed=3) + rand_points(
        500, "bob", dim=384, nnz=50, seed=4
    )
    assert ix.upsert_chunks(pts) == 2000
    # the query = a chunk's own vectors -> that chunk is first
    for target in (pts[7], pts[1234]):
        hits = ix.hybrid_search(target.dense, target.sparse, "alice", limit=5)
        assert hits[0].point_id == target.id
        assert hits[0].score == pytest.approx(2 / 60, rel=1e-3)  # rank 1 on both sides, RRF k=60
    assert all(h.payload["owner_id"] == "bob" for h in ix.hybrid_search(pts[7].dense, pts[7].sparse, "bob", limit=20))
    ix.client.delete_collection(ix.collection)
    ix.close()


def test_kill_9_after_write_keeps_data(tmp_path: Path) -> None:
    # the flush interval is far away: only the write-ahead log can save these writes
    srv = IndexServer(tmp_path / "data", "--flush-interval", "3600", "--flush-quiet", "3600").wait_ready()
    try:
        ix = IndexClient(srv.url)
        ix.ensure_collection(dim=DIM)
        pts = rand_points(200, "alice")
        ix.upsert_chunks(pts)
        ix.set_collections("alice-doc2", ["moved"])
        ix.delete_document("alice-doc3")
        ix.close()
        srv.kill9()

        srv = IndexServer(tmp_path / "data").wait_ready()
        ix = IndexClient(srv.url)
        assert ix.count() == 150
        assert ix.count(document_id="alice-doc3") == 0
        moved = search(ix, "alice", collection_ids=["moved"], limit=100)
        assert len(moved) == 50
        assert {h.payload["document_id"] for h in moved} == {"alice-doc2"}
        target = pts[0]
        assert ix.hybrid_search(target.dense, target.sparse, "alice", limit=1)[0].point_id == target.id
        ix.upsert_chunks(rand_points(10, "bob"))  # still writable after recovery
        assert ix.count(owner_id="bob") == 10
        ix.close()
    finally:
        srv.stop()


def test_client_with_retry_rides_out_a_restart(tmp_path: Path) -> None:
    """The app's client (retry_s > 0) waits through a kill -9 + restart of the index process
    (what the supervisor does under `make run`); without retries the same call fails."""
    import threading

    from qdrant_client.http.exceptions import ResponseHandlingException

    srv = IndexServer(tmp_path / "data").wait_ready()
    ix = IndexClient(srv.url, retry_s=20, check_compatibility=False)
    ix.ensure_collection(dim=DIM)
    ix.upsert_chunks(rand_points(50, "alice"))
    srv.kill9()
    with IndexClient(srv.url, check_compatibility=False) as plain, pytest.raises(ResponseHandlingException):
        plain.count()
    restarted: list[IndexServer] = []
    threading.Timer(1.5, lambda: restarted.append(IndexServer(tmp_path / "data", port=srv.port))).start()
    t0 = time.monotonic()
    try:
        assert ix.count() == 50  # retried until the new process answers
        took = time.monotonic() - t0
        assert 1.5 <= took < 20
        ix.upsert_chunks(rand_points(5, "bob"))
        assert ix.count(owner_id="bob") == 5
    finally:
        ix.close()
        wait = time.monotonic() + 10
        while not restarted and time.monotonic() < wait:
            time.sleep(0.1)
        for s in restarted:
            s.stop()


def test_second_server_on_same_dir_refuses(tmp_path: Path) -> None:
    first = IndexServer(tmp_path / "data").wait_ready()
    try:
        ix = IndexClient(first.url)
        ix.ensure_collection(dim=DIM)
        ix.upsert_chunks(rand_points(20, "alice"))

        second = IndexServer(tmp_path / "data")
        assert second.proc.wait(30) != 0
        assert "in use by another process" in second.output()
        assert f"pid {first.proc.pid}" in second.output()

        # the owner is unharmed: it still writes and flushes
        ix.upsert_chunks(rand_points(20, "bob"))
        time.sleep(1.5)  # past the flush that follows a write
        assert ix.count() == 40
        assert first.proc.poll() is None
        ix.close()
    finally:
        first.stop()
    # SIGTERM: graceful shutdown flushes and closes (uvicorn then re-raises the signal)
    assert first.proc.returncode in (0, -signal.SIGTERM)
    assert "collections flushed" in first.output()
    # once the owner is gone, the directory can be opened again
    again = IndexServer(tmp_path / "data").wait_ready()
    try:
        # (no version check: its background request would race the stop below)
        with IndexClient(again.url, check_compatibility=False) as ix:
            assert ix.count() == 40
    finally:
        again.stop()


def test_api_key_is_required_when_configured(tmp_path: Path) -> None:
    """Issue 24.8: started with --api-key-file (as `make run` does), every request but the
    health probes needs the key in the `api-key` header (or as a Bearer token), as Qdrant's;
    qdrant-client sends it with `api_key=`."""
    key_file = tmp_path / "index_api_key"
    key_file.write_text("k-" + uuid.uuid4().hex)
    key = key_file.read_text()
    srv = IndexServer(tmp_path / "idx", "--api-key-file", str(key_file)).wait_ready()
    try:
        assert httpx.get(srv.url + "/healthz").status_code == 200
        for headers in ({}, {"api-key": "wrong"}, {"Authorization": "Bearer wrong"}):
            r = httpx.get(srv.url + "/collections", headers=headers)
            assert r.status_code == 401, headers
            assert "API key" in r.json()["status"]["error"], headers
        assert httpx.put(srv.url + "/collections/x", json={}).status_code == 401
        assert httpx.get(srv.url + "/collections", headers={"api-key": key}).status_code == 200
        assert httpx.get(srv.url + "/collections", headers={"Authorization": f"Bearer {key}"}).status_code == 200
        with pytest.raises(UnexpectedResponse):
            QdrantClient(url=srv.url, check_compatibility=False).get_collections()
        ix = IndexClient(srv.url, collection="keyed", api_key=key)
        ix.ensure_collection(dim=4)
        assert ix.count() == 0
        ix.close()
    finally:
        srv.kill9()
