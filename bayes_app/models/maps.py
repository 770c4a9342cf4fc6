"""The mindmap aggregate: maps, their nodes, citations, relations, proposals and undo log.

A map has one root node (kind `question`); every other node has a parent in the same map.
`Mindmap.revision` is bumped by every edit (user or agent) in the edit's own transaction,
so a second tab can poll one integer to know it must reload.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from bayes_app.models.base import UTCDateTime, new_id, utcnow


class NodeKind:
    QUESTION = "question"
    THEME = "theme"
    CLAIM = "claim"
    COUNTERPOINT = "counterpoint"
    NOTE = "note"
    CHAPTER = "chapter"
    ALL = (QUESTION, THEME, CLAIM, COUNTERPOINT, NOTE, CHAPTER)


class Origin:
    USER = "user"
    AGENT = "agent"
    ZOTERO = "zotero"  # brought in from the user's Zotero highlights


class RelationKind:
    CONTRADICTS = "contradicts"
    ALL = (CONTRADICTS,)


class SupportLabel:
    SUPPORTED = "supported"
    PARTIAL = "partial"  # the passage supports part of it, or the wording overstates it
    UNSUPPORTED = "unsupported"


class Mindmap(SQLModel, table=True):
    __tablename__ = "mindmaps"
    __table_args__ = (Index("ix_mindmaps_owner_updated", "owner_id", "updated_at"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="users.id", max_length=32, ondelete="CASCADE")
    title: str = Field(max_length=300)
    offline: bool = False  # built (partly) by the offline provider: label it "offline mode"
    # "Watch for new papers": a newly indexed relevant paper starts an update proposal (maps/living.py)
    watch_new_papers: bool = True
    # the map's scope: its runs research only this collection (the owner's own or one shared with
    # them); None = the owner's whole library
    collection_id: str | None = Field(
        default=None, foreign_key="collections.id", index=True, max_length=32, ondelete="SET NULL"
    )
    revision: int = 0  # bumped by every edit
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class MapNode(SQLModel, table=True):
    __tablename__ = "map_nodes"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    map_id: str = Field(foreign_key="mindmaps.id", index=True, max_length=32, ondelete="CASCADE")
    parent_id: str | None = Field(
        default=None, foreign_key="map_nodes.id", index=True, max_length=32, ondelete="CASCADE"
    )
    kind: str = Field(default=NodeKind.NOTE, max_length=20)
    title: str = Field(default="", sa_column=Column(Text, nullable=False))
    body: str = Field(default="", sa_column=Column(Text, nullable=False))
    order_index: int = 0  # position among its siblings
    pos_x: float | None = None  # canvas position (None: not laid out yet)
    pos_y: float | None = None
    collapsed: bool = False
    created_by: str = Field(default=Origin.USER, max_length=10)
    run_id: str | None = Field(default=None, max_length=32, index=True)  # the run that wrote it
    # the user who made it (or who started the run that wrote it), and who changed it last
    author_id: str | None = Field(default=None, max_length=32)
    edited_by: str | None = Field(default=None, max_length=32)
    confidence: float | None = None
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class Citation(SQLModel, table=True):
    """A node's evidence: a verbatim quote in one chunk of one document page.

    `char_start`/`char_end` are offsets of the quote in the page text (PageText)."""

    __tablename__ = "map_citations"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    map_id: str = Field(foreign_key="mindmaps.id", index=True, max_length=32, ondelete="CASCADE")
    node_id: str = Field(foreign_key="map_nodes.id", index=True, max_length=32, ondelete="CASCADE")
    # NULL once the source was removed (deleted, or gone from Zotero): the citation stays,
    # marked by `source_removed_at`, with the title it had (`source_title`).
    document_id: str | None = Field(
        default=None, foreign_key="documents.id", index=True, max_length=32, ondelete="SET NULL"
    )
    source_title: str | None = Field(default=None, max_length=1000)
    source_removed_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))
    source_removed_reason: str | None = Field(default=None, max_length=40)
    chunk_id: str | None = Field(default=None, max_length=32)  # chunks are replaced on re-ingest
    page: int
    quote: str = Field(sa_column=Column(Text, nullable=False))
    char_start: int | None = None
    char_end: int | None = None
    origin: str = Field(default=Origin.USER, max_length=10)
    agent: str | None = Field(default=None, max_length=40)  # researcher / critic …
    support_score: float | None = None  # 0..1
    support_label: str | None = Field(default=None, max_length=20)
    suggested_rewrite: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # Where on the page (a Zotero highlight): {"page_index", "rects": [[x1, y1, x2, y2]] in PDF points
    # from the page's bottom-left, "annotation_key", "color"}; None for text-located citations.
    region: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class NodeRelation(SQLModel, table=True):
    __tablename__ = "map_relations"
    __table_args__ = (UniqueConstraint("source_id", "target_id", "kind", name="uq_map_relation"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    map_id: str = Field(foreign_key="mindmaps.id", index=True, max_length=32, ondelete="CASCADE")
    source_id: str = Field(foreign_key="map_nodes.id", index=True, max_length=32, ondelete="CASCADE")
    target_id: str = Field(foreign_key="map_nodes.id", index=True, max_length=32, ondelete="CASCADE")
    kind: str = Field(default=RelationKind.CONTRADICTS, max_length=20)
    created_by: str = Field(default=Origin.AGENT, max_length=10)
    run_id: str | None = Field(default=None, max_length=32)
    # a counterpoint found in a newly arrived paper (an accepted update): that paper and when it arrived
    evidence_document_id: str | None = Field(default=None, max_length=32)
    evidence_title: str | None = Field(default=None, max_length=1000)
    evidence_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class MapProposal(SQLModel, table=True):
    """An agent's proposal awaiting the user's decision: a regrouping (restructure / chapters /
    split: payload = {"groups": [{"title": str, "node_ids": [str, ...]}], "node_kind": "theme"|"chapter",
    "parent_id"?: the theme a split regroups under}) or an update from new papers
    (kind "update": payload = {"documents": [...], "items": [...]}, see maps/updates.py)."""

    __tablename__ = "map_proposals"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    map_id: str = Field(foreign_key="mindmaps.id", index=True, max_length=32, ondelete="CASCADE")
    run_id: str | None = Field(default=None, max_length=32)
    kind: str = Field(max_length=20)  # restructure | chapters | split | update
    status: str = Field(default="pending", max_length=20)  # pending | accepted | rejected
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class MapEdit(SQLModel, table=True):
    """One user edit, with what is needed to undo it (rows to delete, rows to restore)."""

    __tablename__ = "map_edits"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    map_id: str = Field(foreign_key="mindmaps.id", index=True, max_length=32, ondelete="CASCADE")
    action: str = Field(max_length=40)
    user_id: str | None = Field(default=None, max_length=32, index=True)  # who made it (None: the owner, before 0021)
    run_id: str | None = Field(default=None, max_length=32, index=True)  # the run whose writes it records
    node_ids: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))  # the nodes it touched
    after: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))  # node fields set
    undo: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    undone: bool = False
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
