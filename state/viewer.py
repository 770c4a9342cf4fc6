"""Viewer state: which document, page and quote to show."""

from __future__ import annotations

import json
import urllib.parse

import reflex as rx

from bayes_app.app import library as app_lib
from bayes_app.app import zotero as app_zotero
from bayes_app.library import documents as lib
from bayes_app.library.highlight import locate
from state.auth import AuthState


ZOOM_MIN, ZOOM_MAX, ZOOM_STEP = 0.5, 2.0, 0.25
# Back where the user came from (a map, the chat, search) when the tab has history, else the library
BACK_JS = "history.length > 1 ? history.back() : location.assign('/library')"


class ViewerState(AuthState):
    doc_id: str = ""
    title: str = ""
    page: int = 1
    num_pages: int = 0
    quote: str = ""
    missing: bool = False
    load_error: str = ""
    rects: list[dict[str, str]] = []
    quote_note: str = ""
    quote_found: bool = False
    zoom: float = 1.0  # CSS zoom of the page (the text layer and highlight boxes scale with it)
    zotero_boxes: list[dict[str, str]] = []  # the user's Zotero annotations on this page

    def _load_zotero(self) -> None:
        self.zotero_boxes = app_zotero.viewer_boxes(self.user_id, self.doc_id, self.page) if self.doc_id else []

    @rx.var
    def file_url(self) -> str:
        return f"/api/v1/documents/{self.doc_id}/file" if self.doc_id else ""

    @rx.event
    def load(self):
        self.missing, self.load_error, self.num_pages = False, "", 0
        self.rects, self.quote_note, self.quote_found, self.zotero_boxes = [], "", False, []
        if not self._load_user():
            return
        parts = [p for p in self.router.url.path.split("/") if p]
        doc_id = parts[1] if len(parts) >= 2 else ""
        params = self.router.url.query_parameters
        try:
            self.page = max(1, int(params.get("page", "1")))
        except ValueError:
            self.page = 1
        self.quote = params.get("quote", "")
        try:
            doc = app_lib.owned(self.user_id, doc_id)
            self.doc_id, self.title = doc.id, doc.title or doc.filename
            sha = doc.file_sha256
        except lib.NotFound:
            self.doc_id, self.title, self.missing = "", "", True
            return
        if self.quote.strip():
            self.page, self.rects, self.quote_note = locate(self.doc_id, sha, self.page, self.quote)
            self.quote_found = bool(self.rects)
        self._load_zotero()

    @rx.event
    def loaded(self, n: int):
        self.num_pages = n
        self.page = min(self.page, n) if n else self.page

    @rx.event
    def failed(self, message: str):
        self.load_error = f"The PDF could not be displayed: {message}"

    def _sync_url(self) -> rx.event.EventSpec:
        """Keep `?page=` (and the quote) in the address, so reload and sharing land here."""
        query = {"page": str(self.page), **({"quote": self.quote} if self.quote else {})}
        return rx.call_script(f"history.replaceState(null, '', {json.dumps('?' + urllib.parse.urlencode(query))})")

    @rx.event
    def next_page(self):
        if self.num_pages and self.page < self.num_pages:
            self.page += 1
        self._load_zotero()
        return self._sync_url()

    @rx.event
    def prev_page(self):
        if self.page > 1:
            self.page -= 1
        self._load_zotero()
        return self._sync_url()

    @rx.event
    def zoom_in(self):
        self.zoom = min(ZOOM_MAX, round(self.zoom + ZOOM_STEP, 2))

    @rx.event
    def zoom_out(self):
        self.zoom = max(ZOOM_MIN, round(self.zoom - ZOOM_STEP, 2))

    @rx.var
    def zoom_label(self) -> str:
        return f"{round(self.zoom * 100)} %"
