"""A library held in memory (papers and their texts), for checking drafts without the database
and the index: the unit tests and `benchmarks/audit_quality.py`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bayes_app.audits.check import Passage
from bayes_app.audits.judge import Embed, relevance
from bayes_app.audits.resolve import LibraryPaper
from bayes_app.maps.sentences import split_sentences


@dataclass(frozen=True)
class MemoryPaper:
    paper: LibraryPaper
    pages: list[str]  # page texts, page 1 first


class MemoryLibrary:
    """`check.Library` over papers in memory; search ranks every sentence by `relevance`."""

    def __init__(self, papers: Sequence[MemoryPaper], embed: Embed) -> None:
        self._papers = {p.paper.id: p for p in papers}
        self.embed = embed
        self._passages = {
            p.paper.id: [
                Passage(p.paper.id, n, s)
                for n, text in enumerate(p.pages, 1)
                for s in split_sentences(" ".join(text.split()))
                if len(s.split()) >= 5
            ]
            for p in papers
        }
        self._all = [s for ps in self._passages.values() for s in ps]

    def papers(self) -> list[LibraryPaper]:
        return [p.paper for p in self._papers.values()]

    def title(self, document_id: str) -> str:
        return self._papers[document_id].paper.title if document_id in self._papers else ""

    def passages(self, document_id: str) -> Sequence[Passage]:
        return self._passages.get(document_id, [])

    def search(self, text: str, k: int) -> Sequence[Passage]:
        scores = relevance(text, [p.text for p in self._all], self.embed)
        order = sorted(range(len(self._all)), key=lambda i: -scores[i])
        return [self._all[i] for i in order[:k]]
