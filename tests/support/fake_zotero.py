"""A fake Zotero Web API v3 (and Zotero 7 local API) speaking the real wire protocol.

A real HTTP server (uvicorn in a thread) so the real pyzotero is exercised end to end.
Each library (user or group) has a version counter, per-object versions, a delete log
(with a floor: `since` below it answers 409), a trash, PDF files behind a 302 to a fake
file store, `If-Modified-Since-Version` → 304, pagination (`start`/`limit`, `Link`,
`Total-Results`), and injectable faults: any status with or without `Retry-After` (seconds
or HTTP date), a one-shot `Backoff` header on a 200, per-request latency. It counts
requests and the most requests it ever had in flight.

Seed data: the real recorded responses in tests/fixtures/zotero (pyzotero's, BlueOak-1.0.0).
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from tests.support import fake_zotero_write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "zotero"
DELETED_KINDS = ("collections", "searches", "items", "tags", "settings")


def recorded_items() -> list[dict]:
    """The `data` of the 20 real recorded items."""
    return [i["data"] for i in json.loads((FIXTURES / "items_doc.json").read_text())]


def recorded_collections() -> list[dict]:
    """The `data` of the 15 real recorded collections (two of them nested)."""
    return [c["data"] for c in json.loads((FIXTURES / "collections_doc.json").read_text())]


@dataclass
class Fault:
    status: int
    headers: dict = field(default_factory=dict)
    path: str = ""  # only requests whose path contains this
    times: int = 1
    body: str = "fault"


class FakeLibrary:
    """One Zotero library: objects with versions, a delete log, files."""

    def __init__(self, kind: str, lid: int, name: str):
        self.kind, self.id, self.name = kind, lid, name  # kind: "users" | "groups"
        self.version = 0
        self.items: dict[str, dict] = {}
        self.children: dict[str, set[str]] = {}
        self.collections: dict[str, dict] = {}
        self.deleted: dict[str, dict[str, int]] = {k: {} for k in DELETED_KINDS}
        self.delete_floor = 0  # /deleted?since=N with N < floor → 409 (log truncated)
        self.files: dict[str, bytes] = {}
        self.lock = threading.RLock()

    # ---- writes (each one a transaction → a new library version) -------------------------
    def bump(self) -> int:
        self.version += 1
        return self.version

    def put_item(self, data: dict) -> dict:
        with self.lock:
            data = copy.deepcopy(data)
            data["version"] = self.bump()
            data.setdefault("dateModified", f"2025-01-01T00:00:00Z#{self.version:08d}")
            old = self.items.get(data["key"])
            if old and old.get("parentItem"):
                self.children.get(old["parentItem"], set()).discard(data["key"])
            self.items[data["key"]] = data
            if data.get("parentItem"):
                self.children.setdefault(data["parentItem"], set()).add(data["key"])
            self.deleted["items"].pop(data["key"], None)
            return data

    def edit_item(self, key: str, **changes) -> dict:
        with self.lock:
            d = dict(self.items[key], **changes)
            d.pop("dateModified", None)
            return self.put_item(d)

    def trash_item(self, key: str) -> dict:
        return self.edit_item(key, deleted=1)

    def put_collection(self, data: dict) -> dict:
        with self.lock:
            data = dict(copy.deepcopy(data), version=self.bump())
            self.collections[data["key"]] = data
            return data

    def delete_item(self, key: str) -> None:
        with self.lock:
            v = self.bump()
            for k in [key, *self.children.get(key, ())]:  # Zotero deletes child items too
                d = self.items.pop(k, None)
                if d and d.get("parentItem"):
                    self.children.get(d["parentItem"], set()).discard(k)
                self.files.pop(k, None)
                self.deleted["items"][k] = v
            self.children.pop(key, None)

    def delete_collection(self, key: str) -> None:
        with self.lock:
            v = self.bump()
            self.collections.pop(key)
            self.deleted["collections"][key] = v

    def add_pdf(
        self,
        parent: str | None,
        key: str,
        blob: bytes,
        filename: str | None = None,
        link_mode: str = "imported_file",
        with_file: bool = True,
    ) -> dict:
        """A PDF attachment; `with_file=False` models a WebDAV user (the file is not in
        Zotero Storage, so /file answers 404)."""
        with self.lock:
            if with_file and link_mode in ("imported_file", "imported_url"):
                self.files[key] = blob
            data = {
                "key": key,
                "itemType": "attachment",
                "linkMode": link_mode,
                "title": "Full Text PDF",
                "accessDate": "",
                "url": "",
                "note": "",
                "contentType": "application/pdf",
                "charset": "",
                "filename": filename or f"{key}.pdf",
                "tags": [],
                "relations": {},
                "dateAdded": "2025-01-01T00:00:00Z",
            }
            if link_mode in ("imported_file", "imported_url"):
                data["md5"] = hashlib.md5(blob).hexdigest()
                data["mtime"] = 1735689600000 + self.version
            else:
                data["path"] = f"/home/someone/papers/{filename or key}.pdf"
            if parent:
                data["parentItem"] = parent
            return self.put_item(data)

    def replace_file(self, key: str, blob: bytes) -> dict:
        """A new version of an attachment's file (the attachment item gets a new md5)."""
        with self.lock:
            self.files[key] = blob
            return self.edit_item(key, md5=hashlib.md5(blob).hexdigest(), mtime=1735689600000 + self.version + 1)

    def truncate_delete_log(self) -> None:
        """Forget the delete log up to now: older `since` values get 409."""
        with self.lock:
            self.delete_floor = self.version + 1

    # ---- JSON envelopes like api.zotero.org ------------------------------------------------
    def _lib(self) -> dict:
        return {"type": self.kind[:-1], "id": self.id, "name": self.name, "links": {}}

    def item_json(self, base: str, d: dict) -> dict:
        prefix = f"{base}/{self.kind}/{self.id}"
        links = {
            "self": {"href": f"{prefix}/items/{d['key']}", "type": "application/json"},
            "alternate": {"href": f"https://www.zotero.org/fake/items/{d['key']}", "type": "text/html"},
        }
        meta: dict = {}
        if d["itemType"] == "attachment":
            if d.get("parentItem"):
                links["up"] = {"href": f"{prefix}/items/{d['parentItem']}", "type": "application/json"}
            if d["key"] in self.files:
                links["enclosure"] = {
                    "type": d["contentType"],
                    "href": f"{prefix}/items/{d['key']}/file/view",
                    "title": d["filename"],
                    "length": len(self.files[d["key"]]),
                }
        elif d["itemType"] != "note":
            kids = [self.items[k] for k in self.children.get(d["key"], ()) if k in self.items]
            meta["numChildren"] = len(kids)
            pdf = next((c for c in kids if c.get("contentType") == "application/pdf"), None)
            if pdf:
                links["attachment"] = {
                    "href": f"{prefix}/items/{pdf['key']}",
                    "type": "application/json",
                    "attachmentType": "application/pdf",
                    "attachmentSize": len(self.files.get(pdf["key"], b"")),
                }
        return {
            "key": d["key"],
            "version": d["version"],
            "library": self._lib(),
            "links": links,
            "meta": meta,
            "data": d,
        }

    def collection_json(self, _base: str, c: dict) -> dict:
        return {
            "key": c["key"],
            "version": c["version"],
            "library": self._lib(),
            "links": {},
            "meta": {"numCollections": 0, "numItems": 0},
            "data": c,
        }


