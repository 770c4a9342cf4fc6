"""The `index` process: owns the embedded Qdrant engine and serves part of Qdrant's REST API.

An embedded index directory (qdrant-edge) can be opened by one process only, so this
process owns it, one `EdgeShard` per collection under ``--path``, and every other process
talks to it with the official ``qdrant-client`` (``QdrantClient(url=...)``). Requests and
responses use Qdrant's JSON shapes and envelopes, so the same client code also works
against a real Qdrant server (``QDRANT_URL``).

    python -m bayes_app.search.index_server --path DIR --host 127.0.0.1 --port 6333

Layout under DIR: ``.lock`` (flock, holds the owner's pid) and
``collections/<hex>/{meta.json,shard/}``; a directory without ``meta.json`` is an
unfinished create or a deleted collection and is removed at start.

Durability: an update is appended to the engine's write-ahead log before ``update()``
returns, and that survives a crash of this process (kill -9), so a 200 OK is never
lost. A flush (segments to disk, 100-400 ms) is therefore kept off the request path: a
dirty shard is flushed once writes pause for a second, at least every
``--flush-interval`` seconds while they go on, and on shutdown.

qdrant-edge-py 0.9.0 holds the GIL for the whole of every engine call (measured), so
engine calls are serialised process-wide whatever the threading, and ``optimize()``
(HNSW build and merges: ~5 s per 10k 384-d points, minutes at 100k) stalls the whole
server (a request arriving meanwhile waits). It therefore runs only after
``--optimize-idle`` seconds (default 10 min) without any API request; until then new
points are searched by a plain scan, which at 100k points costs 3-11 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import itertools
import logging
import os
import re
import shutil
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson
import qdrant_edge as qe
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

log = logging.getLogger("bayes.index_server")

DEFAULT_RRF_K = 2  # Qdrant's constant for a plain {"fusion": "rrf"}
FLUSH_INTERVAL_S = 30.0  # longest a dirty shard waits for a flush while writes go on
FLUSH_QUIET_S = 1.0  # flush this long after the last write
# Below ~6.7k 384-d vectors (the engine's 10 MB indexing threshold) optimize has nothing
# to index, and a plain scan of that many costs 1-2 ms.
OPTIMIZE_MIN_CHANGES = 5_000  # points written/deleted since the last optimize
OPTIMIZE_IDLE_S = 600.0  # optimize() blocks the process: only after this long without requests
_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,254}$")
_op_ids = itertools.count(1)


# --------------------------------------------------------------------------- errors


class ApiError(Exception):
    """An error answered as Qdrant does: ``{"status": {"error": message}}`` with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad_input(message: str) -> ApiError:
    return ApiError(400, f"Wrong input: {message}")


def bad_request(message: str) -> ApiError:
    return ApiError(400, f"Bad request: {message}")


def not_found(message: str) -> ApiError:
    return ApiError(404, f"Not found: {message}")


def unsupported(what: str) -> ApiError:
    return bad_request(f"{what} is not supported by the Bayes index server (qdrant-edge)")


_INPUT_ERRORS = ("dimension error", "Not existing vector", "Wrong input", "Bad request", "Bad input", "No range index",
                 "Please create", "not supported", "Format error")


def _engine_error(exc: Exception) -> ApiError:
    # The engine raises plain Exception; Qdrant answers these messages with 4xx.
    msg = str(exc)
    if msg.startswith("No point with id"):
        return not_found(msg)
    if isinstance(exc, (ValueError, TypeError, OverflowError, KeyError)) or any(s in msg for s in _INPUT_ERRORS):
        return bad_input(msg)
    return ApiError(500, f"Service internal error: {msg}")


class IndexLockedError(RuntimeError):
    """Another process owns the index directory."""


# --------------------------------------------------------------- JSON -> qdrant_edge

_DISTANCES = {d: getattr(qe.Distance, d) for d in ("Cosine", "Euclid", "Dot", "Manhattan")}
_SCHEMA_TYPES = {
    "keyword": qe.PayloadSchemaType.Keyword,
    "integer": qe.PayloadSchemaType.Integer,
    "float": qe.PayloadSchemaType.Float,
    "geo": qe.PayloadSchemaType.Geo,
    "text": qe.PayloadSchemaType.Text,
    "bool": qe.PayloadSchemaType.Bool,
    "datetime": qe.PayloadSchemaType.Datetime,
    "uuid": qe.PayloadSchemaType.Uuid,
}
_UPDATE_MODES = {
    "upsert": qe.UpdateMode.Upsert,
    "insert_only": qe.UpdateMode.InsertOnly,
    "update_only": qe.UpdateMode.UpdateOnly,
}
_MATCHES: dict[str, Callable[[Any], Any]] = {
    "value": qe.MatchValue,
    "any": qe.MatchAny,
    "except": qe.MatchExcept,
    "text": qe.MatchText,
    "text_any": qe.MatchTextAny,
    "phrase": qe.MatchPhrase,
    "prefix": qe.MatchPrefix,
}


