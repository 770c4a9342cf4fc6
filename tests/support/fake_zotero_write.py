"""The write half of the fake Zotero Web API v3, as the real server answers it
(see /work/shared/notes/zotero-write.md; zotero/dataserver `ApiController`, `API.inc.php`).

`POST <prefix>/items` and `POST <prefix>/collections`:
- the key needs write access to the library, else 403 "Write access denied";
- a JSON array of at most 50 objects (413 beyond);
- `Zotero-Write-Token` (5–32 chars): a token already used by this API key → 412; stored only
  after a successful request;
- `If-Unmodified-Since-Version: V`: the library changed after V → 412 for the whole request;
- per object: an existing `key` needs its current `version` (or the header) — stale → failed 412,
  none → failed 428; a new object under a client key needs `version: 0` (or the header), an
  object with a version > 0 that does not exist → failed 404; PATCH semantics (fields left out
  are kept); identical data → `unchanged`;
- child notes cannot be in collections (failed 400); annotations need an `annotationType` and a
  PDF attachment as parent;
- every successful object of one request gets the same new library version;
- 200 with `{"successful", "success", "unchanged", "failed"}` keyed by the string index.
"""

from __future__ import annotations

import copy
import json
import random
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

if TYPE_CHECKING:
    from tests.support.fake_zotero import FakeLibrary, FakeZotero

KEY_CHARS = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
MAX_WRITE = 50
ANNOTATION_TYPES = ("highlight", "underline", "note", "image", "ink", "text")


def new_key() -> str:
    return "".join(random.choice(KEY_CHARS) for _ in range(8))


def api_key_of(req: Request) -> str:
    auth = req.headers.get("authorization", "")
    return (
        req.headers.get("zotero-api-key")
        or (auth[7:] if auth.startswith("Bearer ") else "")
        or req.query_params.get("key", "")
    )


def can_write(fz: FakeZotero, req: Request, lib: FakeLibrary) -> bool:
    info = fz.keys.get(api_key_of(req)) or {}
    access = info.get("access", {})
    if lib.kind == "users":
        return bool(access.get("user", {}).get("write"))
    return bool(access.get("groups", {}).get(str(lib.id), {}).get("write"))


def grant_write(fz: FakeZotero, api_key: str, group: int | None = None, write: bool = True) -> None:
    """Give (or take away) a key's write access to its user library or one of its groups."""
    access = fz.keys[api_key]["access"]
    if group is None:
        access["user"]["write"] = write
    else:
        access.setdefault("groups", {})[str(group)]["write"] = write


def add_group(fz: FakeZotero, api_key: str, group_id: int, name: str, write: bool = False) -> FakeLibrary:
    """A group library the key's user belongs to."""
    from tests.support.fake_zotero import FakeLibrary

    lib = FakeLibrary("groups", group_id, name)
    fz.libraries[("groups", str(group_id))] = lib
    fz.keys[api_key]["access"].setdefault("groups", {})[str(group_id)] = {"library": True, "write": write}
    return lib


def add_annotation(
    lib: FakeLibrary,
    attachment: str,
    key: str,
    *,
    text: str = "",
    comment: str = "",
    color: str = "#ffd400",
    page_index: int = 0,
    rects: list[list[float]] | None = None,
    kind: str = "highlight",
    page_label: str | None = None,
) -> dict:
    """A Zotero 7 PDF annotation (a child item of the attachment), as the desktop client syncs it."""
    rects = rects or [[72.0, 700.0, 300.0, 712.0]]
    top = max(0, int(792 - rects[0][3]))
    return lib.put_item(
        {
            "key": key,
            "itemType": "annotation",
            "parentItem": attachment,
            "annotationType": kind,
            "annotationText": text if kind in ("highlight", "underline") else "",
            "annotationComment": comment,
            "annotationColor": color,
            "annotationPageLabel": page_label or str(page_index + 1),
            "annotationSortIndex": f"{page_index:05d}|{0:06d}|{top:05d}",
            "annotationPosition": json.dumps({"pageIndex": page_index, "rects": rects}),
            "tags": [],
            "relations": {},
            "dateAdded": "2025-01-01T00:00:00Z",
        }
    )


