"""The app's one code path to the vector index: ``qdrant-client`` over REST.

The URL is the embedded index server (``bayes_app.search.index_server``, started by
``make run``) or a real Qdrant server / cluster (``QDRANT_URL``); the code is the same.

Points are chunks: id = the chunk id (a UUID; the app's 32-hex form is accepted and
returned), a dense vector ``"dense"`` (cosine), a BM25-style sparse vector ``"sparse"``
(Qdrant applies the IDF modifier) and the payload ``owner_id``, ``document_id``,
``collection_ids``, ``page``, ``chunk_index``, ``role``. Every search is filtered by owner.

With ``cross_collection`` set, passages that are not in English also live in a second,
dense-only collection with their multilingual vector (same ids and payload, plus ``lang``);
deletes and payload updates go to both (see :mod:`bayes_app.search.crosslang`).
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import httpx
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from bayes_app.search.points import (
    RRF_K,
    CrossPoint,
    Hit,
    IndexPoint,
    Vector,
    from_point_id,
    to_point_id,
)

log = logging.getLogger("bayes.index")

DENSE = "dense"
SPARSE = "sparse"
DEFAULT_COLLECTION = "chunks"
MIN_PREFETCH = 20
KEYWORD_FIELDS = ("owner_id", "document_id", "collection_ids", "role")
CROSS_KEYWORD_FIELDS = (*KEYWORD_FIELDS, "lang")
UPSERT_BATCH = 256


def _match(key: str, value: Any) -> models.FieldCondition:
    if isinstance(value, (list, tuple)):
        return models.FieldCondition(key=key, match=models.MatchAny(any=list(value)))
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _sparse(indices: Sequence[int], values: Sequence[float]) -> models.SparseVector:
    return models.SparseVector(indices=[int(i) for i in indices], values=[float(v) for v in values])


def _cosine(query: list[float], vector: Any) -> float | None:
    """Dot product with the stored dense vector (both are L2-normalised: the cosine)."""
    if isinstance(vector, dict):
        vector = vector.get(DENSE)
    if not vector or len(vector) != len(query):
        return None
    return float(sum(a * b for a, b in zip(query, vector)))


def _floats(v: Vector) -> list[float]:
    # numpy arrays and float32 scalars are fine too; pydantic wants plain floats
    return v.tolist() if hasattr(v, "tolist") else [float(x) for x in v]


# The connection failed or broke: the index process is (re)starting. Every call the app
# makes is idempotent (upserts by id, deletes, payload updates, reads), so retrying is safe.
_TRANSIENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


def _transient(err: Exception) -> bool:
    return isinstance(err, ResponseHandlingException) and isinstance(err.source, _TRANSIENT)


class _Retrying:
    """Wraps a QdrantClient: calls that fail to connect are retried for up to `retry_s`."""

    def __init__(self, client: QdrantClient, retry_s: float) -> None:
        self._client, self._retry_s = client, retry_s

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr) or self._retry_s <= 0:
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            deadline, delay = time.monotonic() + self._retry_s, 0.1
            while True:
                try:
                    return attr(*args, **kwargs)
                except ResponseHandlingException as err:
                    if not _transient(err) or time.monotonic() + delay > deadline:
                        raise
                    log.warning("index unreachable (%s), retrying %s in %.1fs", type(err.source).__name__, name, delay)
                    time.sleep(delay)
                    delay = min(delay * 2, 1.0)

        return call


class IndexClient:
    """Chunks in one Qdrant collection (default ``"chunks"``), reached through ``url``.
    With ``retry_s`` > 0 a call that cannot reach the index is retried that long (the
    supervisor restarts a crashed index process within seconds)."""

    def __init__(
        self,
        url: str,
        collection: str = DEFAULT_COLLECTION,
        *,
        api_key: str | None = None,
        timeout: int = 60,
        check_compatibility: bool = True,
        retry_s: float = 0.0,
        cross_collection: str | None = None,
    ) -> None:
        self.collection = collection
        self.cross_collection = cross_collection
        with warnings.catch_warnings():  # the embedded index listens on loopback only, over plain HTTP
            warnings.filterwarnings("ignore", "Api key is used with an insecure connection")
            qdrant = QdrantClient(url=url, api_key=api_key, timeout=timeout, check_compatibility=check_compatibility)
        self.client: Any = _Retrying(qdrant, retry_s)

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()

    def __enter__(self) -> IndexClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- schema

    def ensure_collection(self, name: str | None = None, dim: int = 384, cross_dim: int = 384) -> None:
        """Create the collection (and the cross-language one, if configured) and their payload
        indexes if missing (safe to race).

        Raises ValueError when it exists with another dense dimension (re-index needed).
        """
        if name is None and self.cross_collection:
            self._ensure(self.cross_collection, cross_dim, sparse=False, fields=CROSS_KEYWORD_FIELDS)
        self._ensure(name or self.collection, dim)

    def _ensure(self, name: str, dim: int, *, sparse: bool = True, fields: Sequence[str] = KEYWORD_FIELDS) -> None:
        if not self.client.collection_exists(name):
            try:
                self.client.create_collection(
                    name,
                    vectors_config={DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
                    sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)}
                    if sparse
                    else None,
                )
            except UnexpectedResponse as err:
                if err.status_code != 409:  # 409: another process created it first
                    raise
        info = self.client.get_collection(name)
        vectors = info.config.params.vectors
        size = vectors[DENSE].size if isinstance(vectors, dict) and DENSE in vectors else None
        if size != dim:
            raise ValueError(f"collection {name!r} has dense size {size}, expected {dim}; re-index needed")
        for key in fields:
            if key in info.payload_schema:  # (re)building an index on a big collection is not free
                continue
            schema: Any = models.PayloadSchemaType.KEYWORD
            if key == "owner_id":  # tenant field: Qdrant co-locates each owner's points
                schema = models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
            self.client.create_payload_index(name, key, field_schema=schema, wait=True)

    # -- writes

    def upsert_chunks(self, points: Iterable[IndexPoint], *, batch_size: int = UPSERT_BATCH) -> int:
        """Insert or replace chunks (same id = same point, so re-upserting is idempotent)."""
        batch: list[models.PointStruct] = []
        n = 0
        for p in points:
            batch.append(
                models.PointStruct(
                    id=to_point_id(p.id),
                    vector={DENSE: _floats(p.dense), SPARSE: _sparse(*p.sparse)},
                    payload={
                        "owner_id": p.owner_id,
                        "document_id": p.document_id,
                        "collection_ids": list(p.collection_ids),
                        "page": p.page,
                        "chunk_index": p.chunk_index,
                        "role": p.role,
                    },
                )
            )
            if len(batch) >= batch_size:
                n += self._upsert(batch)
                batch = []
        if batch:
            n += self._upsert(batch)
        return n

    def _upsert(self, batch: list[models.PointStruct], collection: str | None = None) -> int:
        self.client.upsert(collection or self.collection, points=batch, wait=True)
        return len(batch)

    def upsert_cross(self, points: Sequence[CrossPoint]) -> int:
        """Insert or replace non-English chunks' multilingual vectors (needs ``cross_collection``)."""
        if not points:
            return 0
        if not self.cross_collection:
            raise RuntimeError("this IndexClient has no cross-language collection")
        n = 0
        for start in range(0, len(points), UPSERT_BATCH):
            n += self._upsert(
                [
                    models.PointStruct(
                        id=to_point_id(p.id),
                        vector={DENSE: _floats(p.dense)},
                        payload={
                            "owner_id": p.owner_id,
                            "document_id": p.document_id,
                            "collection_ids": list(p.collection_ids),
                            "page": p.page,
                            "chunk_index": p.chunk_index,
                            "role": p.role,
                            "lang": p.lang,
                        },
                    )
                    for p in points[start : start + UPSERT_BATCH]
                ],
                self.cross_collection,
            )
        return n

    def _both(self) -> list[str]:
        return [self.collection, *([self.cross_collection] if self.cross_collection else [])]

    def delete_document(self, document_id: str) -> None:
        """Remove every chunk of a document."""
        for name in self._both():
            self.client.delete(
                name,
                points_selector=models.FilterSelector(filter=models.Filter(must=[_match("document_id", document_id)])),
                wait=True,
            )

    def delete_chunks(self, chunk_ids: Sequence[str | int]) -> None:
        """Remove chunks by id (e.g. the changed chunks of a re-ingested PDF)."""
        if chunk_ids:
            ids = [to_point_id(c) for c in chunk_ids]
            self.client.delete(self.collection, points_selector=models.PointIdsList(points=ids), wait=True)
            if self.cross_collection:  # holds only the non-English ones: select by filter, not by id
                self.client.delete(
                    self.cross_collection,
                    wait=True,
                    points_selector=models.FilterSelector(
                        filter=models.Filter(must=[models.HasIdCondition(has_id=ids)])
                    ),
                )

    def set_collections(self, document_id: str, collection_ids: Sequence[str]) -> None:
        """Replace the ``collection_ids`` of every chunk of a document."""
        for name in self._both():
            self.client.set_payload(
                name,
                payload={"collection_ids": list(collection_ids)},
                points=models.Filter(must=[_match("document_id", document_id)]),
                wait=True,
            )

    def set_roles(self, chunk_ids: Sequence[str | int], role: str) -> None:
        """Set the ``role`` payload of these chunks (re-analysed passages keep their vectors)."""
        for start in range(0, len(chunk_ids), UPSERT_BATCH):
            ids = [to_point_id(c) for c in chunk_ids[start : start + UPSERT_BATCH]]
            self.client.set_payload(self.collection, payload={"role": role}, points=ids, wait=True)
            if self.cross_collection:  # holds only the non-English ones: select by filter, not by id
                self.client.set_payload(
                    self.cross_collection,
                    payload={"role": role},
                    wait=True,
                    points=models.Filter(must=[models.HasIdCondition(has_id=ids)]),
                )

    # -- reads

    def hybrid_search(
        self,
        dense: Vector,
        sparse: tuple[Sequence[int], Sequence[float]],
        owner_id: str,
        document_ids: Sequence[str] | None = None,
        collection_ids: Sequence[str] | None = None,
        limit: int = 10,
        prefetch_limit: int = 40,
        exclude_roles: Sequence[str] = (),
        with_cosine: bool = False,
    ) -> list[Hit]:
        """Dense + sparse, each over-fetched, fused by RRF (k=60); always filtered by owner.

        ``document_ids`` / ``collection_ids`` narrow the search (any of); an empty list
        matches nothing. ``exclude_roles`` leaves out passages with those roles (points
        indexed before roles existed have none and stay in). ``with_cosine`` fills
        ``Hit.dense`` with the query-passage cosine (the dense vectors are fetched).
        """
        if (document_ids is not None and not document_ids) or (collection_ids is not None and not collection_ids):
            return []
        must = [_match("owner_id", owner_id)]
        if document_ids is not None:
            must.append(_match("document_id", list(document_ids)))
        if collection_ids is not None:
            must.append(_match("collection_ids", list(collection_ids)))
        must_not = [_match("role", list(exclude_roles))] if exclude_roles else None
        flt = models.Filter(must=must, must_not=must_not)
        per_side = max(prefetch_limit, MIN_PREFETCH, limit)
        prefetch = [models.Prefetch(query=_floats(dense), using=DENSE, limit=per_side, filter=flt)]
        if len(sparse[0]):
            prefetch.append(models.Prefetch(query=_sparse(*sparse), using=SPARSE, limit=per_side, filter=flt))
        res = self.client.query_points(
            self.collection,
            prefetch=prefetch,
            query=models.RrfQuery(rrf=models.Rrf(k=RRF_K)),
            query_filter=flt,  # belt and braces: the owner filter never depends on prefetch semantics
            limit=limit,
            with_payload=True,
            with_vectors=[DENSE] if with_cosine else False,
        )
        query = _floats(dense)
        return [
            Hit(from_point_id(p.id), p.score, p.payload or {}, _cosine(query, p.vector) if with_cosine else None)
            for p in res.points
        ]

    def cross_search(
        self,
        dense: Vector,
        owner_id: str,
        lang: str,
        document_ids: Sequence[str] | None = None,
        collection_ids: Sequence[str] | None = None,
        limit: int = 40,
        exclude_roles: Sequence[str] = (),
        score_threshold: float | None = None,
    ) -> list[Hit]:
        """Nearest passages in language ``lang`` by multilingual vector; ``Hit.score`` and
        ``Hit.dense`` are the cosine. Filters as in :meth:`hybrid_search`."""
        if not self.cross_collection:
            return []
        if (document_ids is not None and not document_ids) or (collection_ids is not None and not collection_ids):
            return []
        must = [_match("owner_id", owner_id), _match("lang", lang)]
        if document_ids is not None:
            must.append(_match("document_id", list(document_ids)))
        if collection_ids is not None:
            must.append(_match("collection_ids", list(collection_ids)))
        must_not = [_match("role", list(exclude_roles))] if exclude_roles else None
        res = self.client.query_points(
            self.cross_collection,
            query=_floats(dense),
            using=DENSE,
            query_filter=models.Filter(must=must, must_not=must_not),
            limit=limit,
            score_threshold=score_threshold,
            with_payload=True,
            with_vectors=False,
        )
        return [Hit(from_point_id(p.id), p.score, p.payload or {}, p.score) for p in res.points]

    def document_vectors(self, document_id: str, limit: int = 2_000) -> dict[str | int, list[float]]:
        """The dense vectors of a document's chunks (chunk id → vector), at most `limit`."""
        out: dict[str | int, list[float]] = {}
        offset = None
        while len(out) < limit:
            records, offset = self.client.scroll(
                self.collection,
                scroll_filter=models.Filter(must=[_match("document_id", document_id)]),
                limit=min(256, limit - len(out)),
                offset=offset,
                with_payload=False,
                with_vectors=[DENSE],
            )
            for rec in records:
                vec = rec.vector.get(DENSE) if isinstance(rec.vector, dict) else rec.vector
                if vec:
                    out[from_point_id(rec.id)] = list(vec)
            if offset is None:
                break
        return out

    def count(self, owner_id: str | None = None, document_id: str | None = None) -> int:
        """Exact number of chunks, optionally of one owner and/or one document."""
        must = [_match(k, v) for k, v in (("owner_id", owner_id), ("document_id", document_id)) if v is not None]
        return self.client.count(self.collection, count_filter=models.Filter(must=must) if must else None).count