def point_id(value: Any) -> int | str:
    """A Qdrant point id: an unsigned integer or a UUID (any textual form, kept canonical)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise bad_input(f"point id must be an unsigned integer or a UUID, got {value}")
        return value
    if isinstance(value, str):
        try:
            return str(uuid.UUID(value))
        except ValueError:
            raise bad_input(f"Unable to parse UUID: {value}") from None
    raise bad_input(f"point id must be an unsigned integer or a UUID, got {value!r}")


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def to_filter(data: dict[str, Any] | None) -> qe.Filter | None:
    """Qdrant's ``Filter`` JSON (must / should / must_not / min_should) as an edge Filter."""
    if not data:
        return None
    unknown = set(data) - {"must", "should", "must_not", "min_should"}
    if unknown:
        raise bad_input(f"unknown filter fields {sorted(unknown)}")

    def conds(key: str) -> list[Any] | None:
        value = data.get(key)
        return None if value is None else [to_condition(c) for c in _as_list(value)]

    min_should = data.get("min_should")
    return qe.Filter(
        must=conds("must"),
        should=conds("should"),
        must_not=conds("must_not"),
        min_should=None
        if min_should is None
        else qe.MinShould([to_condition(c) for c in min_should["conditions"]], min_should["min_count"]),
    )


def to_condition(c: dict[str, Any]) -> Any:
    """One filter condition: field (match/range/values_count/is_empty/is_null), has_id, ..."""
    if not isinstance(c, dict):
        raise bad_input(f"a condition must be an object, got {c!r}")
    if "key" in c:
        return _field_condition(c)
    if "has_id" in c:
        return qe.HasIdCondition({point_id(i) for i in c["has_id"]})
    if "is_empty" in c:
        return qe.IsEmptyCondition(c["is_empty"]["key"])
    if "is_null" in c:
        return qe.IsNullCondition(c["is_null"]["key"])
    if "has_vector" in c:
        return qe.HasVectorCondition(c["has_vector"])
    if "nested" in c:
        nested = to_filter(c["nested"]["filter"]) or qe.Filter()
        return qe.NestedCondition(c["nested"]["key"], nested)
    if set(c) <= {"must", "should", "must_not", "min_should"}:
        return to_filter(c) or qe.Filter()
    raise unsupported(f"condition {sorted(c)}")


def _field_condition(c: dict[str, Any]) -> qe.FieldCondition:
    kwargs: dict[str, Any] = {}
    if (match := c.get("match")) is not None:
        kind = next((k for k in _MATCHES if k in match), None)
        if kind is None:
            raise unsupported(f"match {sorted(match)}")
        kwargs["match"] = _MATCHES[kind](match[kind])
    if (rng := c.get("range")) is not None:
        bounds = {k: rng.get(k) for k in ("gte", "gt", "lte", "lt")}
        is_dt = any(isinstance(v, str) for v in bounds.values())
        kwargs["range"] = (qe.RangeDateTime if is_dt else qe.RangeFloat)(**bounds)
    if (vc := c.get("values_count")) is not None:
        kwargs["values_count"] = qe.ValuesCount(**{k: vc.get(k) for k in ("lt", "gt", "lte", "gte")})
    for flag in ("is_empty", "is_null"):
        if c.get(flag) is not None:
            kwargs[flag] = c[flag]
    geo = {"geo_bounding_box", "geo_radius", "geo_polygon"} & set(c)
    if geo:
        raise unsupported(f"condition {sorted(geo)}")
    return qe.FieldCondition(c["key"], **kwargs)


def _named_vector(v: Any) -> Any:
    if isinstance(v, dict):
        if "indices" in v:
            return qe.SparseVector(v["indices"], v["values"])
        raise unsupported("server-side inference (Document/Image/InferenceObject)")
    if isinstance(v, list):
        return v
    raise bad_input(f"invalid vector {type(v).__name__}")


def to_vector_struct(v: Any) -> Any:
    """A point's ``vector``: unnamed dense list, or {name: dense | multi-dense | sparse}."""
    if isinstance(v, list):
        return v
    if isinstance(v, dict) and "indices" not in v:
        return {name: _named_vector(x) for name, x in v.items()}
    return _named_vector(v)


