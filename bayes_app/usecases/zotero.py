"""Zotero use cases: connect, sync now, disconnect, send a map to Zotero. The database is written first, then the
sync (or the purge of removed documents) is handed to the queue.

Refusals are the domain's (`ZoteroError`, `documents.NotFound`)."""

from __future__ import annotations

from typing import Any

import httpx2

from bayes_app.db import session_scope
from bayes_app.models import Document
from bayes_app.settings import get_settings
from bayes_app.usecases import queue
from bayes_app.zotero import annotations as zann
from bayes_app.zotero import highlights_map, notes_out
from bayes_app.zotero import service as zs
from bayes_app.zotero.client import Clients
from bayes_app.zotero.http import Policy, RateLimited

__all__ = ["ZoteroLibraryOut"]  # for the front doors: what a library view is
from bayes_app.usecases.schemas.library import SearchHit
from bayes_app.usecases.schemas.zotero import (
    Annotation,
    HighlightsAdded,
    ZoteroLibraryOut,
    ZoteroSendFailure,
    ZoteroSendResult,
)


def connect(user_id: str, is_admin: bool, data: dict[str, Any]) -> ZoteroLibraryOut:
    """Connect a Zotero library (web API key or, for admins where enabled, the local API) and
    queue its first sync. Returns the library's view."""
    settings = get_settings()
    req = zs.ConnectRequest.parse(data)
    zs.check_local_allowed(req, is_admin=is_admin, enabled=settings.zotero_local, local_url=settings.zotero_local_url)
    with session_scope() as db:
        library_id = zs.connect(db, user_id, req, web_api_url=settings.zotero_api_url).id
    queue.get().sync_zotero(library_id)
    return library(user_id, library_id)


def libraries(user_id: str) -> list[ZoteroLibraryOut]:
    """The user's connected libraries with their sync state."""
    with session_scope() as db:
        return [ZoteroLibraryOut.model_validate(v) for v in zs.list_libraries(db, user_id)]


def library(user_id: str, library_id: str, with_problems: bool = True) -> ZoteroLibraryOut:
    """One of the user's libraries with its sync state (and the items that could not be brought in)."""
    with session_scope() as db:
        return ZoteroLibraryOut.model_validate(zs.view(db, zs.get_owned(db, user_id, library_id), with_problems))


def sync_now(user_id: str, library_id: str) -> ZoteroLibraryOut:
    """Mark the library for a sync and queue it."""
    with session_scope() as db:
        zs.request_sync(db, user_id, library_id)
    queue.get().sync_zotero(library_id)
    return library(user_id, library_id, with_problems=False)


def disconnect(user_id: str, library_id: str, keep_documents: bool) -> None:
    """Forget the library; unless its documents are kept, delete them and queue their purge."""
    with session_scope() as db:
        purges = zs.disconnect(db, user_id, library_id, keep_documents)
    for document_id, sha in purges:
        queue.get().purge(document_id, sha)


def send_map(user_id: str, map_id: str, data: dict[str, Any]) -> ZoteroSendResult:
    """ "Send to Zotero": write the map as notes into one of the user's libraries (keys reserved
    and committed first, then the writes, then the versions Zotero gave them). Returns
    what was written, updated, left unchanged or failed."""
    settings = get_settings()
    library_id = str(data.get("library_id") or "").strip()
    if not library_id:
        raise zs.ZoteroError("missing_fields", "Choose the Zotero library to send the map to (library_id).")
    child_notes = bool(data.get("child_notes", False))
    with session_scope() as db:
        outbox = notes_out.prepare(db, user_id, map_id, library_id, child_notes)
        target = notes_out.target_of(zs.get_owned(db, user_id, library_id), settings.zotero_api_url)
    clients = Clients(target, Policy(max_wait_s=settings.zotero_max_wait_s))
    try:
        result = notes_out.push(outbox, clients)
    except RateLimited as err:
        raise zs.ZoteroError(
            "rate_limited",
            f"{err} Nothing is lost: send again later and the notes already written are updated, not copied.",
            503,
        ) from None
    except httpx2.TransportError:
        raise zs.ZoteroError(
            "unreachable", "Cannot reach Zotero; send again later (notes already written are updated, not copied).", 502
        ) from None
    finally:
        clients.close()
    with session_scope() as db:
        notes_out.record(db, outbox, result)
    return ZoteroSendResult(
        written=result.written,
        updated=result.updated,
        unchanged=result.unchanged,
        failed=[ZoteroSendFailure.model_validate(f) for f in result.failed],
        collection_key=result.collection_key,
    )


def document_annotations(user_id: str, document_id: str) -> list[Annotation]:
    """A document's synced Zotero annotations (type, text, comment, colour, page, rectangles)."""
    with session_scope() as db:
        return zann.for_document(db, user_id, document_id)


def add_highlights(user_id: str, map_id: str, data: dict[str, Any]) -> HighlightsAdded:
    """ "Add my Zotero highlights": one cited claim per highlight (one undoable edit)."""
    ids = data.get("document_ids")
    with session_scope() as db:
        added = highlights_map.add_highlights(db, user_id, map_id, list(ids) if ids is not None else None)
    return HighlightsAdded.model_validate(added)


def search_highlights(
    user_id: str, query: str, k: int, document_ids: list[str] | None = None, collection_ids: list[str] | None = None
) -> list[SearchHit]:
    """Search filtered to "my highlights": passages the user highlighted in Zotero, best first,
    each with its highlight (page rectangles, colour)."""
    from bayes_app.library import documents as lib
    from bayes_app.search import runtime

    with session_scope() as db:
        for d in document_ids or []:
            lib.get_owned(db, user_id, d)
        for c in collection_ids or []:
            lib.get_collection(db, user_id, c)
        marked = {d.id for d, _ in zann.highlights(db, user_id, document_ids)}
        if not marked:
            return []
        hits = runtime.search_library(db, user_id, query, max(k, 1) * 4, sorted(marked), collection_ids)
        found = zann.prefer_highlighted(db, [h.model_dump() for h in hits])
    return [SearchHit.model_validate(h) for h in found if h["highlighted"]][:k]


def viewer_boxes(user_id: str, document_id: str, page: int) -> list[dict[str, str]]:
    """The boxes of the user's Zotero annotations on one page of a document, for the viewer."""
    from bayes_app.zotero import viewer_boxes as vb

    with session_scope() as db:
        anns = [a for a in zann.for_document(db, user_id, document_id) if a.page == page and a.rects]
        doc = db.get(Document, document_id) if anns else None
        sha = doc.file_sha256 if doc is not None else None
    if not anns or not sha:
        return []
    box = vb.page_box(sha, page)
    return vb.css_boxes(anns, page, box) if box else []
