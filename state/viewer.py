"""Viewer state: which document, page and quote to show."""

from __future__ import annotations

import json
import urllib.parse

import reflex as rx
from reflex.event import EventSpec

from bayes_app.errors import NotFound
from bayes_app.usecases import library as app_lib
from bayes_app.usecases import zotero as app_zotero
from state.auth import AuthState
from state.offloop import off_loop

ZOOM_MIN, ZOOM_MAX, ZOOM_STEP = 0.5, 3.0, 0.25
PAGE_MAX_WIDTH = 860  # px of the page at 100 % on a wide screen; narrower screens fit the page to their width
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
    hits: dict[str, list[dict[str, str]]] = {}  # page number -> the quote's boxes on it
    quote_note: str = ""
    quote_found: bool = False
    zoom: float = 1.0  # times the fitted width; pdf.js renders the page at that width
    view_width: int = 0  # the viewer box's inner width, measured in the browser (0: not yet)
    zotero_boxes: list[dict[str, str]] = []  # the user's Zotero annotations on this page

    def _load_zotero(self) -> None:
        self.zotero_boxes = app_zotero.viewer_boxes(self.user_id, self.doc_id, self.page) if self.doc_id else []

    @rx.var
    def file_url(self) -> str:
        return f"/api/v1/documents/{self.doc_id}/file" if self.doc_id else ""

    @rx.event
    @off_loop
    def load(self):
        self.missing, self.load_error, self.num_pages = False, "", 0
        self.hits, self.quote_note, self.quote_found, self.zotero_boxes = {}, "", False, []
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
            doc = app_lib.readable(self.user_id, doc_id)  # own, cited by a shared map, or shared
            self.doc_id, self.title = doc.id, doc.title or doc.filename
        except NotFound:
            self.doc_id, self.title, self.missing = "", "", True
            return
        if self.quote.strip():
            self.page, hits, self.quote_note = app_lib.highlight(self.user_id, self.doc_id, self.page, self.quote)
            self.hits = {str(p): boxes for p, boxes in hits.items()}
            self.quote_found = any(self.hits.values())
        self._load_zotero()

    @rx.event
    def loaded(self, n: int):
        self.num_pages = n
        self.page = min(self.page, n) if n else self.page

    @rx.event
    def failed(self, message: str):
        self.load_error = f"The PDF could not be displayed: {message}"

    def _sync_url(self) -> EventSpec:
        """Keep `?page=` (and the quote) in the address, so reload and sharing land here."""
        query = {"page": str(self.page), **({"quote": self.quote} if self.quote else {})}
        return rx.call_script(f"history.replaceState(null, '', {json.dumps('?' + urllib.parse.urlencode(query))})")

    @rx.event
    @off_loop
    def next_page(self):
        if self.num_pages and self.page < self.num_pages:
            self.page += 1
        self._load_zotero()
        return self._sync_url()

    @rx.event
    @off_loop
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

    @rx.event
    def pinch_zoom(self, ratio: float):
        """A pinch on a touch screen: the zoom times the fingers' ratio, in 5 % steps."""
        if isinstance(ratio, int | float) and ratio > 0:
            self.zoom = min(ZOOM_MAX, max(ZOOM_MIN, round(round(self.zoom * ratio / 0.05) * 0.05, 2)))

    @rx.event
    def set_view_width(self, width: float | None):
        """The viewer box's width, measured by the browser when the box is mounted."""
        if isinstance(width, int | float) and width > 0:
            self.view_width = int(width)

    @rx.var
    def rects(self) -> list[dict[str, str]]:
        """The quote's boxes on the page shown (CSS percentages of the page)."""
        return self.hits.get(str(self.page), [])

    @rx.var
    def page_width(self) -> int:
        """Rendered page width in CSS px: fitted to the box (at most 860 px), times the zoom."""
        return max(120, round(min(PAGE_MAX_WIDTH, self.view_width or PAGE_MAX_WIDTH) * self.zoom))

    @rx.var
    def zoom_label(self) -> str:
        return f"{round(self.zoom * 100)} %"
