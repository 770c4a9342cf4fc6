"""What the Zotero use cases return: libraries, sync results, write-back, annotations.

Built by the use cases inside their sessions (no ORM row leaves one) and used as is by the
HTTP API as `response_model`s (FastAPI documents and validates the JSON against them) and by
the pages' states. Ids are strings; times are ISO 8601 strings; credits are integer
micro-credits. Fields a client may ignore are still listed, so the document is complete."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from bayes_app.zotero.annotations import Annotation as Annotation  # the domain's records, as they are
from bayes_app.zotero.sync_state import ZoteroSyncResult as ZoteroSyncResult


class ZoteroProblem(BaseModel):
    """An item whose PDF could not be brought in, and why."""

    item_key: str
    attachment_key: str
    title: str
    filename: str | None
    code: str
    message: str | None


class ZoteroLibraryOut(BaseModel):
    id: str
    api: str
    library_type: str
    library_id: str
    name: str
    permissions: dict[str, bool]
    status: str
    version: int | None
    last_sync_at: str | None
    last_result: ZoteroSyncResult | None
    last_error: str | None
    progress: dict[str, Any]
    items: int
    collections: int
    documents: dict[str, int]
    problem_count: int
    created_at: str
    problems: list[ZoteroProblem] = []  # in GET /zotero/libraries/<id> only


class ZoteroLibraryList(BaseModel):
    libraries: list[ZoteroLibraryOut]


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


class AnnotationList(BaseModel):
    annotations: list[Annotation]
