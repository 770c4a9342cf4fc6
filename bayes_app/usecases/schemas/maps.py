"""What the map use cases return: maps, nodes, citations, relations, proposals.

Built by the use cases inside their sessions (no ORM row leaves one) and used as is by the
HTTP API as `response_model`s (FastAPI documents and validates the JSON against them) and by
the pages' states. Ids are strings; times are ISO 8601 strings; credits are integer
micro-credits. Fields a client may ignore are still listed, so the document is complete."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from bayes_app.usecases.schemas.runs import RunStarted


class Point(BaseModel):
    x: float
    y: float


class MapSummary(BaseModel):
    id: str
    title: str
    offline: bool  # written without a language model
    watch_new_papers: bool = False  # a newly indexed relevant paper starts an update proposal
    collection_id: str | None = None  # the map's scope: its runs research only this collection
    revision: int
    created_at: str | None
    updated_at: str | None
    role: str | None = None  # the caller's: owner | editor | viewer


class ScopeChoice(BaseModel):
    """A collection a new map may be scoped to (the user's own, or one shared with them)."""

    id: str
    name: str


class MapRow(MapSummary):
    node_count: int
    new_papers: int = 0  # papers of pending update proposals: "N new papers may change this map"


class MapList(BaseModel):
    mindmaps: list[MapRow]


class NodeOut(BaseModel):
    id: str
    map_id: str
    parent_id: str | None
    kind: str
    title: str
    body: str
    order: int
    position: Point | None
    collapsed: bool
    created_by: str  # user | agent
    run_id: str | None
    author_id: str | None = None  # who made it (a user, or who started the run that wrote it)
    edited_by: str | None = None  # who changed it last
    confidence: float | None
    citation_count: int
    support: float | None
    challenged_by: list[dict[str, Any]] = []  # newer papers contradicting it (verb, title, arrived_at)
    created_at: str | None
    updated_at: str | None


class CitationOut(BaseModel):
    id: str
    node_id: str
    document_id: str | None
    chunk_id: str | None
    page: int | None
    quote: str
    char_start: int | None
    char_end: int | None
    origin: str
    agent: str | None
    support_score: float | None
    support_label: str | None
    suggested_rewrite: str | None
    region: dict[str, Any] | None = None  # a Zotero highlight's page rectangles
    title: str | None
    source_removed: bool
    source_removed_reason: str | None
    authors: list[str]
    year: int | None
    language: str | None
    cited_in_library: int = 0  # how many of the owner's documents cite this citation's paper
    created_at: str | None


class RelationOut(BaseModel):
    id: str
    source_id: str
    target_id: str
    kind: str
    created_by: str
    run_id: str | None


class ProposalOut(BaseModel):
    id: str
    kind: str  # restructure | chapters | split | update
    status: str
    run_id: str | None
    payload: dict[str, Any]
    charged_credits: int | None = None  # an update: what its run cost (micro-credits)
    created_at: str | None


class Watch(BaseModel):
    watch_new_papers: bool


class NewPapers(BaseModel):
    maps: dict[str, int]  # map id → new papers that may change it


class MapView(MapSummary):
    collection_name: str | None = None  # the scope collection's name
    root_id: str
    nodes: list[NodeOut]
    citations: list[CitationOut]
    relations: list[RelationOut]
    proposals: list[ProposalOut]


class MapDeleted(BaseModel):
    deleted: bool
    cancelled_runs: list[str]


class NodesDeleted(BaseModel):
    deleted: list[str]


class Deleted(BaseModel):
    deleted: bool


class Revision(BaseModel):
    revision: int


class Undone(BaseModel):
    undone: str | None  # the action undone; null: nothing to undo


class Layout(BaseModel):
    positions: dict[str, Point]


class CitationList(BaseModel):
    citations: list[CitationOut]


class SupportRun(BaseModel):
    """A support check judged by the model: a billed run, followed like any other."""

    run: RunStarted