def _check_new(obj: dict, kind: str) -> tuple[int, str] | None:
    """Validation of a new object (code, message), None when it is fine."""
    if kind == "collections":
        return (400, "Collection name not provided") if not str(obj.get("name", "")).strip() else None
    t = obj.get("itemType")
    if not t:
        return 400, "'itemType' property not provided"
    return None


def _check_item(lib: FakeLibrary, d: dict) -> tuple[int, str] | None:
    parent = d.get("parentItem")
    if parent and parent not in lib.items:
        return 400, f"Parent item {parent} not found"
    if d.get("itemType") == "note" and parent and d.get("collections"):
        return 400, "Child items cannot be assigned to collections"
    if d.get("itemType") == "annotation":
        if d.get("annotationType") not in ANNOTATION_TYPES:
            return 400, "'annotationType' required"
        p = lib.items.get(parent or "")
        if not p or p.get("itemType") != "attachment":
            return 400, "Parent item of annotation must be a PDF, EPUB or snapshot attachment"
    for c in d.get("collections", []):
        if c not in lib.collections:
            return 409, f"Collection {c} not found"
    if d.get("itemType") == "note" and len(str(d.get("note", ""))) > 500_000:
        return 413, "Note too long"
    return None


def write(fz: FakeZotero, req: Request, lib: FakeLibrary, kind: str, raw: bytes) -> Response:
    """One multi-object write (`kind`: "items" | "collections")."""
    parsed = _parsed(fz, req, lib, kind, raw)
    if isinstance(parsed, Response):
        return parsed
    objs, token = parsed
    with lib.lock:
        used = fz.__dict__.setdefault("write_tokens", set())
        token_key = (api_key_of(req), token)
        if token is not None and token_key in used:
            return PlainTextResponse("Write token already used", status_code=412, headers=fz._headers())
        iusv = req.headers.get("if-unmodified-since-version")
        if iusv is not None and lib.version > int(iusv):
            return PlainTextResponse(
                f"Library has been modified since specified version (expected {iusv}, found {lib.version})",
                status_code=412,
                headers=fz._headers({"Last-Modified-Version": str(lib.version)}),
            )
        body: dict[str, Any] = {"successful": {}, "success": {}, "unchanged": {}, "failed": {}}
        staged = _stage_all(lib, kind, objs, iusv, body)
        if isinstance(staged, Response):
            return staged
        if staged:
            _commit(fz, lib, kind, staged, body)
        if token is not None:
            used.add(token_key)
        return JSONResponse(body, headers=fz._headers({"Last-Modified-Version": str(lib.version)}))


def _parsed(
    fz: FakeZotero, req: Request, lib: FakeLibrary, kind: str, raw: bytes
) -> Response | tuple[list, str | None]:
    """(the objects, the write token) of a write the key may make, or the response refusing it."""
    if not can_write(fz, req, lib):
        return PlainTextResponse("Write access denied", status_code=403, headers=fz._headers())
    try:
        objs = json.loads(raw or b"null")
    except ValueError:
        return PlainTextResponse("Invalid JSON", status_code=400)
    if not isinstance(objs, list) or not all(isinstance(o, dict) for o in objs):
        return PlainTextResponse("Uploaded data must be a JSON array", status_code=400)
    if len(objs) > MAX_WRITE:
        return PlainTextResponse(f"Cannot add more than {MAX_WRITE} {kind} at a time", status_code=413)
    token = req.headers.get("zotero-write-token")
    if token is not None and not 5 <= len(token) <= 32:
        return PlainTextResponse("Invalid write token", status_code=400)
    return objs, token


def _stage_all(
    lib: FakeLibrary, kind: str, objs: list[dict], iusv: str | None, body: dict[str, Any]
) -> Response | list[tuple[str, dict]]:
    """The objects to store, by their index; the unchanged and failed ones go into `body`."""
    staged: list[tuple[str, dict]] = []
    for i, obj in enumerate(objs):
        outcome = _stage(lib, kind, obj, iusv)
        if isinstance(outcome, Response):
            return outcome
        verdict, value = outcome
        if verdict == "new":
            staged.append((str(i), value))
        else:
            body[verdict][str(i)] = value
    return staged


