""" "Send to Zotero": write a map into a Zotero library as notes, and keep them up to date.

    prepare(db, owner_id, map_id, library_id, child_notes) -> Outbox   (refusals raised here)
    push(outbox, clients) -> SendResult                                (the Web API writes)
    record(db, outbox, result)                                         (keys and versions kept)

The map becomes one standalone note in the collection "Bayes" (created if missing) and,
optionally, one child note on each cited item of that library. Every note gets its key when
it is first planned — a key we generate, written with `version: 0` and recorded *before* the
request — so a send that dies after Zotero stored the note never makes a copy: the next send
meets the note (412), re-reads its version and updates it. A note changed in Zotero meanwhile
(412) is re-read and written once more; a second conflict is reported, not forced. A note
deleted in Zotero is written again under a new key. A read-only key is refused before any
write. Rate limits (`Backoff`, `Retry-After`, 429) are honoured by the sync's `Policy`
transport underneath pyzotero."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from pyzotero import errors as ze
from sqlmodel import Session, select

from bayes_app.models import ZoteroLibrary, ZoteroNote, utcnow
from bayes_app.zotero import notes_html
from bayes_app.zotero.client import Clients, Target
from bayes_app.zotero.keys import decrypt_key
from bayes_app.zotero.service import ZoteroError, get_owned

BAYES_COLLECTION = "Bayes"
KEY_CHARS = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
WRITE_BATCH = 50  # Zotero takes at most 50 objects per write


def new_key() -> str:
    """A Zotero object key (8 characters of Zotero's key alphabet)."""
    return "".join(secrets.choice(KEY_CHARS) for _ in range(8))


@dataclass
class OutNote:
    parent_item_key: str  # "" = the map's standalone note
    html: str
    key: str
    version: int  # 0: never confirmed by Zotero


@dataclass
class Outbox:
    library_id: str
    map_id: str
    notes: list[OutNote]


@dataclass
class SendResult:
    written: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)  # {"key", "code", "message"}
    versions: dict[str, int] = field(default_factory=dict)  # note key → version after the write
    rekeyed: dict[str, str] = field(default_factory=dict)  # old key → new key (deleted in Zotero)
    collection_key: str | None = None


READ_ONLY = (
    "This Zotero key can only read the library, so nothing was written. On zotero.org → "
    "Settings → Security, edit the key to allow write access (for a group: write access to "
    "that group), then send again."
)


def target_of(library: ZoteroLibrary, web_api_url: str, secret: str | None = None) -> Target:
    """Where to write: the library on the Web API, with its (decrypted) key."""
    try:
        key = decrypt_key(library.api_key_encrypted or "", secret)
    except ValueError as err:
        raise ZoteroError("key_unreadable", str(err), 409) from None
    return Target("web", web_api_url, library.library_type, library.library_key, key)


def prepare(db: Session, owner_id: str, map_id: str, library_id: str, child_notes: bool) -> Outbox:
    """Render the notes and reserve their keys (recorded before anything is sent)."""
    library = get_owned(db, owner_id, library_id)
    if library.api != "web":
        raise ZoteroError(
            "unsupported", "Notes can only be sent to a library connected through the Zotero Web API.", 400
        )
    if not (library.permissions or {}).get("write"):
        raise ZoteroError("read_only", READ_ONLY, 403)
    rendered = notes_html.render(db, owner_id, map_id)
    want: dict[str, str] = {"": rendered.map_note}
    if child_notes:
        prefix = f"{library.id}:"
        want.update({k[len(prefix) :]: v for k, v in rendered.child_notes.items() if k.startswith(prefix)})
    known = {
        r.parent_item_key: r
        for r in db.exec(select(ZoteroNote).where(ZoteroNote.library_id == library.id, ZoteroNote.map_id == map_id))
    }
    notes = []
    for parent, html in want.items():
        row = known.get(parent)
        if row is None:
            row = ZoteroNote(library_id=library.id, map_id=map_id, parent_item_key=parent, note_key=new_key())
            db.add(row)
        notes.append(OutNote(parent, html, row.note_key, row.version))
    db.flush()
    return Outbox(library.id, map_id, notes)


def _payload(n: OutNote, collection_key: str | None, *, key: str | None = None, version: int | None = None) -> dict:
    key, version = key or n.key, n.version if version is None else version
    obj: dict = {"key": key, "version": version, "itemType": "note", "note": n.html}
    if version == 0:  # a new note: where it lives (later sends leave where the user put it)
        if n.parent_item_key:
            obj["parentItem"] = n.parent_item_key
        else:
            obj["collections"] = [collection_key] if collection_key else []
    return obj


def _bayes_collection(z) -> str:
    """The key of the top-level collection "Bayes", created if missing."""
    for c in z.everything(z.collections(limit=100)):
        d = c.get("data", {})
        if d.get("name") == BAYES_COLLECTION and not d.get("parentCollection") and not d.get("deleted"):
            return c["key"]
    made = z.create_collections([{"name": BAYES_COLLECTION}])
    ok = made.get("successful") or {}
    if "0" not in ok:
        failed = (made.get("failed") or {}).get("0", {})
        raise ZoteroError(
            "zotero_failed",
            f"Zotero did not create the collection “{BAYES_COLLECTION}”: {failed.get('message', 'no reason given')}.",
            502,
        )
    return ok["0"]["key"]


