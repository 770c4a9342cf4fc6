"""Qdrant contract: every request IndexClient sends and every response the embedded index
process returns, for the operations the app uses, validated against the generated models of
the pinned qdrant-client (`qdrant_client.http.models`), with no field the schema lacks.
Differences from a real Qdrant server are listed in docs/qdrant.md."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from bayes_app.search.index import IndexClient, IndexPoint
from tests.support.procs import free_port, start_index
from tests.support.qdrant_contract import RecordingProxy, operations, validate

pytestmark = pytest.mark.timeout(180)
DIM = 8
# What the app does through IndexClient (bayes_app/search/index.py), plus scroll (operators use
# it to inspect a collection; the app itself does not page through points).
REQUIRED = {
    "collection_exists",
    "create_collection",
    "get_collection",
    "create_field_index",
    "upsert_points",
    "delete_points",
    "set_payload",
    "query_points",
    "count_points",
    "scroll_points",
}
# Known, documented (docs/qdrant.md) differences on the wire; exact, so a fix updates the doc.
DOCUMENTED = {"root response has field .engine unknown to VersionInfo"}


@pytest.fixture
def recorded(tmp_path):
    port = free_port()
    proc = start_index(tmp_path / "index", port, tmp_path / "index.log")
    proxy = RecordingProxy(f"http://127.0.0.1:{port}").start()
    yield proxy
    proxy.stop()
    proc.terminate()
    proc.wait(15)


def _vec(i: int) -> list[float]:
    return [float((i * 7 + j) % 5) + 0.1 for j in range(DIM)]


def _drive_the_app(url: str) -> None:
    """The app's index operations, in the order ingestion and search use them."""
    idx = IndexClient(url, "contract_chunks")
    idx.ensure_collection(dim=DIM)
    idx.ensure_collection(dim=DIM)  # second start: exists, indexes present
    owner, doc_a, doc_b = "owner-1", "doc-a", "doc-b"
    ids = [str(uuid.uuid4()) for _ in range(6)]
    points = [
        IndexPoint(
            id=cid,
            dense=_vec(i),
            sparse=([i, 100 + i], [1.0, 0.5]),
            owner_id=owner,
            document_id=doc_a if i < 4 else doc_b,
            collection_ids=["c1"] if i % 2 else [],
            page=i + 1,
            chunk_index=i,
            role="body" if i != 3 else "references",
        )
        for i, cid in enumerate(ids)
    ]
    assert idx.upsert_chunks(points, batch_size=4) == 6
    idx.set_collections(doc_a, ["c1", "c2"])
    idx.set_roles(ids[:2], "abstract")
    hits = idx.hybrid_search(_vec(1), ([1, 101], [1.0, 0.5]), owner, limit=3, with_cosine=True)
    assert hits
    assert all(h.payload["owner_id"] == owner for h in hits)
    assert hits[0].dense is not None
    narrowed = idx.hybrid_search(
        _vec(2), ([], []), owner, document_ids=[doc_b], collection_ids=["c1"], exclude_roles=["references"], limit=5
    )
    assert {h.payload["document_id"] for h in narrowed} <= {doc_b}
    assert idx.count(owner_id=owner) == 6
    assert idx.count(document_id=doc_b) == 2
    page, _next = idx.client.scroll("contract_chunks", limit=4, with_payload=True)
    assert len(page) == 4
    idx.delete_chunks(ids[4:5])
    idx.delete_document(doc_a)
    assert idx.count() == 1
    idx.close()


def test_app_traffic_matches_qdrant_schema(recorded):
    _drive_the_app(recorded.url)
    ops = operations()
    seen: set[str] = set()
    problems: list[str] = []
    for ex in recorded.exchanges:
        op = next((o for o in ops if o.matches(ex.method, ex.path)), None)
        if op is None:
            problems.append(f"{ex.method} {ex.path}: not a Qdrant REST operation")
            continue
        seen.add(op.name)
        if op.body and ex.request is not None:
            try:
                _, extra = validate(op.body, ex.request)
                problems += [f"{op.name} request has field {k} unknown to {op.body}" for k in extra]
            except ValidationError as err:
                problems.append(f"{op.name} request is not a valid {op.body}: {err}")
        if op.response is None:
            continue
        if ex.response is None:
            problems.append(f"{op.name} answered {ex.status} without a JSON body")
            continue
        rmodel = op.response if 200 <= ex.status < 300 else "ErrorResponse"
        try:
            parsed, extra = validate(rmodel, ex.response)
            problems += [f"{op.name} response has field {k} unknown to {rmodel}" for k in extra]
            if 200 <= ex.status < 300 and op.name != "root":
                assert getattr(parsed, "result", None) is not None or op.name == "collection_exists", op.name
        except ValidationError as err:
            problems.append(f"{op.name} response is not a valid {rmodel}: {err}")
    assert set(problems) == DOCUMENTED, "\n".join(problems)
    assert seen >= REQUIRED, f"not exercised: {sorted(REQUIRED - seen)}"


def test_the_contract_check_can_fail():
    """The checks above catch what they are meant to: wrong shapes and unknown fields."""
    with pytest.raises(ValidationError):
        validate("CountRequest", {"exact": "very"})
    with pytest.raises(ValidationError):  # request models forbid unknown fields
        validate("QueryRequest", {"query": {"rrf": {"k": 60}}, "fusion_k": 60})
    _, extra = validate("InlineResponse20020", {"status": "ok", "time": 0.1, "result": {"count": 3}, "shard": 7})
    assert extra == [".shard"]
    ops = {o.name: o for o in operations()}
    assert ops["query_points"].matches("POST", "/collections/x/points/query")
    assert ops["query_points"].body == "QueryRequest"
    assert not ops["get_point"].matches("POST", "/collections/x/points/query")