def _stage(lib: FakeLibrary, kind: str, obj: dict, iusv: str | None) -> Response | tuple[str, Any]:
    """One object of a write: ("new", the object to store), ("unchanged", its key), ("failed",
    why), or the response refusing the whole write."""
    key = obj.get("key")
    version = obj.get("version")
    if version is not None and iusv is not None and int(version) != int(iusv):
        return PlainTextResponse("If-Unmodified-Since-Version does not match the object version", status_code=400)
    expected = version if version is not None else (int(iusv) if iusv is not None else None)
    store = lib.items if kind == "items" else lib.collections
    old = store.get(key) if key else None
    outcome = (
        _stage_changed(kind, obj, key, old, expected) if old is not None else _stage_added(kind, obj, key, expected)
    )
    if outcome[0] != "new":
        return outcome
    new = outcome[1]
    if kind == "items" and (problem := _check_item(lib, new)) is not None:
        return "failed", {"key": new["key"], "code": problem[0], "message": problem[1]}
    return outcome


def _stage_changed(kind: str, obj: dict, key: str, old: dict, expected: Any) -> tuple[str, Any]:
    """A write to an existing object: at the version it was read at."""
    if expected is None:
        return "failed", {
            "key": key,
            "code": 428,
            "message": "Either If-Unmodified-Since-"
            "Version or object version property must be provided for key-based writes",
        }
    if int(expected) != old["version"]:
        return "failed", {
            "key": key,
            "code": 412,
            "message": f"{kind[:-1].title()} has been "
            f"modified since specified version (expected {expected}, found "
            f"{old['version']})",
        }
    new = {**copy.deepcopy(old), **{k: v for k, v in obj.items() if k != "version"}}
    if new == old:
        return "unchanged", key
    return "new", new


def _stage_added(kind: str, obj: dict, key: str | None, expected: Any) -> tuple[str, Any]:
    """A new object, with the key the client chose (at version 0) or a new one."""
    if key is not None and (problem := _new_key_problem(kind, key, expected)) is not None:
        return "failed", problem
    if (problem := _check_new(obj, kind)) is not None:
        return "failed", {"key": key or "", "code": problem[0], "message": problem[1]}
    new = {k: v for k, v in obj.items() if k != "version"}
    new["key"] = key or new_key()
    if kind == "items":
        new.setdefault("tags", [])
        new.setdefault("relations", {})
        if not new.get("parentItem"):
            new.setdefault("collections", [])
        new.setdefault("dateAdded", "2025-01-01T00:00:00Z")
    else:
        new.setdefault("parentCollection", False)
        new.setdefault("relations", {})
    return "new", new


def _new_key_problem(kind: str, key: str, expected: Any) -> dict | None:
    if expected is None:
        return {
            "key": key,
            "code": 428,
            "message": "Either If-Unmodified-Since-"
            "Version or object version property must be provided for "
            "key-based writes",
        }
    if int(expected) > 0:
        return {
            "key": key,
            "code": 404,
            "message": f"{kind[:-1].title()} doesn't exist (delete?)",
        }
    if len(key) != 8 or any(c not in KEY_CHARS for c in key):
        return {"key": key, "code": 400, "message": f"'{key}' is not a valid key"}
    return None


def _commit(fz: FakeZotero, lib: FakeLibrary, kind: str, staged: list[tuple[str, dict]], body: dict[str, Any]) -> None:
    """The staged objects stored at one new library version."""
    version = lib.bump()
    for idx, new in staged:
        new["version"] = version
        new.pop("dateModified", None)
        if kind == "items":
            new["dateModified"] = f"2025-01-01T00:00:00Z#{version:08d}"
            _place_item(lib, new)
        else:
            new["parentCollection"] = new.get("parentCollection") or False
            lib.collections[new["key"]] = new
        body["successful"][idx] = (lib.item_json if kind == "items" else lib.collection_json)(fz.base, new)
        body["success"][idx] = new["key"]


def _place_item(lib: FakeLibrary, data: dict) -> None:
    old = lib.items.get(data["key"])
    if old and old.get("parentItem"):
        lib.children.get(old["parentItem"], set()).discard(data["key"])
    lib.items[data["key"]] = data
    if data.get("parentItem"):
        lib.children.setdefault(data["parentItem"], set()).add(data["key"])
    lib.deleted["items"].pop(data["key"], None)
