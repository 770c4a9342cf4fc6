"""First-run progress: which of the three first steps (papers, question, map) a user has done."""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session, col, func, select

from bayes_app.models import ChatMessage, Conversation, Document, MapNode, Mindmap
from bayes_app.models.library import DocStatus


@dataclass(frozen=True)
class FirstRun:
    papers: int  # documents in the library (any status)
    indexed: int  # of those, indexed (searchable)
    asked: bool  # asked at least one question
    mapped: bool  # has a map with more than its root node

    @property
    def done(self) -> bool:
        return self.papers > 0 and self.asked and self.mapped


def progress(db: Session, user_id: str) -> FirstRun:
    papers = db.exec(select(func.count()).select_from(Document).where(Document.owner_id == user_id)).one()
    indexed = db.exec(
        select(func.count())
        .select_from(Document)
        .where(Document.owner_id == user_id, Document.status == DocStatus.INDEXED)
    ).one()
    asked = db.exec(
        select(ChatMessage.id)
        .join(Conversation, col(Conversation.id) == col(ChatMessage.conversation_id))
        .where(Conversation.owner_id == user_id, ChatMessage.role == "user")
        .limit(1)
    ).first()
    mapped = db.exec(
        select(MapNode.map_id)
        .join(Mindmap, col(Mindmap.id) == col(MapNode.map_id))
        .where(Mindmap.owner_id == user_id)
        .group_by(MapNode.map_id)
        .having(func.count() > 1)
        .limit(1)
    ).first()
    return FirstRun(papers=papers, indexed=indexed, asked=asked is not None, mapped=mapped is not None)