def to_query(q: Any, using: str | None) -> Any:
    """A universal-query ``query``: nearest (dense / sparse), fusion, rrf, order_by, sample."""
    if q is None:
        return None
    if isinstance(q, list):
        return qe.Query.Nearest(q, using=using)
    if not isinstance(q, dict):
        raise unsupported("query by point id")
    if "nearest" in q:
        if q.get("mmr"):
            raise unsupported("MMR")
        return to_query(q["nearest"], using)
    if "indices" in q:
        return qe.Query.Nearest(qe.SparseVector(q["indices"], q["values"]), using=using)
    if "fusion" in q:
        if q["fusion"] == "rrf":
            return qe.Fusion.Rrf(k=DEFAULT_RRF_K)
        if q["fusion"] == "dbsf":
            return qe.Fusion.Dbsf()
        raise bad_input(f"unknown fusion {q['fusion']!r}")
    if "rrf" in q:
        rrf = q["rrf"] or {}
        return qe.Fusion.Rrf(k=rrf.get("k") or DEFAULT_RRF_K, weights=rrf.get("weights"))
    if "order_by" in q:
        return _order_by(q["order_by"])
    if "sample" in q:
        return qe.Sample.Random
    raise unsupported(f"query {sorted(q)}")


def _order_by(ob: Any) -> qe.OrderBy:
    if isinstance(ob, str):
        return qe.OrderBy(ob)
    direction = {"asc": qe.Direction.Asc, "desc": qe.Direction.Desc}.get(ob.get("direction") or "asc")
    return qe.OrderBy(ob["key"], direction=direction, start_from=ob.get("start_from"))


def _params(p: dict[str, Any] | None) -> qe.SearchParams | None:
    if not p:
        return None
    return qe.SearchParams(
        hnsw_ef=p.get("hnsw_ef"), exact=bool(p.get("exact")), indexed_only=bool(p.get("indexed_only"))
    )


def _prefetches(value: Any) -> list[qe.Prefetch] | None:
    if value is None:
        return None
    out = []
    for p in _as_list(value):
        if p.get("lookup_from"):
            raise unsupported("lookup_from")
        out.append(
            qe.Prefetch(
                limit=p.get("limit") or 10,
                query=to_query(p.get("query"), p.get("using")),
                prefetches=_prefetches(p.get("prefetch")),
                params=_params(p.get("params")),
                filter=to_filter(p.get("filter")),
                score_threshold=p.get("score_threshold"),
            )
        )
    return out


def _with_payload(v: Any, default: bool) -> Any:
    if v is None:
        return default
    if isinstance(v, (bool, list)):
        return v
    if isinstance(v, dict) and "include" in v:
        return qe.PayloadSelector.Include(_as_list(v["include"]))
    if isinstance(v, dict) and "exclude" in v:
        return qe.PayloadSelector.Exclude(_as_list(v["exclude"]))
    raise bad_input(f"invalid with_payload {v!r}")


def _with_vector(v: Any) -> Any:
    return False if v is None else v


def to_query_request(body: dict[str, Any]) -> qe.QueryRequest:
    """``POST /points/query`` body -> edge QueryRequest."""
    for key in ("lookup_from", "shard_key"):
        if body.get(key):
            raise unsupported(key)
    return qe.QueryRequest(
        limit=body.get("limit") or 10,
        offset=body.get("offset"),
        query=to_query(body.get("query"), body.get("using")),
        prefetches=_prefetches(body.get("prefetch")),
        with_vector=_with_vector(body.get("with_vector")),
        with_payload=_with_payload(body.get("with_payload"), False),
        filter=to_filter(body.get("filter")),
        score_threshold=body.get("score_threshold"),
        params=_params(body.get("params")),
    )


def to_points(body: dict[str, Any]) -> list[qe.Point]:
    """``PUT /points`` body (``points`` list or column-wise ``batch``) -> edge Points."""
    if "points" in body:
        return [qe.Point(point_id(p["id"]), to_vector_struct(p["vector"]), p.get("payload")) for p in body["points"]]
    if "batch" in body:
        batch = body["batch"]
        ids = batch["ids"]
        vectors = batch["vectors"]
        payloads = batch.get("payloads") or [None] * len(ids)
        if isinstance(vectors, dict):
            per_point = [
                {name: _named_vector(col[i]) for name, col in vectors.items()} for i in range(len(ids))
            ]
        else:
            per_point = vectors
        return [qe.Point(point_id(i), v, p) for i, v, p in zip(ids, per_point, payloads, strict=True)]
    raise bad_input("expected `points` or `batch`")


