"""Citation-graph panels: a document's citations in the library (viewer page) and the papers
the library cites but lacks (library page)."""

from __future__ import annotations

import asyncio
from urllib.parse import quote

import reflex as rx

from bayes_app.usecases import citations as app_cit
from bayes_app.usecases.citations import LinkedPaper, MissingPaper
from state.auth import AuthState
from state.offloop import off_loop, run_off_loop


def _linked_row(p: LinkedPaper) -> dict[str, str]:
    return {
        "id": p.document_id,
        "title": p.title or "Untitled",
        "href": f"/documents/{p.document_id}",
        "meta": ", ".join(
            filter(None, [", ".join(p.authors[:2]) + (" et al." if len(p.authors) > 2 else ""), str(p.year or "")])
        ),
    }


def missing_row(p: MissingPaper) -> dict[str, str]:
    """A missing paper for display: plain strings (never markup); the DOI link is built from
    the DOI percent-encoded, so reference text cannot make another URL."""
    authors = ", ".join(p.authors[:3]) + (" et al." if len(p.authors) > 3 else "")
    return {
        "title": p.title or (p.doi or "Untitled"),
        "authors": authors,
        "year": str(p.year or ""),
        "doi": p.doi or "",
        "doi_href": ("https://doi.org/" + quote(p.doi, safe="/.")) if p.doi else "",
        "count": f"cited by {p.cited_by_count} of your papers",
    }


class CitationGraphState(AuthState):
    cites: list[dict[str, str]] = []
    cited_by: list[dict[str, str]] = []
    missing_papers: list[dict[str, str]] = []

    @rx.event
    @off_loop
    def load_document(self):
        """on_load of the viewer: the open document's citations in the library."""
        self.cites, self.cited_by = [], []
        if not self._load_user():
            return
        parts = [p for p in self.router.url.path.split("/") if p]
        try:
            view = app_cit.document_citations(self.user_id, parts[1] if len(parts) >= 2 else "")
        except app_cit.NotFound:
            return
        self.cites = [_linked_row(p) for p in view.cites]
        self.cited_by = [_linked_row(p) for p in view.cited_by]

    @rx.event(background=True)
    async def load_missing(self):
        """on_load of the library: papers cited by ≥ 2 library papers that are not in it
        (in the background: a library of thousands of papers takes a few seconds)."""
        async with self:
            self.missing_papers = []
            user_id = self.user_id if await run_off_loop(self._load_user) else ""
        if not user_id:
            return
        rows = [missing_row(p) for p in await asyncio.to_thread(app_cit.missing, user_id)]
        async with self:
            if self.user_id == user_id:
                self.missing_papers = rows
