"""The REST endpoints: one handler per Qdrant operation, over the store."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any
from uuid import UUID

import qdrant_edge as qe
from starlette.datastructures import QueryParams

from bayes_app.search.index_server.convert import (
    _UPDATE_MODES,
    _order_by,
    _schema_name,
    _with_payload,
    _with_vector,
    point_id,
    record_out,
    scored_out,
    to_filter,
    to_payload_schema,
    to_points,
    to_query_request,
)
from bayes_app.search.index_server.errors import bad_input, not_found
from bayes_app.search.index_server.store import Store

_op_ids = itertools.count(1)

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
            assert flt is not None  # `_selector` gives exactly one of the two
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
    ids: list[int | UUID | str] = [point_id(i) for i in body["ids"]]
    with store.use(pp["name"]) as coll:
        records = coll.shard.retrieve(
            ids,
            with_payload=_with_payload(body.get("with_payload"), True),
            with_vector=_with_vector(body.get("with_vector")),
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
