"""Connected Zotero libraries of one owner: connect, list, request a sync, disconnect.

Like the library module, every function takes the owner's id and treats another owner's
library as missing, so nobody can read or touch someone else's connection by id. The API
key is validated against Zotero, stored encrypted, and never returned.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import httpx2
from sqlalchemy import func
from sqlmodel import Session, col, select

from bayes_app.errors import DomainError
from bayes_app.library import documents as lib
from bayes_app.models import (
    DocStatus,
    Document,
    SyncStatus,
    ZoteroCollection,
    ZoteroItem,
    ZoteroLibrary,
    utcnow,
)
from bayes_app.zotero.client import ZoteroAccessError, key_info
from bayes_app.zotero.keys import encrypt_key

MAX_PROBLEMS_SHOWN = 200


class ZoteroError(DomainError):
    """A Zotero request that cannot be done (bad key, library not reachable …)."""


@dataclass
class ConnectRequest:
    api: str = "web"  # "web" | "local"
    library_type: str = "user"  # "user" | "group"
    library_id: str | None = None  # the Zotero user/group id (user: defaults to the key's)
    api_key: str | None = None

    @classmethod
    def parse(cls, data: dict) -> ConnectRequest:
        api = str(data.get("api") or "web").strip().lower()
        if api not in ("web", "local"):
            raise ZoteroError("invalid", "api must be 'web' or 'local'.")
        ltype = str(data.get("library_type") or "user").strip().lower()
        if ltype not in ("user", "group"):
            raise ZoteroError("invalid", "library_type must be 'user' or 'group'.")
        lid = data.get("library_id")
        lid = str(lid).strip() if lid not in (None, "") else None
        if lid is not None and not lid.isdigit():
            raise ZoteroError("invalid", "library_id must be the numeric Zotero user or group id.")
        key = str(data.get("api_key") or "").strip() or None
        if api == "web":
            if not key:
                raise ZoteroError(
                    "missing_fields",
                    "An API key is required (zotero.org → Settings → Security → Create new private key).",
                )
            if not key.isalnum() or len(key) > 64:
                raise ZoteroError("invalid", "That does not look like a Zotero API key.")
            if ltype == "group" and lid is None:
                raise ZoteroError("missing_fields", "A group library needs its group id.")
        else:
            ltype, lid, key = "user", "0", None
        return cls(api, ltype, lid, key)


def permissions_of(info: dict, library_type: str, library_id: str) -> dict:
    """The key's permissions on one library, from `/keys/<key>`."""
    access = info.get("access") or {}
    if library_type == "user":
        u = access.get("user") or {}
        return {
            "library": bool(u.get("library")),
            "files": bool(u.get("files")),
            "notes": bool(u.get("notes")),
            "write": bool(u.get("write")),
        }
    groups = access.get("groups") or {}
    g = groups.get(str(library_id)) or groups.get("all") or {}
    return {
        "library": bool(g.get("library")),
        "files": bool(g.get("library")),
        "notes": bool(g.get("library")),
        "write": bool(g.get("write")),
    }


LOCAL_LABEL = "Zotero on the server"


def check_local_allowed(
    req: ConnectRequest, *, is_admin: bool, enabled: bool, local_url: str, transport: httpx2.BaseTransport | None = None
) -> None:
    """Zotero's local API reads whatever Zotero runs on the *server*: only an administrator may
    connect it, only when BAYES_ZOTERO_LOCAL=1, and only once it answers. Raises ZoteroError."""
    if req.api != "local":
        return
    if not enabled:
        raise ZoteroError(
            "local_disabled",
            "Connecting the server's own Zotero is switched off "
            "(an administrator can enable it with BAYES_ZOTERO_LOCAL=1).",
            403,
        )
    if not is_admin:
        raise ZoteroError("forbidden", "Only administrators can connect the server's own Zotero.", 403)
    try:
        with httpx2.Client(transport=transport, timeout=3.0) as client:
            r = client.get(f"{local_url}/users/0/items", params={"limit": 1})
    except httpx2.HTTPError:
        raise ZoteroError(
            "unreachable",
            f"The server's Zotero does not answer at {local_url}: start "
            "Zotero 7 on the server and enable its local API (Settings → Advanced).",
            502,
        ) from None
    if r.status_code >= 400:
        raise ZoteroError(
            "unreachable",
            f"The server's Zotero answered {r.status_code} at {local_url}: enable its local API (Settings → Advanced).",
            502,
        )


