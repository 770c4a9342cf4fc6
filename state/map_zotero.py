"""The map's Zotero actions: "Send to Zotero" (notes) and "Add my Zotero highlights"."""

from __future__ import annotations

import asyncio

import reflex as rx

from bayes_app.errors import DomainError
from bayes_app.usecases import zotero as app_zotero
from state.mindmap import MapState
from state.offloop import off_loop


class MapZoteroState(MapState):
    """A substate of the map editor (it reads the map id and reloads the map)."""

    z_libraries: list[dict[str, str]] = []  # web libraries: id, name
    z_library_id: str = ""
    z_child_notes: bool = True
    z_message: str = ""
    z_error: str = ""
    z_busy: bool = False

    @rx.event
    @off_loop
    def z_open(self):
        """Opening the menu: the user's Web API libraries (writing needs the Web API)."""
        self.z_message = self.z_error = ""
        libs = [x for x in app_zotero.libraries(self.user_id) if x.api == "web"]
        self.z_libraries = [{"id": x.id, "name": x.name} for x in libs]
        if self.z_library_id not in {x.id for x in libs}:
            self.z_library_id = libs[0].id if libs else ""

    @rx.event
    def z_set_library(self, value: str):
        self.z_library_id = value

    @rx.event
    def z_set_child_notes(self, value: bool):
        self.z_child_notes = bool(value)

    @rx.event(background=True)
    async def z_send(self):
        """The writes run off the event loop (pyzotero blocks, and rate limits are waited out)."""
        async with self:
            self.z_message = self.z_error = ""
            if not self.z_library_id:
                self.z_error = "Connect a Zotero library (Library page) to send maps to it."
                return
            if self.z_busy:
                return
            self.z_busy = True
            args = (self.user_id, self.map_id, {"library_id": self.z_library_id, "child_notes": self.z_child_notes})
        try:
            out = await asyncio.to_thread(app_zotero.send_map, *args)
        except DomainError as err:
            async with self:
                self.z_error, self.z_busy = err.message, False
            return
        counts = {"written": out.written, "updated": out.updated, "unchanged": out.unchanged}
        parts = [f"{len(keys)} {k}" for k, keys in counts.items() if keys]
        async with self:
            self.z_busy = False
            done = ", ".join(parts) or "nothing to write"
            self.z_message = f"Sent to Zotero (collection “Bayes”): {done}."
            if out.failed:
                self.z_error = f"{len(out.failed)} note(s) not written: " + "; ".join(f.message for f in out.failed[:3])

    @rx.event
    @off_loop
    def z_add_highlights(self):
        self.z_message = self.z_error = ""
        out, refused = self._as_user(app_zotero.add_highlights, self.map_id, {}, error_var="z_error")
        if refused:
            return refused
        assert out is not None
        if not out.added:
            self.z_message = (
                "No new highlights: none of your Zotero PDFs has text highlights that are not on this map yet."
            )
            return None
        self.z_message = f"Added {out.added} highlight(s) as claims."
        self._reload()
        return None
