"""What the sharing use cases return: members, maps and collections shared, a node's history, presence.

Built by the use cases inside their sessions (no ORM row leaves one) and used as is by the
HTTP API as `response_model`s (FastAPI documents and validates the JSON against them) and by
the pages' states. Ids are strings; times are ISO 8601 strings; credits are integer
micro-credits. Fields a client may ignore are still listed, so the document is complete."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from bayes_app.usecases.schemas.maps import MapRow, MapSummary


class SharedMapRow(MapSummary):
    owner_email: str  # who shared it


class MapLists(BaseModel):
    mindmaps: list[MapRow]  # the caller's own maps (role owner)
    shared: list[SharedMapRow]  # maps others shared with the caller, with the caller's role


class MemberOut(BaseModel):
    user_id: str
    email: str
    role: str  # viewer | editor
    added_at: str | None


class MemberList(BaseModel):
    owner: MemberOut | None = None
    members: list[MemberOut]


class NodeChange(BaseModel):
    edit_id: str
    action: str
    user_id: str | None  # who made the edit (None: the owner, before sharing existed)
    at: str | None
    undone: bool
    before: dict[str, Any]  # the fields as they were
    after: dict[str, Any]  # the fields this edit set


class NodeHistory(BaseModel):
    changes: list[NodeChange]  # newest first


class HistoryEntry(BaseModel):
    edit_id: str
    action: str  # e.g. update_node, delete_subtree, run_build_map (all writes of one run)
    user_id: str  # who made it (a run's writes: who started the run)
    email: str | None
    at: str | None
    node_ids: list[str]  # the nodes it touched
    run_id: str | None  # the run whose writes it records
    undone: bool


class MapHistory(BaseModel):
    changes: list[HistoryEntry]  # newest first


class Reverted(BaseModel):
    reverted: str  # the action reverted


class MapDocumentOut(BaseModel):
    document_id: str
    title: str
    year: int | None
    how: str  # cited (the map cites it) | added (the owner added it) | "" (may be added)


class MapDocuments(BaseModel):
    """What members of a shared map can open and their runs may read: the map's collection when
    it is scoped to one, else the documents it cites plus those the owner added."""

    collection_id: str | None
    documents: list[MapDocumentOut]
    addable: list[MapDocumentOut]  # the owner's other indexed documents


class SharedCollectionRow(BaseModel):
    id: str
    name: str
    owner_email: str
    document_count: int


class SharedCollections(BaseModel):
    collections: list[SharedCollectionRow]


class Viewer(BaseModel):
    user_id: str
    email: str


class Presence(BaseModel):
    viewers: list[Viewer]


class ShareRow(BaseModel):
    kind: str  # map | collection
    title: str
    owner: str  # e-mail
    member: str  # e-mail
    role: str
    since: str


class ShareList(BaseModel):
    shares: list[ShareRow]