def connect(
    db: Session,
    owner_id: str,
    req: ConnectRequest,
    *,
    web_api_url: str,
    transport: httpx2.BaseTransport | None = None,
    group_name: Callable[[str], str] | None = None,
) -> ZoteroLibrary:
    """Validate and store a new connection (not yet synced). Raises ZoteroError."""
    name, perms, enc = LOCAL_LABEL, {"library": True, "files": True, "notes": True, "write": False}, None
    lid = req.library_id or "0"
    if req.api == "web":
        try:
            info = key_info(web_api_url, req.api_key or "", transport=transport)
        except ZoteroAccessError as err:
            raise ZoteroError(err.code, err.message, 400 if err.code == "invalid_key" else 502) from None
        if req.library_type == "user":
            if req.library_id and req.library_id != str(info["userID"]):
                raise ZoteroError(
                    "forbidden", f"This key belongs to Zotero user {info['userID']}, not {req.library_id}.", 403
                )
            lid = str(info["userID"])
            name = f"{info.get('username') or 'Zotero'} (my library)"
        else:
            name = f"Group {lid}"
            if group_name:
                name = group_name(lid) or name
        perms = permissions_of(info, req.library_type, lid)
        if not perms["library"]:
            raise ZoteroError(
                "forbidden",
                "This key has no read access to that library. Edit the key on zotero.org to allow reading it.",
                403,
            )
        enc = encrypt_key(req.api_key or "")
    existing = db.exec(
        select(ZoteroLibrary).where(
            ZoteroLibrary.owner_id == owner_id,
            ZoteroLibrary.api == req.api,
            ZoteroLibrary.library_type == req.library_type,
            ZoteroLibrary.library_key == lid,
        )
    ).first()
    if existing is not None:
        raise ZoteroError("duplicate", "This Zotero library is already connected.", 409)
    row = ZoteroLibrary(
        owner_id=owner_id,
        api=req.api,
        library_type=req.library_type,
        library_key=lid,
        name=name[:300],
        api_key_encrypted=enc,
        permissions=perms,
        status=SyncStatus.QUEUED,
    )
    db.add(row)
    db.flush()
    return row


def get_owned(db: Session, owner_id: str, library_id: str) -> ZoteroLibrary:
    row = db.get(ZoteroLibrary, library_id)
    if row is None or row.owner_id != owner_id:
        raise lib.NotFound("Zotero library")
    return row


def _doc_counts(db: Session, library_id: str) -> dict:
    rows = db.exec(
        select(Document.status, func.count()).where(Document.zotero_library_id == library_id).group_by(Document.status)
    ).all()
    by = dict(rows)
    return {
        "total": sum(by.values()),
        "indexed": by.get(DocStatus.INDEXED, 0),
        "failed": by.get(DocStatus.FAILED, 0),
        "in_progress": sum(by.get(s, 0) for s in DocStatus.ACTIVE),
    }


def problems(db: Session, library_id: str, limit: int = MAX_PROBLEMS_SHOWN) -> list[dict]:
    """Items whose PDF could not be brought in, with the reason (title from the parent)."""
    rows = list(
        db.exec(
            select(ZoteroItem)
            .where(ZoteroItem.library_id == library_id, col(ZoteroItem.problem_code).is_not(None))
            .order_by(ZoteroItem.key)
            .limit(limit)
        )
    )
    parents = (
        {
            r.key: r
            for r in db.exec(
                select(ZoteroItem).where(
                    ZoteroItem.library_id == library_id,
                    col(ZoteroItem.key).in_([r.parent_key for r in rows if r.parent_key]),
                )
            )
        }
        if rows
        else {}
    )
    out = []
    for r in rows:
        p = parents.get(r.parent_key or "")
        out.append(
            {
                "item_key": r.parent_key or r.key,
                "attachment_key": r.key,
                "title": (p.data.get("title") if p else None) or r.data.get("title") or r.data.get("filename") or r.key,
                "filename": r.data.get("filename"),
                "code": r.problem_code,
                "message": r.problem_message,
            }
        )
    return out


