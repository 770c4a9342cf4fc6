"""The ASGI app (Qdrant's routes and envelopes) and the process entry point."""

from __future__ import annotations

import argparse
import contextlib
import functools
import hmac
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from bayes_app.search.index_server import handlers as h
from bayes_app.search.index_server.errors import (
    ApiError,
    IndexLockedError,
    _engine_error,
    bad_input,
)
from bayes_app.search.index_server.handlers import Handler
from bayes_app.search.index_server.store import (
    FLUSH_INTERVAL_S,
    FLUSH_QUIET_S,
    OPTIMIZE_IDLE_S,
    OPTIMIZE_MIN_CHANGES,
    Store,
)

log = logging.getLogger("bayes.index_server")


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
    except Exception as exc:
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
        except Exception:
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


async def _root(_request: Request) -> Response:
    return Response(_version_info(), media_type="application/json")


async def _health(_request: Request) -> Response:
    return PlainTextResponse("healthz check passed")


_OPEN_PATHS = frozenset({"/healthz", "/livez", "/readyz"})  # as Qdrant: probes need no key


class _RequireApiKey:
    """Qdrant's API key check: `api-key: <key>` or `Authorization: Bearer <key>` on every
    request but the health probes; 401 otherwise."""

    def __init__(self, app: ASGIApp, api_key: str) -> None:
        self.app, self.key = app, api_key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in _OPEN_PATHS:
            given = b""
            for name, value in scope.get("headers", []):
                name = name.lower()
                if name == b"api-key":
                    given = value
                elif name == b"authorization" and value[:7].lower() == b"bearer " and not given:
                    given = value[7:].strip()
            if not hmac.compare_digest(given, self.key):
                body = orjson.dumps(
                    {"status": {"error": "Must provide an API key or an Authorization bearer token"}, "time": 0.0}
                )
                await Response(body, status_code=401, media_type="application/json")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(store: Store, api_key: str | None = None) -> ASGIApp:
    """The ASGI app serving ``store``; the store is flushed and closed on shutdown. With
    ``api_key``, every request but the health probes must carry it (`api-key` header)."""
    c = "/collections/{name}"
    # Reads run on the event loop: the engine holds the GIL anyway, so a thread hop would
    # only add ~0.3 ms. Writes (big bodies, the write lock) go to the thread pool.
    fast = {"threaded": False}
    routes = [
        Route("/", _root, methods=["GET"]),
        Route("/healthz", _health, methods=["GET"]),
        Route("/livez", _health, methods=["GET"]),
        Route("/readyz", _health, methods=["GET"]),
        Route("/collections", _endpoint(h.h_list_collections, **fast), methods=["GET"]),
        Route(c, _endpoint(h.h_get_collection, **fast), methods=["GET"]),
        Route(c, _endpoint(h.h_create_collection), methods=["PUT"]),
        Route(c, _endpoint(h.h_delete_collection), methods=["DELETE"]),
        Route(c + "/exists", _endpoint(h.h_exists, **fast), methods=["GET"]),
        Route(c + "/index", _endpoint(h.h_create_index), methods=["PUT"]),
        Route(c + "/index/{field}", _endpoint(h.h_delete_index), methods=["DELETE"]),
        Route(c + "/points", _endpoint(h.h_upsert), methods=["PUT"]),
        Route(c + "/points", _endpoint(h.h_retrieve, **fast), methods=["POST"]),
        Route(c + "/points/delete", _endpoint(h.h_delete_points), methods=["POST"]),
        Route(c + "/points/payload", _endpoint(h.h_set_payload), methods=["POST"]),
        Route(c + "/points/payload", _endpoint(h.h_overwrite_payload), methods=["PUT"]),
        Route(c + "/points/payload/delete", _endpoint(h.h_delete_payload), methods=["POST"]),
        Route(c + "/points/payload/clear", _endpoint(h.h_clear_payload), methods=["POST"]),
        Route(c + "/points/scroll", _endpoint(h.h_scroll, **fast), methods=["POST"]),
        Route(c + "/points/count", _endpoint(h.h_count, **fast), methods=["POST"]),
        Route(c + "/points/query", _endpoint(h.h_query, **fast), methods=["POST"]),
        Route(c + "/points/query/batch", _endpoint(h.h_query_batch, **fast), methods=["POST"]),
        Route(c + "/points/{id}", _endpoint(h.h_get_point, **fast), methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        await run_in_threadpool(store.close)

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.store = store
    return _RequireApiKey(app, api_key) if api_key else app


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: take the directory lock, open the shards, serve."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m bayes_app.search.index_server", description=__doc__.split("\n")[0])
    parser.add_argument("--path", required=True, type=Path, help="index directory (created if missing)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6333)
    parser.add_argument(
        "--flush-interval", type=float, default=FLUSH_INTERVAL_S, help="most seconds between flushes while writes go on"
    )
    parser.add_argument(
        "--flush-quiet", type=float, default=FLUSH_QUIET_S, help="flush a shard this many seconds after its last write"
    )
    parser.add_argument(
        "--optimize-min-changes",
        type=int,
        default=OPTIMIZE_MIN_CHANGES,
        help="points written or deleted before a background optimize",
    )
    parser.add_argument(
        "--optimize-idle",
        type=float,
        default=OPTIMIZE_IDLE_S,
        help="seconds without any request before a (blocking) optimize may start",
    )
    parser.add_argument("--log-level", default=os.environ.get("BAYES_LOG_LEVEL", "INFO"))
    parser.add_argument(
        "--api-key-file",
        type=Path,
        default=None,
        help="file holding the API key every request must carry (the key never on the command line)",
    )
    args = parser.parse_args(argv)
    api_key = args.api_key_file.read_text().strip() if args.api_key_file else None
    if args.api_key_file and not api_key:
        print(f"index server: {args.api_key_file} is empty", file=sys.stderr)
        return 2
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
            create_app(store, api_key),
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
