"""Resolve a draft's references to library documents: Zotero item key, then DOI, then title
(exact, else fuzzy with the numbers agreeing: `library.citation_match`), then — for an
author–year citation without an entry — the one library paper of that first author and year."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from bayes_app.audits.citations import surname_key
from bayes_app.audits.draft import Ref
from bayes_app.audits.references import first_surname
from bayes_app.library.citation_match import Paper, PaperIndex


@dataclass(frozen=True)
class LibraryPaper:
    """What resolution knows of one library document."""

    id: str
    title: str = ""
    year: int | None = None
    doi: str | None = None
    authors: list[str] = field(default_factory=list)
    zotero_key: str | None = None


@dataclass(frozen=True)
class Resolution:
    document_id: str | None
    how: str  # zotero | doi | title | fuzzy | author_year | none


class Resolver:
    """The library's papers, indexed once per audit."""

    def __init__(self, papers: Iterable[LibraryPaper]) -> None:
        self.papers = {p.id: p for p in papers}
        self._index = PaperIndex(Paper(id=p.id, title=p.title, year=p.year, doi=p.doi) for p in self.papers.values())
        self._zotero = {p.zotero_key: p.id for p in self.papers.values() if p.zotero_key}
        self._author_year: dict[tuple[str, int], list[str]] = defaultdict(list)
        for p in self.papers.values():
            if p.authors and p.year:
                self._author_year[(surname_key(first_surname(p.authors[0])), p.year)].append(p.id)

    def resolve(self, ref: Ref) -> Resolution:
        """The library document `ref` names, or Resolution(None, "none") (not in the library)."""
        if ref.zotero_key and (hit := self._zotero.get(ref.zotero_key)):
            return Resolution(hit, "zotero")
        if ref.doi or ref.title:
            m = self._index.match(ref.title, ref.year, ref.doi)
            if m is not None and (m.how != "fuzzy" or self._authors_agree(ref, m.document_id)):
                return Resolution(m.document_id, m.how)
            return Resolution(None, "none")
        if ref.authors and ref.year:
            ids = self._author_year.get((surname_key(first_surname(ref.authors[0])), ref.year), [])
            if len(ids) == 1:
                return Resolution(ids[0], "author_year")
        return Resolution(None, "none")

    def _authors_agree(self, ref: Ref, document_id: str) -> bool:
        """A fuzzy title match keeps only when the first authors do not disagree."""
        doc = self.papers[document_id]
        if not ref.authors or not doc.authors:
            return True
        mine = surname_key(first_surname(ref.authors[0]))
        return any(surname_key(first_surname(a)) == mine for a in doc.authors[:3]) or not mine
