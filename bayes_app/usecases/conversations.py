"""Conversation use cases: the chat page's data, pinning a conversation to part of the
library, and deleting one with its answer still running (database and job queue)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import col

from bayes_app.chat import conversations as chat
from bayes_app.db import session_scope, sessions
from bayes_app.errors import DomainError, NotFound
from bayes_app.llm.factory import is_offline
from bayes_app.models import Collection, Conversation, Document
from bayes_app.redis_client import get_redis
from bayes_app.runs import service
from bayes_app.usecases import runs
from bayes_app.usecases.schemas.runs import ConversationDetail, ConversationList, ConversationOut


@dataclass
class ChatPage:
    """What the chat page shows: the user's conversations, the documents and collections a
    conversation can be pinned to, and the open conversation with its messages."""

    conversations: list[Conversation]
    documents: list[Document]
    collections: list[Collection]
    conversation: Conversation | None = None
    other_version: int = 0  # questions an edit put aside (0: no other version)
    messages: list[dict[str, Any]] = field(default_factory=list)
    active_run_ids: list[str] = field(default_factory=list)


def page(user_id: str, conv_id: str | None) -> ChatPage:
    with session_scope() as db:
        out = ChatPage(
            conversations=list(chat.list_for(db, user_id)),
            documents=db.query(Document).filter(col(Document.owner_id) == user_id).order_by(Document.title).all(),
            collections=db.query(Collection)
            .filter(col(Collection.owner_id) == user_id)
            .order_by(Collection.name)
            .all(),
        )
        conv = chat.get_owned(db, user_id, conv_id) if conv_id else None
        if conv is not None:
            out.conversation = conv
            out.other_version = chat.other_version_questions(db, conv)
            out.messages = chat.message_views(db, conv.id)
            out.active_run_ids = list(chat.active_runs(db, conv.id))
        return out


def set_scope(user_id: str, conv_id: str, scope: dict[str, list[str]]) -> None:
    """Pin the conversation to documents/collections (only the user's own are kept)."""
    with session_scope() as db:
        conv = chat.get_owned(db, user_id, conv_id)
        if conv is not None:
            conv.scope = chat.normalize_scope(db, user_id, scope)
            db.add(conv)


def delete_conversation(user_id: str, conv_id: str) -> bool:
    """Cancel its running answer (`resource_deleted`, still settled), then delete it.
    False when it is not the user's."""
    with session_scope() as db:
        if chat.get_owned(db, user_id, conv_id) is None:
            return False
    runs.settle_cancelled(service.cancel_resource_runs(sessions, get_redis(), "conversation", conv_id))
    with session_scope() as db:
        conv = chat.get_owned(db, user_id, conv_id)
        if conv is not None:
            db.delete(conv)
            db.commit()
    return True


def listing(user_id: str) -> ConversationList:
    """The user's conversations (newest first) and whether answers are offline."""
    with session_scope() as db:
        views = [chat.view(c) for c in chat.list_for(db, user_id)]
    return ConversationList.model_validate({"conversations": views, "offline_mode": is_offline()})


def detail(user_id: str, conv_id: str) -> ConversationDetail:
    """A conversation with its messages and active runs (NotFound unless the user's)."""
    with session_scope() as db:
        conv = chat.get_owned(db, user_id, conv_id)
        if conv is None:
            raise NotFound("conversation")
        return ConversationDetail.model_validate(
            {
                **chat.view(conv),
                "messages": chat.message_views(db, conv.id),
                "active_run_ids": chat.active_runs(db, conv.id),
                "offline_mode": is_offline(),
                "other_version": chat.other_version_questions(db, conv),
            }
        )


def switch_version(user_id: str, conv_id: str) -> ConversationDetail:
    """Show the exchanges the last edit put aside instead of the ones since (and back);
    the conversation's detail afterwards. Refused while an answer is being written."""
    with session_scope() as db:
        conv = chat.get_owned(db, user_id, conv_id)
        if conv is None:
            raise NotFound("conversation")
        if chat.active_runs(db, conv.id):
            raise DomainError("answer_running", "Wait for the answer to finish (or stop it) first.", 409)
        chat.switch_version(db, conv)
    return detail(user_id, conv_id)


def patch(user_id: str, conv_id: str, body: dict[str, Any]) -> ConversationOut:
    """Rename (`title`) or pin (`scope`) a conversation."""
    with session_scope() as db:
        conv = chat.get_owned(db, user_id, conv_id)
        if conv is None:
            raise NotFound("conversation")
        if "title" in body:
            title = body["title"]
            if not isinstance(title, str) or not title.strip():
                raise DomainError("bad_request", "title must be a non-empty string.")
            conv.title = chat.title_for(title)
        if "scope" in body:
            conv.scope = chat.normalize_scope(db, user_id, body["scope"])
        db.add(conv)
        db.commit()
        return ConversationOut.model_validate(chat.view(conv))
