"""Qdrant's REST contract as qdrant-client (the pinned version) states it, and a recording
proxy to check real traffic against it.

The table of operations is read from the generated `qdrant_client.http.api` modules: each
`_build_for_*` method names the HTTP method, the URL template, the body model (its parameter
annotated `m.<Model>`) and the response model (`type_=m.<Model>`)."""

from __future__ import annotations

import ast
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from pydantic import TypeAdapter


@dataclass(frozen=True)
class Operation:
    name: str
    method: str
    url: str  # template, e.g. /collections/{collection_name}/points/query
    body: str | None  # model name in qdrant_client.http.models
    response: str | None  # None: not JSON (e.g. metrics text)

    def matches(self, method: str, path: str) -> bool:
        pattern = "^" + re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(self.url)) + "$"
        return method == self.method and re.match(pattern, path) is not None


def operations() -> list[Operation]:
    import qdrant_client.http.api as api_pkg

    ops = []
    for path in sorted(Path(api_pkg.__file__).parent.glob("*_api.py")):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("_build_for_")):
                continue
            body = None
            for arg in fn.args.args:
                ann = arg.annotation
                if isinstance(ann, ast.Attribute) and isinstance(ann.value, ast.Name) and ann.value.id == "m":
                    body = ann.attr
            call = next(
                c
                for c in ast.walk(fn)
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "request"
            )
            kw = {k.arg: k.value for k in call.keywords}
            ops.append(
                Operation(
                    fn.name.removeprefix("_build_for_"),
                    kw["method"].value,
                    kw["url"].value,
                    body,
                    getattr(kw["type_"], "attr", None),
                )
            )
    # a literal segment wins over a template one (".../points/query" before ".../points/{id}")
    return sorted(ops, key=lambda o: o.url.count("{"))


def model(name: str) -> Any:
    from qdrant_client.http import models as m

    return getattr(m, name)


def unknown_keys(sent: Any, known: Any, where: str = "") -> list[str]:
    """Keys present in `sent` (the JSON on the wire) but absent from `known` (the validated
    model dumped back): fields Qdrant's schema does not define. Response models ignore extra
    fields, so validation alone would not notice them."""
    out: list[str] = []
    if isinstance(sent, dict) and isinstance(known, dict):
        for k, v in sent.items():
            if k not in known:
                out.append(f"{where}.{k}")
            else:
                out += unknown_keys(v, known[k], f"{where}.{k}")
    elif isinstance(sent, list) and isinstance(known, list):
        for i, (a, b) in enumerate(zip(sent, known)):
            out += unknown_keys(a, b, f"{where}[{i}]")
    return out


def validate(type_name: str, data: Any) -> tuple[Any, list[str]]:
    """Validate JSON against a qdrant model (class or union alias); returns (parsed, unknown keys).
    Raises pydantic.ValidationError on a contract violation."""
    target = model(type_name)
    parsed = TypeAdapter(target).validate_python(data)
    dumped = TypeAdapter(target).dump_python(parsed, mode="json", by_alias=True, exclude_unset=True)
    return parsed, unknown_keys(data, dumped)


@dataclass
class Exchange:
    method: str
    path: str
    query: str
    request: Any
    status: int
    response: Any


@dataclass
class RecordingProxy:
    """HTTP proxy in a thread: forwards to `upstream`, records every JSON exchange."""

    upstream: str
    exchanges: list[Exchange] = field(default_factory=list)

    def start(self) -> RecordingProxy:
        proxy = self
        client = httpx.Client(base_url=self.upstream, timeout=60)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _forward(self):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in {"host", "content-length", "connection", "accept-encoding"}
                }
                r = client.request(self.command, self.path, content=raw, headers=headers)
                path, _, query = self.path.partition("?")
                body = r.content
                proxy.exchanges.append(
                    Exchange(
                        self.command,
                        path,
                        query,
                        json.loads(raw) if raw else None,
                        r.status_code,
                        json.loads(body)
                        if body and r.headers.get("content-type", "").startswith("application/json")
                        else None,
                    )
                )
                self.send_response(r.status_code)
                for k, v in r.headers.items():
                    if k.lower() not in {"content-length", "transfer-encoding", "connection", "content-encoding"}:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
