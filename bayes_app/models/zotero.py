"""The Zotero aggregate: connected libraries and what Bayes knows of their objects."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from bayes_app.models.base import UTCDateTime, new_id, utcnow


class SyncStatus:
    IDLE = "idle"
    QUEUED = "queued"
    SYNCING = "syncing"
    ERROR = "error"


class ZoteroLibrary(SQLModel, table=True):
    """One connected Zotero library (a user's own or a group) of one Bayes user."""

    __tablename__ = "zotero_libraries"
    __table_args__ = (UniqueConstraint("owner_id", "api", "library_type", "library_key", name="uq_zotero_library"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="users.id", index=True, max_length=32, ondelete="CASCADE")
    api: str = Field(default="web", max_length=10)  # "web" | "local"
    library_type: str = Field(default="user", max_length=10)  # "user" | "group"
    library_key: str = Field(max_length=40)  # the Zotero user or group id
    name: str = Field(default="", max_length=300)
    api_key_encrypted: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    permissions: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    version: int = 0  # last library version synced completely
    status: str = Field(default=SyncStatus.IDLE, max_length=20)
    progress: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    last_result: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    last_sync_at: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))
    lease_token: str | None = Field(default=None, max_length=32)
    lease_until: datetime | None = Field(default=None, sa_column=Column(UTCDateTime, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class ZoteroCollection(SQLModel, table=True):
    """A Zotero collection and the Bayes collection it became."""

    __tablename__ = "zotero_collections"

    library_id: str = Field(foreign_key="zotero_libraries.id", primary_key=True, max_length=32, ondelete="CASCADE")
    key: str = Field(primary_key=True, max_length=16)
    version: int = 0
    name: str = Field(default="", max_length=300)
    parent_key: str | None = Field(default=None, max_length=16)
    trashed: bool = False
    collection_id: str | None = Field(default=None, max_length=32)  # the Bayes collection
    created_collection: bool = False  # True: the sync made it (so the sync may delete it)


class ZoteroItem(SQLModel, table=True):
    """A Zotero item as last synced: enough to rebuild its documents without refetching.

    `dirty` marks rows whose documents must be reconciled; it survives a crash, so a
    restarted sync finishes the work of the killed one."""

    __tablename__ = "zotero_items"

    library_id: str = Field(foreign_key="zotero_libraries.id", primary_key=True, max_length=32, ondelete="CASCADE")
    key: str = Field(primary_key=True, max_length=16)
    version: int = 0
    item_type: str = Field(default="", max_length=40)
    parent_key: str | None = Field(default=None, max_length=16, index=True)
    trashed: bool = False
    data: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    dirty: bool = Field(default=False, index=True)
    file_md5: str | None = Field(default=None, max_length=32)  # md5 of the file we ingested
    document_id: str | None = Field(default=None, max_length=32, index=True)
    problem_code: str | None = Field(default=None, max_length=40)
    problem_message: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class ZoteroNote(SQLModel, table=True):
    """A note Bayes wrote into a Zotero library for a map ("Send to Zotero"): the map's own
    standalone note (`parent_item_key` "") or a child note on one cited item. Kept by key and
    version so that sending again updates the same note instead of adding a copy."""

    __tablename__ = "zotero_notes"
    __table_args__ = (UniqueConstraint("library_id", "map_id", "parent_item_key", name="uq_zotero_note"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    library_id: str = Field(foreign_key="zotero_libraries.id", index=True, max_length=32, ondelete="CASCADE")
    map_id: str = Field(foreign_key="mindmaps.id", index=True, max_length=32, ondelete="CASCADE")
    parent_item_key: str = Field(default="", max_length=16)  # "" = the map's standalone note
    note_key: str = Field(max_length=16)
    version: int = 0  # the note's Zotero version after our last write (0: not confirmed yet)
    updated_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