class FakeZotero:
    """The server: libraries by (kind, id), API keys, faults, counters."""

    def __init__(self) -> None:
        self.base = ""
        self.libraries: dict[tuple[str, str], FakeLibrary] = {}
        self.keys: dict[str, dict] = {}
        self.local_library: FakeLibrary | None = None  # served as users/0 under /api
        self.faults: list[Fault] = []
        self.backoff: str | None = None  # one-shot Backoff header on the next response
        self.latency_s = 0.0
        self.requests: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    # ---- setup --------------------------------------------------------------------------
    def add_user(
        self,
        user_id: int,
        api_key: str,
        username: str = "fake",
        *,
        files: bool = True,
        groups: dict[int, str] | None = None,
        write: bool = False,
    ) -> FakeLibrary:
        lib = FakeLibrary("users", user_id, username)
        self.libraries[("users", str(user_id))] = lib
        access = {"user": {"library": True, "files": files, "notes": True, "write": write}}
        if groups:
            access["groups"] = {str(g): {"library": True, "write": False} for g in groups}
            for g, name in groups.items():
                self.libraries[("groups", str(g))] = FakeLibrary("groups", g, name)
        self.keys[api_key] = {
            "key": api_key,
            "userID": user_id,
            "username": username,
            "displayName": username,
            "access": access,
        }
        return lib

    def library(self, kind: str, lid: int | str) -> FakeLibrary:
        return self.libraries[(kind, str(lid))]

    def fail(
        self,
        status: int,
        *,
        times: int = 1,
        path: str = "",
        retry_after: str | None = None,
        headers: dict | None = None,
    ) -> None:
        h = dict(headers or {})
        if retry_after is not None:
            h["Retry-After"] = retry_after
        self.faults.append(Fault(status, h, path, times))

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0

    def count(self, contains: str = "") -> int:
        return sum(1 for r in self.requests if contains in r)

    # ---- the app --------------------------------------------------------------------------
    def _headers(self, extra: dict | None = None) -> dict:
        h = {"Zotero-API-Version": "3"}
        if self.backoff:
            h["Backoff"], self.backoff = self.backoff, None
        h.update(extra or {})
        return h

    def _fault_for(self, path: str) -> Response | None:
        with self._lock:
            for f in self.faults:
                if f.path in path and f.times > 0:
                    f.times -= 1
                    if f.times == 0:
                        self.faults.remove(f)
                    return PlainTextResponse(f.body, status_code=f.status, headers=f.headers)
        return None

    def _resolve(self, req: Request) -> FakeLibrary | Response:
        local = req.url.path.startswith("/api/")
        kind, lid = req.path_params["kind"], req.path_params["lid"]
        if local:
            if self.local_library is None or (kind, lid) != ("users", "0"):
                return PlainTextResponse("Local API is not enabled", status_code=403)
            return self.local_library
        h = req.headers
        auth = h.get("authorization", "")
        key = (
            h.get("zotero-api-key") or (auth[7:] if auth.startswith("Bearer ") else None) or req.query_params.get("key")
        )
        info = self.keys.get(key or "")
        lib = self.libraries.get((kind, lid))
        if info is None or lib is None:
            return PlainTextResponse("Forbidden", status_code=403)
        if kind == "users" and str(info["userID"]) != lid:
            return PlainTextResponse("Forbidden", status_code=403)
        if kind == "groups" and lid not in info["access"].get("groups", {}):
            return PlainTextResponse("Forbidden", status_code=403)
        return lib

    def _multi(self, req: Request, lib: FakeLibrary, objs: list[dict], envelope) -> Response:
        q = req.query_params
        imsv = req.headers.get("if-modified-since-version")
        if imsv is not None and lib.version <= int(imsv):
            return Response(status_code=304, headers=self._headers({"Last-Modified-Version": str(lib.version)}))
        since = int(q.get("since", 0) or 0)
        objs = [o for o in objs if o["version"] > since]
        for param in ("itemKey", "collectionKey"):
            if param in q:
                keys = set(q[param].split(","))
                if len(keys) > 50:
                    return PlainTextResponse(f"Cannot specify more than 50 {param} values", status_code=400)
                objs = [o for o in objs if o["key"] in keys]
        objs.sort(key=lambda o: (o.get("dateModified", ""), o["key"]), reverse=True)
        hdr = {"Last-Modified-Version": str(lib.version), "Total-Results": str(len(objs))}
        fmt = q.get("format", "json")
        if fmt == "versions":
            return JSONResponse({o["key"]: o["version"] for o in objs}, headers=self._headers(hdr))
        if fmt == "keys":
            return PlainTextResponse("\n".join(o["key"] for o in objs) + "\n", headers=self._headers(hdr))
        start = int(q.get("start", 0) or 0)
        limit = min(int(q.get("limit", 25) or 25), 100)
        page = objs[start : start + limit]
        links = []
        base = str(req.url.replace(query=""))
        other = {k: v for k, v in q.items() if k not in ("start", "limit")}
        if start + limit < len(objs):
            links.append(f'<{base}?{urlencode({**other, "limit": limit, "start": start + limit})}>; rel="next"')
            last = ((len(objs) - 1) // limit) * limit
            links.append(f'<{base}?{urlencode({**other, "limit": limit, "start": last})}>; rel="last"')
        links.append('<https://www.zotero.org/fake/items>; rel="alternate"')
        hdr["Link"] = ", ".join(links)
        return JSONResponse([envelope(self._base(req), o) for o in page], headers=self._headers(hdr))

    def _base(self, req: Request) -> str:
        return self.base + ("/api" if req.url.path.startswith("/api/") else "")

    def build_app(self) -> Starlette:
        route = self._library_route
        items = route(self._items)
        routes = []
        for prefix in ("", "/api"):
            p = prefix + "/{kind:str}/{lid:str}"
            routes += [
                Route(p + "/items", items, methods=["GET", "POST"]),
                Route(p + "/items/top", items),
                Route(p + "/items/{key}", route(self._item)),
                Route(p + "/items/{key}/file", route(self._item_file)),
                Route(p + "/collections", route(self._collections), methods=["GET", "POST"]),
                Route(p + "/deleted", route(self._deleted)),
            ]
        routes += [
            Route("/keys/{k}", self._key_info),
            Route("/{kind:str}/{lid:str}/groups", route(self._user_groups)),
            Route("/s3/{kind}/{lid}/{key}/{md5}", self._s3),
        ]
        return Starlette(routes=routes)

    async def _guard(self, req: Request):
        self.requests.append(f"{req.method} {req.url.path}?{req.url.query}")
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            return self._fault_for(req.url.path)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _library_route(self, handler: Any) -> Any:
        """A library endpoint: counted and fault-injected (`guard`), then its library
        resolved (404/403 answered here) and passed in as `lib`."""

        async def route(req: Request):
            if (r := await self._guard(req)) is not None:
                return r
            lib = self._resolve(req)
            if isinstance(lib, Response):
                return lib
            return await handler(req, lib)

        return route

    async def _items(self, req: Request, lib: Any):
        if req.method == "POST":
            return fake_zotero_write.write(self, req, lib, "items", await req.body())
        with lib.lock:
            objs = list(lib.items.values())
            if req.query_params.get("includeTrashed") != "1":
                objs = [o for o in objs if not o.get("deleted")]
            if req.url.path.endswith("/top"):
                objs = [o for o in objs if not o.get("parentItem")]
            if t := req.query_params.get("itemType"):  # "a", "a || b", "-a"
                neg, names = t.startswith("-"), {x.strip() for x in t.lstrip("-").split("||")}
                objs = [o for o in objs if (o.get("itemType") in names) != neg]
            return self._multi(req, lib, objs, lib.item_json)

    async def _item(self, req: Request, lib: Any):
        d = lib.items.get(req.path_params["key"])
        if not d:
            return PlainTextResponse("Not found", status_code=404)
        return JSONResponse(
            lib.item_json(self._base(req), d), headers=self._headers({"Last-Modified-Version": str(d["version"])})
        )

    async def _item_file(self, req: Request, lib: Any):
        key = req.path_params["key"]
        d = lib.items.get(key)
        if not d or key not in lib.files:
            return PlainTextResponse("Not found", status_code=404, headers=self._headers())
        blob = lib.files[key]
        md5 = hashlib.md5(blob).hexdigest()
        where = "local/0" if req.url.path.startswith("/api/") else f"{lib.kind}/{lib.id}"
        return RedirectResponse(
            f"{self.base}/s3/{where}/{key}/{md5}?X-Amz-Expires=60",
            status_code=302,
            headers=self._headers(
                {
                    "Zotero-File-MD5": md5,
                    "Zotero-File-Size": str(len(blob)),
                    "Zotero-File-Modification-Time": str(d.get("mtime", 0)),
                    "Zotero-File-Compressed": "No",
                }
            ),
        )

    async def _s3(self, req: Request):  # the file store behind the redirect; no API key needed
        self.requests.append(f"GET {req.url.path}")
        lib = (
            self.libraries.get((req.path_params["kind"], req.path_params["lid"]))
            if req.path_params["kind"] != "local"
            else self.local_library
        )
        blob = lib.files.get(req.path_params["key"]) if lib else None
        if blob is None or hashlib.md5(blob).hexdigest() != req.path_params["md5"]:
            return PlainTextResponse("NoSuchKey", status_code=404)
        return Response(blob, media_type="application/pdf")

    async def _collections(self, req: Request, lib: Any):
        if req.method == "POST":
            return fake_zotero_write.write(self, req, lib, "collections", await req.body())
        with lib.lock:
            return self._multi(req, lib, list(lib.collections.values()), lib.collection_json)

    async def _deleted(self, req: Request, lib: Any):
        if req.url.path.startswith("/api/"):
            return PlainTextResponse("Not found", status_code=404)
        if "since" not in req.query_params:
            return PlainTextResponse("'since' parameter must be provided", status_code=400)
        since = int(req.query_params["since"])
        if since < lib.delete_floor:
            return PlainTextResponse(
                "'since' value is older than the delete log", status_code=409, headers=self._headers()
            )
        with lib.lock:
            body = {k: [key for key, v in d.items() if v > since] for k, d in lib.deleted.items()}
        return JSONResponse(body, headers=self._headers({"Last-Modified-Version": str(lib.version)}))

    async def _key_info(self, req: Request):
        if (r := await self._guard(req)) is not None:
            return r
        k = req.path_params["k"]
        if k == "current":  # the key comes in a header
            auth = req.headers.get("authorization", "")
            k = req.headers.get("zotero-api-key") or (auth[7:] if auth.startswith("Bearer ") else "")
        info = self.keys.get(k)
        if info is None:
            return PlainTextResponse("Key not found", status_code=404)
        return JSONResponse(info, headers=self._headers())

    async def _user_groups(self, req: Request, _lib: Any):
        info = next(i for i in self.keys.values() if str(i["userID"]) == req.path_params["lid"])
        out = [
            {
                "id": int(g),
                "version": 0,
                "meta": {},
                "links": {},
                "data": {"id": int(g), "name": self.libraries[("groups", g)].name},
            }
            for g in info["access"].get("groups", {})
        ]
        return JSONResponse(out, headers=self._headers({"Total-Results": str(len(out))}))

    # ---- lifecycle --------------------------------------------------------------------------
    def start(self) -> FakeZotero:
        from tests.support.procs import free_port

        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(
            self.build_app(), host="127.0.0.1", port=port, log_level="warning", lifespan="off", limit_concurrency=1000
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True, name="fake-zotero")
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise TimeoutError("fake Zotero server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self.server:
            self.server.should_exit = True
        if self.thread:
            self.thread.join(5)


def seed_recorded(lib: FakeLibrary, pdf_for: int = 6, make_pdf=None) -> dict[str, str]:
    """Load the real recorded collections and items; give the first `pdf_for` regular items
    a PDF attachment. Returns {parent item key: attachment key}."""
    from tests.support.tiny_pdf import text_pdf

    make_pdf = make_pdf or (lambda title: text_pdf(title))
    for c in recorded_collections():
        lib.put_collection(c)
    atts: dict[str, str] = {}
    for i, d in enumerate(recorded_items()):
        d = dict(d)
        d.pop("version", None)
        lib.put_item(d)
        if i < pdf_for:
            key = f"PDF{i:05d}"[:8]
            lib.add_pdf(d["key"], key, make_pdf(f"{d['title']} [{lib.kind}/{lib.id}]"))
            atts[d["key"]] = key
    return atts


def generate(lib: FakeLibrary, n_items: int, n_pdfs: int, n_collections: int = 20, pdf_pages: int = 1) -> list[str]:
    """A generated library: `n_items` regular items (round-robin over nested collections),
    the first `n_pdfs` with a small distinct PDF. Returns the attachment keys."""
    from tests.support.tiny_pdf import text_pdf

    for c in range(n_collections):
        parent = f"GC{c // 5 * 5:06d}" if c % 5 else False
        lib.put_collection({"key": f"GC{c:06d}", "name": f"Topic {c}", "parentCollection": parent, "relations": {}})
    atts = []
    for i in range(n_items):
        key = f"G{i:07d}"
        lib.put_item(
            {
                "key": key,
                "itemType": "journalArticle",
                "title": f"Generated paper {i}",
                "creators": [{"creatorType": "author", "firstName": "Author", "lastName": f"N{i}"}],
                "date": str(1990 + i % 35),
                "DOI": f"10.5555/gen.{i}",
                "abstractNote": "x" * 200,
                "collections": [f"GC{i % n_collections:06d}"],
                "tags": [],
                "relations": {},
                "dateAdded": "2025-01-01T00:00:00Z",
            }
        )
        if i < n_pdfs:
            att = f"P{i:07d}"
            lib.add_pdf(key, att, text_pdf(f"Generated paper {i}", pages=pdf_pages))
            atts.append(att)
    return atts