def to_payload_schema(schema: Any) -> Any:
    """``field_schema``: a type name or params ({"type": "keyword", "is_tenant": true, ...})."""
    if isinstance(schema, str) and schema in _SCHEMA_TYPES:
        return _SCHEMA_TYPES[schema]
    if isinstance(schema, dict) and schema.get("type") == "keyword":
        return qe.KeywordIndexParams(is_tenant=schema.get("is_tenant"), on_disk=schema.get("on_disk"))
    if isinstance(schema, dict) and schema.get("type") in _SCHEMA_TYPES:
        return _SCHEMA_TYPES[schema["type"]]  # other params keep the engine's defaults
    raise bad_input(f"unsupported field_schema {schema!r}")


def to_edge_config(body: dict[str, Any]) -> tuple[qe.EdgeConfig, dict[str, Any]]:
    """``PUT /collections/{name}`` body -> (EdgeConfig, params echoed by GET collection)."""
    vectors = body.get("vectors")
    sparse = body.get("sparse_vectors") or {}
    if vectors is None and not sparse:
        raise bad_input("a collection needs `vectors` or `sparse_vectors`")

    def dense(p: dict[str, Any]) -> qe.EdgeVectorParams:
        if p.get("distance") not in _DISTANCES:
            raise bad_input(f"unknown distance {p.get('distance')!r}")
        return qe.EdgeVectorParams(size=int(p["size"]), distance=_DISTANCES[p["distance"]], on_disk=p.get("on_disk"))

    def sparse_params(p: dict[str, Any] | None) -> qe.EdgeSparseVectorParams:
        modifier = (p or {}).get("modifier")
        return qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf if modifier == "idf" else None)

    if vectors is None:
        edge_vectors: Any = None
    elif "size" in vectors:
        edge_vectors = dense(vectors)
    else:
        edge_vectors = {name: dense(p) for name, p in vectors.items()}
    hnsw = body.get("hnsw_config") or {}
    config = qe.EdgeConfig(
        vectors=edge_vectors,
        sparse_vectors={name: sparse_params(p) for name, p in sparse.items()} or None,
        on_disk_payload=body.get("on_disk_payload"),
        hnsw_config=qe.HnswIndexConfig(
            m=hnsw.get("m", 16),
            ef_construct=hnsw.get("ef_construct", 100),
            full_scan_threshold=hnsw.get("full_scan_threshold", 10_000),
            max_indexing_threads=hnsw.get("max_indexing_threads", 0),  # all cores: it stalls anyway
        ),
    )
    echoed = {"vectors": vectors, "sparse_vectors": {n: {"modifier": (p or {}).get("modifier")} for n, p in sparse.items()}}
    return config, echoed


# --------------------------------------------------------------- qdrant_edge -> JSON


def _vector_out(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _vector_out(x) for k, x in v.items()}
    if isinstance(v, qe.SparseVector):
        return {"indices": v.indices, "values": v.values}
    return v


