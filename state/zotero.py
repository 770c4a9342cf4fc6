"""Zotero section of the Library page: connect, live sync progress, sync now, disconnect.

A substate of LibraryState so a running sync refreshes the document table as documents
arrive. The API key only passes through the connect form's submit; it is never kept in
the state (which is sent to the browser)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import reflex as rx

from bayes_app.errors import NotFound
from bayes_app.settings import get_settings
from bayes_app.usecases import zotero as app_zotero
from bayes_app.usecases.views import ZOTERO_LOCAL_LABEL
from state.library import LibraryState
from state.offloop import off_loop, run_off_loop

POLL_S = 0.8
ACTIVE = ("queued", "syncing")


def _ago(iso: str | None) -> str:
    if not iso:
        return "never"
    s = (datetime.now(UTC) - datetime.fromisoformat(iso)).total_seconds()
    if s < 60:
        return "just now"
    if s < 3600:
        return f"{int(s // 60)} min ago"
    if s < 86400:
        return f"{int(s // 3600)} h ago"
    return f"{int(s // 86400)} d ago"


def _row(v: app_zotero.ZoteroLibraryOut) -> dict:
    p, res, docs = v.progress or {}, v.last_result, v.documents
    progress = ""
    if v.status in ACTIVE and p:
        progress = (
            f"{p.get('phase', 'starting')}: items {p.get('fetched', 0)} / {p.get('to_fetch', 0)} "
            f"fetched ({p.get('items_seen', 0)} seen) · files {p.get('files_downloaded', 0)} "
            f"downloaded · {p.get('ingest_queued', 0)} queued for indexing"
        )
    result = ""
    if res:
        if res.outcome == "unchanged":
            result = "No changes."
        elif res.outcome == "synced":
            result = (
                f"{res.items_changed} items changed, {res.documents_added} added, "
                f"{res.documents_updated} updated, {res.documents_removed} removed "
                f"({res.requests} requests, {res.seconds} s)."
            )
    perms = v.permissions or {}
    return {
        "id": v.id,
        "name": v.name,
        "kind": ZOTERO_LOCAL_LABEL
        if v.api == "local"
        else ("group " if v.library_type == "group" else "user ") + v.library_id,
        "permissions": ", ".join(k for k in ("library", "files", "notes", "write") if perms.get(k)) or "none",
        "status": v.status,
        "version": str(v.version),
        "last_sync": _ago(v.last_sync_at),
        "progress": progress,
        "result": result,
        "error": v.last_error or "",
        "documents": f"{docs['indexed']} of {docs['total']} documents indexed"
        + (f", {docs['failed']} failed" if docs["failed"] else ""),
        "problem_count": str(v.problem_count),
        "problems": [{"title": str(pr.title), "message": f"{pr.message}"} for pr in v.problems[:50]],
        "active": v.status in ACTIVE,
    }


class ZoteroState(LibraryState):
    zotero_libraries: list[dict] = []
    zotero_api: str = "web"
    zotero_type: str = "user"
    zotero_error: str = ""
    zotero_connecting: bool = False
    _zotero_gen: int = 0

    @rx.var
    def zotero_group(self) -> bool:
        return self.zotero_type == "group"

    @rx.var
    def zotero_local_offered(self) -> bool:
        """The server's Zotero is offered to administrators only, and only when enabled."""
        return self.is_admin and get_settings().zotero_local

    @rx.var
    def zotero_web(self) -> bool:
        return self.zotero_api == "web"

    def _zotero_refresh(self) -> bool:
        views = app_zotero.libraries(self.user_id)
        self.zotero_libraries = [_row(v) for v in views]
        return any(r["active"] for r in self.zotero_libraries)

    @rx.event
    @off_loop
    def zotero_load(self):
        self.zotero_error = ""
        if not self._load_user():
            return None
        if self._zotero_refresh():
            return ZoteroState.zotero_start_watch
        return None

    @rx.event
    def set_zotero_api(self, value: str):
        self.zotero_api = "local" if value == ZOTERO_LOCAL_LABEL else "web"

    @rx.event
    def set_zotero_type(self, value: str):
        self.zotero_type = "group" if value.startswith("Group") else "user"

    @rx.event
    def zotero_start_watch(self):
        self._zotero_gen += 1
        return ZoteroState.zotero_watch(self._zotero_gen)  # type: ignore[misc]

    @rx.event(background=True)
    async def zotero_watch(self, gen: int):
        """Poll sync progress and the document table while a sync is queued or running, and
        then while its documents are still being indexed."""
        while True:
            await asyncio.sleep(POLL_S)
            async with self:
                if gen != self._zotero_gen or not self.user_id:
                    return
                syncing = await run_off_loop(self._zotero_refresh)
                indexing = await run_off_loop(self._refresh)
                if not syncing and not indexing:
                    return

    @rx.event
    @off_loop
    def zotero_connect(self, form: dict):
        if not self._load_user():
            return rx.redirect("/login")
        data = {
            "api": self.zotero_api,
            "library_type": self.zotero_type,
            "library_id": (form.get("library_id") or "").strip() or None,
            "api_key": (form.get("api_key") or "").strip(),
        }
        _, refused = self._as_user(app_zotero.connect, self.is_admin, data, error_var="zotero_error")
        if refused:
            return refused
        self._zotero_refresh()
        return [
            rx.set_value("zotero-api-key", ""),  # the form keeps what was typed until it connects
            ZoteroState.zotero_start_watch,
            rx.toast.success("Connected: the first sync has started."),
        ]

    @rx.event
    @off_loop
    def zotero_sync_now(self, library_id: str):
        if not self._load_user():
            return rx.redirect("/login")
        try:
            app_zotero.sync_now(self.user_id, library_id)
        except NotFound:
            return rx.toast.error("That Zotero library is no longer connected.")
        self._zotero_refresh()
        return ZoteroState.zotero_start_watch

    @rx.event
    @off_loop
    def zotero_disconnect(self, library_id: str, keep_documents: bool):
        if not self._load_user():
            return rx.redirect("/login")
        try:
            app_zotero.disconnect(self.user_id, library_id, keep_documents)
        except NotFound:
            return rx.toast.error("That Zotero library is no longer connected.")
        self._zotero_refresh()
        self._refresh()
        return rx.toast.success(
            "Disconnected" + (" (documents kept)." if keep_documents else " and its documents removed.")
        )
