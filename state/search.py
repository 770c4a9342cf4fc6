"""Search page state: hybrid search over the signed-in user's library."""

from __future__ import annotations

from urllib.parse import quote as urlquote

import reflex as rx

from bayes_app.usecases import library as app_lib
from bayes_app.usecases.views import all_weak, best_quote, emphasis_segments
from state.auth import AuthState
from state.offloop import off_loop


class SearchState(AuthState):
    query: str = ""
    collection_id: str = ""
    document_id: str = ""
    results: list[dict] = []
    collections: list[dict[str, str]] = []
    documents: list[dict[str, str]] = []
    searched: bool = False
    weak: bool = False  # results, but none clears the relevance floor
    error: str = ""

    @rx.event
    @off_loop
    def load(self):
        if not self._load_user():
            return None
        self.collections = [{"id": c.id, "name": c.name} for c in app_lib.collections(self.user_id)]
        self.documents = [
            {"id": d.id, "title": d.title[:80]} for d in app_lib.documents(self.user_id) if d.status == "indexed"
        ]
        q = self.router.url.query_parameters.get("q", "")
        if q:
            self.query = q
            return SearchState.run_search
        return None

    @rx.event
    def set_query(self, value: str):
        self.query = value

    @rx.event
    def set_collection(self, value: str):
        self.collection_id = "" if value == "all" else value

    @rx.event
    def set_document(self, value: str):
        self.document_id = "" if value == "all" else value

    @rx.event
    def submit(self, form: dict):
        self.query = form.get("q", self.query)
        return SearchState.run_search

    @rx.event
    @off_loop
    def run_search(self):
        self.error = ""
        if not self._load_user():
            return rx.redirect("/login")
        if not self.query.strip():
            self.results, self.searched = [], False
            return None
        try:
            hits = app_lib.search(
                self.user_id,
                self.query,
                10,
                [self.document_id] if self.document_id else None,
                [self.collection_id] if self.collection_id else None,
            )
        except Exception as err:  # noqa: BLE001 - show the user, keep the page alive
            self.error = f"Search is unavailable right now ({type(err).__name__})."
            self.results, self.weak = [], False
            return None
        self.searched = True
        self.weak = all_weak(hits)
        self.results = [
            {
                "chunk_id": h.chunk_id,
                "document_id": h.document_id,
                "title": h.title,
                "authors": ", ".join(h.authors[:3]) + (" et al." if len(h.authors) > 3 else ""),
                "year": str(h.year or ""),
                "page": str(h.page),
                "score": f"{h.score:.3f}",
                "segments": emphasis_segments(h.text, self.query),
                "role_label": h.role_label,
                "section": h.section,
                "weak": "1" if h.weak else "",
                "href": f"/documents/{h.document_id}?page={h.page}&quote="
                + urlquote(best_quote(h.text, self.query) or h.text[:200]),
            }
            for h in hits
        ]
        return None