def record_out(r: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": r.id}
    if (payload := r.payload) is not None:
        out["payload"] = payload
    if (vector := r.vector) is not None:
        out["vector"] = _vector_out(vector)
    if (order_value := r.order_value) is not None:
        out["order_value"] = order_value
    return out


def scored_out(p: Any) -> dict[str, Any]:
    out = record_out(p)
    out["version"] = p.version
    out["score"] = p.score
    return out


def _schema_name(t: Any) -> str:
    return str(t).rsplit(".", 1)[-1].lower()


# --------------------------------------------------------------------------- storage


class Collection:
    """One collection = one EdgeShard. Writes are serialised; readers count as users so a
    deleted collection is closed and removed only after its last in-flight request."""

    def __init__(self, name: str, path: Path, shard: qe.EdgeShard, meta: dict[str, Any]) -> None:
        self.name, self.path, self.shard, self.meta = name, path, shard, meta
        self.write_lock = threading.Lock()
        self.dirty = False
        self.changes_since_optimize = 0
        self.last_write = 0.0
        self.last_flush = time.monotonic()
        self.optimizing = False
        self._ref_lock = threading.Lock()
        self._users = 0
        self._deleted = False
        self.closed = False

    def acquire(self) -> bool:
        with self._ref_lock:
            if self._deleted or self.closed:
                return False
            self._users += 1
            return True

    def release(self) -> None:
        with self._ref_lock:
            self._users -= 1
            dispose = self._deleted and self._users == 0
        if dispose:
            self._dispose()

    def mark_deleted(self) -> None:
        with self._ref_lock:
            self._deleted = True
            dispose = self._users == 0
        if dispose:
            self._dispose()

    def _dispose(self) -> None:
        try:
            self.shard.close()
        finally:
            shutil.rmtree(self.path, ignore_errors=True)

    def update(self, op: Any, changes: int) -> None:
        """Apply one update (appended to the WAL before this returns)."""
        with self.write_lock:
            self.shard.update(op)
            self.dirty = True
            self.last_write = time.monotonic()
            self.changes_since_optimize += changes

    def flush(self) -> None:
        with self.write_lock:
            if self.dirty and not self.closed:
                self.dirty = False
                t0 = time.perf_counter()
                self.shard.flush()
                if (took := time.perf_counter() - t0) > 0.1:
                    log.info("flushed %s in %.2fs", self.name, took)
            self.last_flush = time.monotonic()


def _take_dir_lock(root: Path) -> int:
    fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise IndexLockedError(
            f"index directory {root} is in use by another process (pid {owner}); "
            "only one index server may own it (point QDRANT_URL at that server instead)"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(orjson.dumps(data))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class Store:
    """All collections under one directory, owned exclusively by this process."""

    def __init__(
        self,
        root: Path,
        *,
        flush_interval: float = FLUSH_INTERVAL_S,
        flush_quiet: float = FLUSH_QUIET_S,
        optimize_min_changes: int = OPTIMIZE_MIN_CHANGES,
        optimize_idle: float = OPTIMIZE_IDLE_S,
    ) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock_fd: int | None = _take_dir_lock(self.root)  # before any shard is opened
        self.flush_interval = flush_interval
        self.flush_quiet = flush_quiet
        self.optimize_min_changes = optimize_min_changes
        self.optimize_idle = optimize_idle
        self.last_request = time.monotonic()  # set by every API request
        self._dir = self.root / "collections"
        self._dir.mkdir(exist_ok=True)
        self._collections: dict[str, Collection] = {}
        self._registry_lock = threading.Lock()
        self._stop = threading.Event()
        self._load()
        self._threads = [
            threading.Thread(target=self._flush_loop, name="index-flush", daemon=True),
            threading.Thread(target=self._optimize_loop, name="index-optimize", daemon=True),
        ]
        for t in self._threads:
            t.start()

    # -- registry

    def _load(self) -> None:
        for d in sorted(self._dir.iterdir()):
            meta_path = d / "meta.json"
            if not meta_path.exists():
                log.info("removing unfinished or deleted collection directory %s", d)
                shutil.rmtree(d, ignore_errors=True)
                continue
            meta = orjson.loads(meta_path.read_bytes())
            t0 = time.perf_counter()
            shard = qe.EdgeShard.load(str(d / "shard"))
            coll = Collection(meta["name"], d, shard, meta)
            coll.changes_since_optimize = self.optimize_min_changes  # WAL replay may leave work
            self._collections[meta["name"]] = coll
            log.info("loaded collection %s in %.2fs", meta["name"], time.perf_counter() - t0)

    def names(self) -> list[str]:
        return sorted(self._collections)

    def exists(self, name: str) -> bool:
        return name in self._collections

    @contextlib.contextmanager
    def use(self, name: str) -> Iterator[Collection]:
        """The collection, kept open for the duration of the block; 404 if absent."""
        coll = self._collections.get(name)
        if coll is None or not coll.acquire():
            raise not_found(f"Collection `{name}` doesn't exist!")
        try:
            yield coll
        finally:
            coll.release()

    def create(self, name: str, body: dict[str, Any]) -> bool:
        if not _NAME_RE.match(name):
            raise ApiError(422, f"Validation error in path parameters: [name: invalid collection name {name!r}]")
        config, echoed = to_edge_config(body)
        with self._registry_lock:
            if name in self._collections:
                raise ApiError(409, f"Wrong input: Collection `{name}` already exists!")
            path = self._dir / uuid.uuid4().hex
            shard = qe.EdgeShard.create(str(path / "shard"), config)
            meta = {"name": name, "created_at": datetime.now(timezone.utc).isoformat(), "params": echoed}
            _write_json_atomic(path / "meta.json", meta)
            self._collections[name] = Collection(name, path, shard, meta)
        log.info("created collection %s", name)
        return True

    def delete(self, name: str) -> bool:
        with self._registry_lock:
            coll = self._collections.get(name)
            if coll is None:
                return False
            (coll.path / "meta.json").unlink(missing_ok=True)  # durable intent: GC'd at next start
            del self._collections[name]
        coll.mark_deleted()
        log.info("deleted collection %s", name)
        return True

    # -- background work

    def _flush_loop(self) -> None:
        while not self._stop.wait(0.5):
            now = time.monotonic()
            for coll in list(self._collections.values()):
                due = now - coll.last_write >= self.flush_quiet or now - coll.last_flush >= self.flush_interval
                if coll.dirty and due and coll.acquire():
                    try:
                        coll.flush()
                    except Exception:
                        log.exception("flush of %s failed", coll.name)
                    finally:
                        coll.release()

    def _optimize_loop(self) -> None:
        while not self._stop.wait(0.5):
            for coll in list(self._collections.values()):
                if self._stop.is_set():
                    return
                idle = time.monotonic() - self.last_request >= self.optimize_idle
                if coll.changes_since_optimize >= self.optimize_min_changes and idle and coll.acquire():
                    try:
                        self._optimize(coll)
                    finally:
                        coll.release()

    @staticmethod
    def _optimize(coll: Collection) -> None:
        coll.changes_since_optimize = 0  # writes during the run count towards the next one
        coll.optimizing = True
        t0 = time.perf_counter()
        try:
            changed = coll.shard.optimize()
            if changed:
                log.info("optimized %s in %.1fs", coll.name, time.perf_counter() - t0)
        except Exception:
            log.exception("optimize of %s failed", coll.name)
        finally:
            coll.optimizing = False

    def close(self) -> None:
        """Flush every collection, close the shards and release the directory lock."""
        self._stop.set()
        with self._registry_lock:
            colls = list(self._collections.values())
            self._collections.clear()
        for coll in colls:
            try:
                coll.flush()
                with coll.write_lock:
                    coll.closed = True
                    coll.shard.close()
            except Exception:
                log.exception("closing %s failed", coll.name)
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None
            log.info("closed %s (%d collections flushed)", self.root, len(colls))


# ------------------------------------------------------------------------ endpoints

Handler = Callable[[Store, dict[str, Any], Any, QueryParams], Any]


def _wait(params: QueryParams) -> bool:
    return params.get("wait", "false").lower() in ("true", "1")


def _update_result(params: QueryParams) -> dict[str, Any]:
    # Updates are applied before answering either way; wait only changes the status word.
    return {"operation_id": next(_op_ids), "status": "completed" if _wait(params) else "acknowledged"}


def _selector(body: dict[str, Any]) -> tuple[list[Any] | None, qe.Filter | None]:
    ids, flt = body.get("points"), body.get("filter")
    if (ids is None) == (flt is None):
        raise bad_input("exactly one of `points` or `filter` is required")
    return ([point_id(i) for i in ids] if ids is not None else None), to_filter(flt)


def h_list_collections(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    return {"collections": [{"name": n} for n in store.names()]}


def h_exists(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    return {"exists": store.exists(pp["name"])}


def h_create_collection(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    return store.create(pp["name"], body)


def h_delete_collection(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    return store.delete(pp["name"])


def h_get_collection(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    with store.use(pp["name"]) as coll:
        info = coll.shard.info()
        params = coll.meta["params"]
        pending = coll.changes_since_optimize >= store.optimize_min_changes
        status = "yellow" if coll.optimizing else ("grey" if pending else "green")
        return {
            "status": status,
            "optimizer_status": "ok",
            "segments_count": info.segments_count,
            "points_count": info.points_count,
            "indexed_vectors_count": info.indexed_vectors_count,
            "created_at": coll.meta.get("created_at"),
            "config": {
                "params": {
                    "vectors": params.get("vectors"),
                    "sparse_vectors": params.get("sparse_vectors") or None,
                    "shard_number": 1,
                    "replication_factor": 1,
                    "write_consistency_factor": 1,
                    "on_disk_payload": True,
                },
                "hnsw_config": {"m": 16, "ef_construct": 100, "full_scan_threshold": 10_000},
                "optimizer_config": {"default_segment_number": 0, "flush_interval_sec": int(store.flush_interval)},
                "wal_config": {"wal_capacity_mb": 32, "wal_segments_ahead": 0},
            },
            "payload_schema": {
                key: {"data_type": _schema_name(v.data_type), "points": v.points}
                for key, v in info.payload_schema.items()
            },
        }


def h_create_index(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    schema = to_payload_schema(body.get("field_schema"))
    with store.use(pp["name"]) as coll:
        coll.update(qe.UpdateOperation.create_field_index(body["field_name"], schema), 0)
    return _update_result(qp)


def h_delete_index(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    with store.use(pp["name"]) as coll:
        coll.update(qe.UpdateOperation.delete_field_index(pp["field"]), 0)
    return _update_result(qp)


def h_upsert(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    points = to_points(body)
    mode = body.get("update_mode")
    op = qe.UpdateOperation.upsert_points(
        points,
        condition=to_filter(body.get("update_filter")),
        update_mode=_UPDATE_MODES[mode] if mode else None,
    )
    with store.use(pp["name"]) as coll:
        coll.update(op, len(points))
    return _update_result(qp)


def h_delete_points(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    ids, flt = _selector(body)
    with store.use(pp["name"]) as coll:
        if ids is not None:
            coll.update(qe.UpdateOperation.delete_points(ids), len(ids))
        else:  # the count (payload index) only feeds the optimizer's bookkeeping
            coll.update(qe.UpdateOperation.delete_points_by_filter(flt), coll.shard.count(qe.CountRequest(filter=flt)))
    return _update_result(qp)


def _payload_handler(by_ids: Callable[..., Any], by_filter: Callable[..., Any], field: str | None) -> Handler:
    def handler(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
        args = [body[field]] if field else []
        kwargs = {"key": body["key"]} if field == "payload" and body.get("key") is not None else {}
        ids, flt = _selector(body)
        op = by_ids(ids, *args, **kwargs) if ids is not None else by_filter(flt, *args, **kwargs)
        with store.use(pp["name"]) as coll:
            coll.update(op, 0)
        return _update_result(qp)

    return handler


h_set_payload = _payload_handler(qe.UpdateOperation.set_payload, qe.UpdateOperation.set_payload_by_filter, "payload")
h_overwrite_payload = _payload_handler(
    qe.UpdateOperation.overwrite_payload, qe.UpdateOperation.overwrite_payload_by_filter, "payload"
)
h_delete_payload = _payload_handler(
    qe.UpdateOperation.delete_payload, qe.UpdateOperation.delete_payload_by_filter, "keys"
)
h_clear_payload = _payload_handler(qe.UpdateOperation.clear_payload, qe.UpdateOperation.clear_payload_by_filter, None)


def h_retrieve(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    ids = [point_id(i) for i in body["ids"]]
    with store.use(pp["name"]) as coll:
        records = coll.shard.retrieve(
            ids, with_payload=_with_payload(body.get("with_payload"), True), with_vector=_with_vector(body.get("with_vector"))
        )
    return [record_out(r) for r in records]


def h_get_point(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    raw = pp["id"]
    pid = point_id(int(raw) if raw.isdigit() else raw)
    with store.use(pp["name"]) as coll:
        records = coll.shard.retrieve([pid], with_payload=True, with_vector=True)
    if not records:
        raise not_found(f"No point with id {pid} found")
    return record_out(records[0])


def h_scroll(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    offset = body.get("offset")
    order_by = body.get("order_by")
    req = qe.ScrollRequest(
        offset=point_id(offset) if offset is not None else None,
        limit=body.get("limit") or 10,
        filter=to_filter(body.get("filter")),
        with_payload=_with_payload(body.get("with_payload"), True),
        with_vector=_with_vector(body.get("with_vector")),
        order_by=_order_by(order_by) if order_by else None,
    )
    with store.use(pp["name"]) as coll:
        records, next_offset = coll.shard.scroll(req)
    return {"points": [record_out(r) for r in records], "next_page_offset": next_offset}


def h_count(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    req = qe.CountRequest(exact=body.get("exact", True) is not False, filter=to_filter(body.get("filter")))
    with store.use(pp["name"]) as coll:
        return {"count": coll.shard.count(req)}


def h_query(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    req = to_query_request(body)
    with store.use(pp["name"]) as coll:
        points = coll.shard.query(req)
    return {"points": [scored_out(p) for p in points]}


def h_query_batch(store: Store, pp: dict[str, Any], body: Any, qp: QueryParams) -> Any:
    reqs = [to_query_request(s) for s in body["searches"]]
    with store.use(pp["name"]) as coll:
        results = coll.shard.query_batch(qe.QueryBatchRequest(reqs))
    return [{"points": [scored_out(p) for p in points]} for points in results]


# ---------------------------------------------------------------------- ASGI wiring


def _json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


def _error(err: ApiError, t0: float) -> Response:
    return _json({"status": {"error": err.message}, "time": time.perf_counter() - t0}, err.status)


def _invoke(handler: Handler, store: Store, pp: dict[str, Any], raw: bytes, qp: QueryParams) -> Any:
    try:
        body = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"Format error in JSON body: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "Format error in JSON body: expected a JSON object")
    try:
        return handler(store, pp, body, qp)
    except ApiError:
        raise
    except KeyError as exc:
        raise bad_input(f"missing field {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the engine raises plain Exception
        err = _engine_error(exc)
        if err.status >= 500:
            log.exception("request failed")
        raise err from None


def _endpoint(handler: Handler, *, threaded: bool = True) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        t0 = time.perf_counter()
        store: Store = request.app.state.store
        store.last_request = time.monotonic()
        try:
            raw = await request.body()
            args = (handler, store, request.path_params, raw, request.query_params)
            result = await run_in_threadpool(_invoke, *args) if threaded else _invoke(*args)
        except ApiError as err:
            return _error(err, t0)
        except Exception:  # noqa: BLE001
            log.exception("unexpected error")
            return _error(ApiError(500, "Service internal error: see the index server log"), t0)
        return _json({"result": result, "status": "ok", "time": time.perf_counter() - t0})

    return endpoint


@functools.cache
def _version_info() -> bytes:
    # qdrant-client warns when major.minor differ by more than one: claim its own version.
    try:
        version = metadata.version("qdrant-client")
    except metadata.PackageNotFoundError:
        version = "1.17.0"
    engine = f"bayes index server, qdrant-edge-py {metadata.version('qdrant-edge-py')}"
    return orjson.dumps({"title": "qdrant - vector search engine", "version": version, "engine": engine})


async def _root(request: Request) -> Response:
    return Response(_version_info(), media_type="application/json")


async def _health(request: Request) -> Response:
    return PlainTextResponse("healthz check passed")


def create_app(store: Store) -> Starlette:
    """The ASGI app serving ``store``; the store is flushed and closed on shutdown."""
    c = "/collections/{name}"
    # Reads run on the event loop: the engine holds the GIL anyway, so a thread hop would
    # only add ~0.3 ms. Writes (big bodies, the write lock) go to the thread pool.
    fast = {"threaded": False}
    routes = [
        Route("/", _root, methods=["GET"]),
        Route("/healthz", _health, methods=["GET"]),
        Route("/livez", _health, methods=["GET"]),
        Route("/readyz", _health, methods=["GET"]),
        Route("/collections", _endpoint(h_list_collections, **fast), methods=["GET"]),
        Route(c, _endpoint(h_get_collection, **fast), methods=["GET"]),
        Route(c, _endpoint(h_create_collection), methods=["PUT"]),
        Route(c, _endpoint(h_delete_collection), methods=["DELETE"]),
        Route(c + "/exists", _endpoint(h_exists, **fast), methods=["GET"]),
        Route(c + "/index", _endpoint(h_create_index), methods=["PUT"]),
        Route(c + "/index/{field}", _endpoint(h_delete_index), methods=["DELETE"]),
        Route(c + "/points", _endpoint(h_upsert), methods=["PUT"]),
        Route(c + "/points", _endpoint(h_retrieve, **fast), methods=["POST"]),
        Route(c + "/points/delete", _endpoint(h_delete_points), methods=["POST"]),
        Route(c + "/points/payload", _endpoint(h_set_payload), methods=["POST"]),
        Route(c + "/points/payload", _endpoint(h_overwrite_payload), methods=["PUT"]),
        Route(c + "/points/payload/delete", _endpoint(h_delete_payload), methods=["POST"]),
        Route(c + "/points/payload/clear", _endpoint(h_clear_payload), methods=["POST"]),
        Route(c + "/points/scroll", _endpoint(h_scroll, **fast), methods=["POST"]),
        Route(c + "/points/count", _endpoint(h_count, **fast), methods=["POST"]),
        Route(c + "/points/query", _endpoint(h_query, **fast), methods=["POST"]),
        Route(c + "/points/query/batch", _endpoint(h_query_batch, **fast), methods=["POST"]),
        Route(c + "/points/{id}", _endpoint(h_get_point, **fast), methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await run_in_threadpool(store.close)

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.store = store
    return app


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: take the directory lock, open the shards, serve."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m bayes_app.search.index_server", description=__doc__.split("\n")[0])
    parser.add_argument("--path", required=True, type=Path, help="index directory (created if missing)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6333)
    parser.add_argument("--flush-interval", type=float, default=FLUSH_INTERVAL_S,
                        help="most seconds between flushes while writes go on")
    parser.add_argument("--flush-quiet", type=float, default=FLUSH_QUIET_S,
                        help="flush a shard this many seconds after its last write")
    parser.add_argument("--optimize-min-changes", type=int, default=OPTIMIZE_MIN_CHANGES,
                        help="points written or deleted before a background optimize")
    parser.add_argument("--optimize-idle", type=float, default=OPTIMIZE_IDLE_S,
                        help="seconds without any request before a (blocking) optimize may start")
    parser.add_argument("--log-level", default=os.environ.get("BAYES_LOG_LEVEL", "INFO"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s index %(levelname)s %(message)s")
    try:
        store = Store(
            args.path,
            flush_interval=args.flush_interval,
            flush_quiet=args.flush_quiet,
            optimize_min_changes=args.optimize_min_changes,
            optimize_idle=args.optimize_idle,
        )
    except IndexLockedError as err:
        print(f"index server: {err}", file=sys.stderr)
        return 3
    log.info("serving %s on http://%s:%d", args.path, args.host, args.port)
    try:
        uvicorn.run(
            create_app(store),
            host=args.host,
            port=args.port,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=10,
        )
    finally:
        store.close()  # no-op after a clean lifespan shutdown; covers a failed bind
    return 0


if __name__ == "__main__":
    sys.exit(main())