def _post(z, objs: list[dict]) -> dict:
    body = z.create_items(objs)
    return body if isinstance(body, dict) else {}


def push(outbox: Outbox, clients: Clients) -> SendResult:
    """Write the outbox; raises ZoteroError("read_only") when Zotero refuses the key before any
    note was written. Other failures are reported per note in the result."""
    z = clients.get()
    res = SendResult()
    try:
        res.collection_key = _bayes_collection(z)
    except ze.UserNotAuthorisedError:
        raise ZoteroError("read_only", READ_ONLY, 403) from None
    retry: list[tuple[OutNote, dict]] = []
    for i in range(0, len(outbox.notes), WRITE_BATCH):
        batch = outbox.notes[i : i + WRITE_BATCH]
        try:
            body = _post(z, [_payload(n, res.collection_key) for n in batch])
        except ze.UserNotAuthorisedError:
            if not (res.written or res.updated or res.unchanged):
                raise ZoteroError("read_only", READ_ONLY, 403) from None
            res.failed += [{"key": n.key, "code": 403, "message": "Write access denied"} for n in batch]
            continue
        except ze.PyZoteroError as err:
            res.failed += [
                {"key": n.key, "code": 0, "message": f"Zotero refused the write ({type(err).__name__})"} for n in batch
            ]
            continue
        retry += _classify(batch, body, res)
    if retry:
        _retry(z, retry, res)
    return res


def _classify(batch: list[OutNote], body: dict, res: SendResult) -> list[tuple[OutNote, dict]]:
    """Sort one response into the result; returns the notes worth one more try (412, 404)."""
    again = []
    ok, same, bad = body.get("successful") or {}, body.get("unchanged") or {}, body.get("failed") or {}
    for idx, n in enumerate(batch):
        s = str(idx)
        if s in ok:
            res.versions[n.key] = int(ok[s].get("version", 0))
            (res.updated if n.version else res.written).append(n.key)
        elif s in same:
            res.versions[n.key] = n.version
            res.unchanged.append(n.key)
        elif s in bad and int(bad[s].get("code", 0)) in (412, 404):
            again.append((n, bad[s]))
        else:
            f = bad.get(s) or {"code": 0, "message": "Zotero gave no answer for this note"}
            res.failed.append({"key": n.key, "code": int(f.get("code", 0)), "message": str(f.get("message", ""))})
    return again


def _retry(z, todo: list[tuple[OutNote, dict]], res: SendResult) -> None:
    """One more try: a 412 re-reads the note's current version; a 404 (deleted in Zotero, or
    never written) writes it anew under a fresh key."""
    objs, notes = [], []
    for n, fail in todo:
        if int(fail.get("code", 0)) == 404:
            fresh = new_key()
            res.rekeyed[n.key] = fresh
            objs.append(_payload(n, res.collection_key, key=fresh, version=0))
            notes.append((n, fresh, True))
            continue
        try:
            current = z.item(n.key)
        except ze.ResourceNotFoundError:
            fresh = new_key()
            res.rekeyed[n.key] = fresh
            objs.append(_payload(n, res.collection_key, key=fresh, version=0))
            notes.append((n, fresh, True))
            continue
        except ze.PyZoteroError as err:
            res.failed.append(
                {"key": n.key, "code": 412, "message": f"Could not re-read the note ({type(err).__name__})"}
            )
            continue
        v = int(current.get("version") or current.get("data", {}).get("version", 0))
        objs.append(_payload(n, res.collection_key, version=v))
        notes.append((n, n.key, False))
    if not objs:
        return
    try:
        body = _post(z, objs)
    except ze.PyZoteroError as err:
        res.failed += [
            {"key": k, "code": 0, "message": f"Zotero refused the write ({type(err).__name__})"} for _, k, _ in notes
        ]
        return
    ok, same, bad = body.get("successful") or {}, body.get("unchanged") or {}, body.get("failed") or {}
    for idx, (_n, key, is_new) in enumerate(notes):
        s = str(idx)
        if s in ok:
            res.versions[key] = int(ok[s].get("version", 0))
            (res.written if is_new else res.updated).append(key)
        elif s in same:
            res.versions[key] = int(objs[idx]["version"])
            res.unchanged.append(key)
        else:
            f = bad.get(s) or {}
            code = int(f.get("code", 0))
            msg = (
                ("The note was changed in Zotero at the same time; it was left as it is. Send again to overwrite it.")
                if code == 412
                else str(f.get("message", "Zotero gave no answer"))
            )
            res.failed.append({"key": key, "code": code, "message": msg})


def record(db: Session, outbox: Outbox, res: SendResult) -> None:
    """Keep each note's key and version for the next send."""
    rows = {
        r.note_key: r
        for r in db.exec(
            select(ZoteroNote).where(ZoteroNote.library_id == outbox.library_id, ZoteroNote.map_id == outbox.map_id)
        )
    }
    for old, new in res.rekeyed.items():
        if old in rows and new in res.versions:
            rows[old].note_key, rows[old].version = new, 0
            rows[new] = rows.pop(old)
    for key, version in res.versions.items():
        row = rows.get(key)
        if row is not None:
            row.version, row.updated_at = version, utcnow()
            db.add(row)
    db.flush()
