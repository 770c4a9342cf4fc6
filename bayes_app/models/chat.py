"""Conversations of the Ask chat and their messages."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from bayes_app.models.base import UTCDateTime, new_id, utcnow


class MessageStatus:
    """An assistant message's own status; while RUNNING the run's status is the truth."""

    RUNNING = "running"
    COMPLETE = "complete"
    CANCELLED = "cancelled"
    FAILED = "failed"


class Conversation(SQLModel, table=True):
    """One chat with the library, optionally pinned to documents or collections."""

    __tablename__ = "conversations"
    __table_args__ = (Index("ix_conversations_owner_updated", "owner_id", "updated_at"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    owner_id: str = Field(foreign_key="users.id", max_length=32, ondelete="CASCADE")
    title: str = Field(max_length=200)
    # {"document_ids": [...], "collection_ids": [...]}; empty = the whole library
    scope: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    # the other version after an edit: the key its hidden exchanges carry (chat.switch_version)
    other_version: str | None = Field(default=None, max_length=32)
    # where the two versions part: the position of the question the edit replaced
    fork_position: int | None = Field(default=None)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
    updated_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))


class ChatMessage(SQLModel, table=True):
    """A user question or an assistant answer, in order (`position`) within its conversation."""

    __tablename__ = "chat_messages"
    __table_args__ = (UniqueConstraint("conversation_id", "position", name="uq_chat_message_position"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    conversation_id: str = Field(foreign_key="conversations.id", max_length=32, ondelete="CASCADE", index=True)
    position: int
    role: str = Field(max_length=20)  # "user" | "assistant"
    content: str = Field(default="", sa_column=Column(Text, nullable=False))
    thinking: str = Field(default="", sa_column=Column(Text, nullable=False))
    citations: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    run_id: str | None = Field(default=None, max_length=32, index=True)
    status: str = Field(default=MessageStatus.COMPLETE, max_length=20)
    # an answer's grounding (chat.grounding): cited | quoted | unsupported | uncited; None before judged
    grounding: str | None = Field(default=None, max_length=20)
    # set when an edit of an earlier question put this message aside (the key of that version);
    # None = shown. Put-aside messages keep their positions; new ones come after them.
    hidden_by: str | None = Field(default=None, max_length=32, index=True)
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UTCDateTime, nullable=False))
