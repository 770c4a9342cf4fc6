"""What the audit use cases return: a checked draft, its sentences, citations and suggestions."""

from __future__ import annotations

from pydantic import BaseModel, Field


class AuditStarted(BaseModel):
    id: str
    status: str


class AuditProgress(BaseModel):
    done: int
    total: int


class AuditEvidence(BaseModel):
    document_id: str
    page: int
    quote: str  # verbatim from the paper


class AuditCitation(BaseModel):
    marker: str
    reference: str
    document_id: str | None
    verdict: str  # supported | partial | unsupported | contradicted | not_in_library
    score: float | None
    evidence: AuditEvidence | None
    reason: str = ""
    judged_by: str = "scorer"
    title: str = ""


class AuditSuggestion(BaseModel):
    document_id: str
    page: int
    quote: str
    score: float
    title: str = ""


class AuditSentence(BaseModel):
    index: int
    paragraph: int = 0
    text: str
    finding: bool = False
    flagged: bool = False
    citations: list[AuditCitation] = Field(default_factory=list)
    suggestions: list[AuditSuggestion] = Field(default_factory=list)


class AuditSummary(BaseModel):
    sentences: int = 0
    cited: int = 0
    citations: int = 0
    supported: int = 0
    partial: int = 0
    unsupported: int = 0
    contradicted: int = 0
    not_in_library: int = 0
    flagged: int = 0
    uncited_findings: int = 0
    suggestions: int = 0


class MissingReference(BaseModel):
    """A cited reference that is not in the library, ready to fetch."""

    reference: str
    title: str | None = None
    doi: str | None = None
    year: int | None = None


class AuditRow(BaseModel):
    id: str
    filename: str
    format: str
    status: str
    created_at: str
    progress: AuditProgress
    summary: AuditSummary


class AuditList(BaseModel):
    audits: list[AuditRow]


class AuditOut(AuditRow):
    run_id: str | None
    collection_id: str | None
    sentences: list[AuditSentence]
    missing: list[MissingReference] = Field(default_factory=list)
