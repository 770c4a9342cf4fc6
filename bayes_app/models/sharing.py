"""Sharing: who may read or edit another user's map, who may read another user's collection.

The owner is never a member row: `Mindmap.owner_id` / `Collection.owner_id` stays the one owner.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column
from sqlmodel import Field, SQLModel

from bayes_app.models.base import UTCDateTime, utcnow


class Role:
    OWNER = "owner"
    EDITOR = "editor"
    VIEWER = "viewer"
    GRANTABLE = (EDITOR, VIEWER)
    RANK = {VIEWER: 1, EDITOR: 2, OWNER: 3}


class MapMember(SQLModel, table=True):
    __tablename__ = "map_members"

    map_id: str = Field(foreign_key="mindmaps.id", primary_key=True, max_length=32, ondelete="CASCADE")
    user_id: str = Field(foreign_key="users.id", primary_key=True, index=True, max_length=32, ondelete="CASCADE")
    role: str = Field(max_length=10)
    added_by: str = Field(max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class CollectionMember(SQLModel, table=True):
    """Read-only share of a collection (role is always `viewer`)."""

    __tablename__ = "collection_members"

    collection_id: str = Field(foreign_key="collections.id", primary_key=True, max_length=32, ondelete="CASCADE")
    user_id: str = Field(foreign_key="users.id", primary_key=True, index=True, max_length=32, ondelete="CASCADE")
    role: str = Field(default=Role.VIEWER, max_length=10)
    added_by: str = Field(max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class MapDocument(SQLModel, table=True):
    """A document of the map owner's library that the owner made readable to the map's members
    (the share dialog): members open it, and their runs on the map may research and cite it."""

    __tablename__ = "map_documents"

    map_id: str = Field(foreign_key="mindmaps.id", primary_key=True, max_length=32, ondelete="CASCADE")
    document_id: str = Field(
        foreign_key="documents.id", primary_key=True, index=True, max_length=32, ondelete="CASCADE"
    )
    added_by: str = Field(max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