def view(db: Session, row: ZoteroLibrary, with_problems: bool = True) -> dict:
    n_problems = db.exec(
        select(func.count())
        .select_from(ZoteroItem)
        .where(ZoteroItem.library_id == row.id, col(ZoteroItem.problem_code).is_not(None))
    ).one()
    n_items = db.exec(select(func.count()).select_from(ZoteroItem).where(ZoteroItem.library_id == row.id)).one()
    n_cols = db.exec(
        select(func.count()).select_from(ZoteroCollection).where(ZoteroCollection.library_id == row.id)
    ).one()
    out = {
        "id": row.id,
        "api": row.api,
        "library_type": row.library_type,
        "library_id": row.library_key,
        "name": row.name,
        "permissions": row.permissions,
        "status": row.status,
        "version": row.version,
        "last_sync_at": row.last_sync_at.isoformat() if row.last_sync_at else None,
        "last_result": row.last_result or None,
        "last_error": row.last_error,
        "progress": row.progress or {},
        "items": n_items,
        "collections": n_cols,
        "documents": _doc_counts(db, row.id),
        "problem_count": n_problems,
        "created_at": row.created_at.isoformat(),
    }
    if with_problems:
        out["problems"] = problems(db, row.id)
    return out


def list_libraries(db: Session, owner_id: str) -> list[dict]:
    rows = db.exec(
        select(ZoteroLibrary).where(ZoteroLibrary.owner_id == owner_id).order_by(col(ZoteroLibrary.created_at))
    )
    return [view(db, r) for r in rows]


def request_sync(db: Session, owner_id: str, library_id: str) -> ZoteroLibrary:
    row = get_owned(db, owner_id, library_id)
    if row.status != SyncStatus.SYNCING:
        row.status = SyncStatus.QUEUED
        db.add(row)
    return row


def due_for_sync(db: Session, every_minutes: float) -> list[str]:
    """Libraries to sync now: last synced longer ago than the interval, or interrupted (status
    syncing but the lease expired: the worker died, or the broker lost the message)."""
    if every_minutes <= 0:
        return []
    now = utcnow().timestamp()
    cutoff = now - every_minutes * 60
    due = []
    for r in db.exec(select(ZoteroLibrary)):
        if r.status == SyncStatus.SYNCING:
            if r.lease_until is None or r.lease_until.timestamp() < now:
                due.append(r.id)
        elif r.last_sync_at is None or r.last_sync_at.timestamp() < cutoff:
            due.append(r.id)
    return due


def disconnect(db: Session, owner_id: str, library_id: str, keep_documents: bool) -> list[tuple[str, str | None]]:
    """Remove a connection. Its documents are kept (as ordinary documents) or removed.
    Returns (document id, file sha to remove or None) for each removed document."""
    row = get_owned(db, owner_id, library_id)
    purges: list[tuple[str, str | None]] = []
    docs = list(db.exec(select(Document).where(Document.zotero_library_id == row.id)))
    for doc in docs:
        if keep_documents:
            doc.zotero_library_id = None
            db.add(doc)
        else:
            sha, used = lib.delete_document(db, owner_id, doc.id, reason="source_removed")
            purges.append((doc.id, None if used else sha))
    if not keep_documents:
        for zc in db.exec(
            select(ZoteroCollection).where(
                ZoteroCollection.library_id == row.id, ZoteroCollection.created_collection == True
            )
        ):
            if zc.collection_id is None:
                continue  # its collection is gone already
            with contextlib.suppress(lib.NotFound):
                lib.delete_collection(db, owner_id, zc.collection_id)
    db.flush()
    db.delete(row)
    return purges
