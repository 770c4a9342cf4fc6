"""Response bodies of the Zotero write-back and annotation routes (see `responses.py`)."""

from __future__ import annotations

from pydantic import BaseModel


class ZoteroSendFailure(BaseModel):
    key: str
    code: int
    message: str


class ZoteroSendResult(BaseModel):
    written: list[str]
    updated: list[str]
    unchanged: list[str]
    failed: list[ZoteroSendFailure]
    collection_key: str | None


class HighlightsAdded(BaseModel):
    added: int
    skipped: int
    themes: dict[str, int]


class AnnotationOut(BaseModel):
    key: str
    type: str
    text: str
    comment: str
    color: str
    page: int
    page_index: int
    page_label: str
    rects: list[list[float]]
    sort_index: str
    attachment_key: str


class AnnotationList(BaseModel):
    annotations: list[AnnotationOut]
