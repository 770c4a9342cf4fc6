"""What an audit finds, per sentence and in sum (the stored and served shape)."""

from __future__ import annotations

from pydantic import BaseModel, Field

VERDICTS = ("supported", "partial", "unsupported", "contradicted", "not_in_library")
FLAGGED = frozenset({"unsupported", "contradicted", "not_in_library"})  # a citation the author must look at


class Evidence(BaseModel):
    document_id: str
    page: int
    quote: str  # verbatim from the paper's page text


class CitationResult(BaseModel):
    marker: str
    reference: str
    document_id: str | None
    verdict: str
    score: float | None
    evidence: Evidence | None
    reason: str = ""
    judged_by: str = "scorer"  # scorer | model
    title: str = ""  # the library paper's title (empty when not in the library)


class Suggestion(BaseModel):
    document_id: str
    page: int
    quote: str
    score: float
    title: str = ""


class SentenceResult(BaseModel):
    index: int
    paragraph: int = 0
    text: str
    finding: bool = False  # states a finding (uncited: gets suggestions)
    citations: list[CitationResult] = Field(default_factory=list)
    suggestions: list[Suggestion] = Field(default_factory=list)

    @property
    def flagged(self) -> bool:
        """A problem the author should look at: a flagged citation, or a finding left uncited."""
        return any(c.verdict in FLAGGED for c in self.citations) or (not self.citations and self.finding)


class Summary(BaseModel):
    sentences: int = 0
    cited: int = 0
    citations: int = 0
    supported: int = 0
    partial: int = 0
    unsupported: int = 0
    contradicted: int = 0
    not_in_library: int = 0
    flagged: int = 0  # sentences with a problem
    uncited_findings: int = 0
    suggestions: int = 0


def summarize(results: list[SentenceResult]) -> Summary:
    s = Summary(sentences=len(results))
    for r in results:
        s.cited += bool(r.citations)
        s.citations += len(r.citations)
        for c in r.citations:
            setattr(s, c.verdict, getattr(s, c.verdict) + 1)
        s.flagged += r.flagged
        s.uncited_findings += bool(not r.citations and r.finding)
        s.suggestions += len(r.suggestions)
    return s
