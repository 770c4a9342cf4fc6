"""Qdrant REST JSON to qdrant-edge objects and back (filters, queries, points, configs)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import qdrant_edge as qe

from bayes_app.search.index_server.errors import bad_input, unsupported

DEFAULT_RRF_K = 2  # Qdrant's constant for a plain {"fusion": "rrf"}

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
    return _query_object(q, using)


def _query_object(q: dict[str, Any], using: str | None) -> Any:
    if "nearest" in q:
        if q.get("mmr"):
            raise unsupported("MMR")
        return to_query(q["nearest"], using)
    if "indices" in q:
        return qe.Query.Nearest(qe.SparseVector(q["indices"], q["values"]), using=using)
    if "fusion" in q:
        return _fusion(q["fusion"])
    if "rrf" in q:
        rrf = q["rrf"] or {}
        return qe.Fusion.Rrf(k=rrf.get("k") or DEFAULT_RRF_K, weights=rrf.get("weights"))
    if "order_by" in q:
        return _order_by(q["order_by"])
    if "sample" in q:
        return qe.Sample.Random
    raise unsupported(f"query {sorted(q)}")


def _fusion(name: Any) -> Any:
    if name == "rrf":
        return qe.Fusion.Rrf(k=DEFAULT_RRF_K)
    if name == "dbsf":
        return qe.Fusion.Dbsf()
    raise bad_input(f"unknown fusion {name!r}")


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
            per_point = [{name: _named_vector(col[i]) for name, col in vectors.items()} for i in range(len(ids))]
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
    echoed = {
        "vectors": vectors,
        "sparse_vectors": {n: {"modifier": (p or {}).get("modifier")} for n, p in sparse.items()},
    }
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
