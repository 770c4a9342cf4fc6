"""What an audit works on: a draft's sentences, their citations and its references (JSON-able)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from bayes_app.errors import DomainError


class DraftRejected(DomainError):
    """A draft file that cannot be audited (nothing is stored)."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(code, message, status)


class Ref(BaseModel):
    """One reference a draft cites: from its reference list, its .bib or a Zotero field."""

    key: str  # "n:3" (numbered), "bib:smith2020", "zotero:ABCD1234", "ay:smith:2020"
    text: str = ""  # the reference as written (or as built from its fields)
    title: str | None = None
    authors: list[str] = Field(default_factory=list)
    year: int | None = None
    doi: str | None = None
    zotero_key: str | None = None


class Cite(BaseModel):
    """One citation in a sentence: the marker as written and the reference key it points to."""

    marker: str
    key: str


class Sentence(BaseModel):
    index: int
    paragraph: int
    text: str
    cites: list[Cite] = Field(default_factory=list)


class Draft(BaseModel):
    """A parsed draft: its sentences (with citations) and the references they point to."""

    format: str
    sentences: list[Sentence]
    references: dict[str, Ref]

    def to_json(self) -> dict[str, Any]:
        return self.model_dump()
