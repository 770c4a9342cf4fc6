"""Conversations: creating, pinning, turns (question + answer slot), rewinding, reading.

The caller owns the transaction (nothing here commits), so a turn and the run that answers
it are created atomically.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, update
from sqlmodel import Session, col, select

from bayes_app.chat.grounding import LABELS
from bayes_app.chat.memory import Exchange
from bayes_app.errors import DomainError
from bayes_app.models import (
    ChatMessage,
    Collection,
    CollectionMember,
    Conversation,
    Document,
    MessageStatus,
    Run,
    RunStatus,
    new_id,
    utcnow,
)
from bayes_app.sharing.collections import scope_owner

TITLE_CHARS = 80


class ChatError(DomainError, ValueError):
    """A request about a conversation that cannot be done."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(code, message, status)


def title_for(question: str) -> str:
    text = " ".join(question.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def normalize_scope(db: Session, owner_id: str, scope: Any) -> dict[str, list[str]]:
    """`{"document_ids": [...], "collection_ids": [...]}` with only the owner's ids; raises
    ChatError for a malformed scope or ids that are not the owner's (no existence leak)."""
    if scope in (None, {}):
        return {}
    if not isinstance(scope, dict) or set(scope) - {"document_ids", "collection_ids"}:
        raise ChatError(400, "bad_scope", 'scope must be {"document_ids": [...], "collection_ids": [...]}.')
    out: dict[str, list[str]] = {}
    for key, model in (("document_ids", Document), ("collection_ids", Collection)):
        ids = scope.get(key) or []
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(ids) > 500:
            raise ChatError(400, "bad_scope", f"scope.{key} must be a list of ids.")
        ids = list(dict.fromkeys(ids))
        if ids:
            found = set(db.exec(select(model.id).where(col(model.id).in_(ids), model.owner_id == owner_id)).all())
            if model is Collection:  # a collection shared with the user is a scope too (one library)
                found |= {i for i in ids if i not in found and _shared(db, owner_id, i)}
            missing = [i for i in ids if i not in found]
            if missing:
                what = "document" if key == "document_ids" else "collection"
                raise ChatError(404, "not_found", f"No {what} {missing[0]} in your library.")
            out[key] = ids
    if out.get("collection_ids"):
        library = scope_owner(db, owner_id, out["collection_ids"])
        if library != owner_id and out.get("document_ids"):
            raise ChatError(400, "mixed_scope", "A shared collection's scope cannot include your own documents.")
    return out


def _shared(db: Session, user_id: str, collection_id: str) -> bool:
    return db.get(CollectionMember, (collection_id, user_id)) is not None


def get_owned(db: Session, owner_id: str, conversation_id: str) -> Conversation | None:
    conv = db.get(Conversation, conversation_id, populate_existing=True)
    return conv if conv is not None and conv.owner_id == owner_id else None


def list_for(db: Session, owner_id: str, limit: int = 200) -> list[Conversation]:
    """The owner's conversations, last active first."""
    return list(
        db.exec(
            select(Conversation)
            .where(Conversation.owner_id == owner_id)
            .order_by(col(Conversation.updated_at).desc())
            .limit(limit)
        ).all()
    )


def create(db: Session, owner_id: str, title: str, scope: dict[str, list[str]] | None = None) -> Conversation:
    conv = Conversation(owner_id=owner_id, title=title_for(title) or "New chat", scope=scope or {})
    db.add(conv)
    db.flush()
    return conv


def messages(db: Session, conversation_id: str) -> list[ChatMessage]:
    """The messages shown, in order (not the ones an edit put aside)."""
    return list(
        db.exec(
            select(ChatMessage)
            .where(ChatMessage.conversation_id == conversation_id, col(ChatMessage.hidden_by).is_(None))
            .order_by(col(ChatMessage.position))
        ).all()
    )


def active_runs(db: Session, conversation_id: str) -> list[str]:
    """Ids of runs still working on this conversation."""
    return list(
        db.exec(
            select(Run.id).where(
                Run.resource_type == "conversation",
                Run.resource_id == conversation_id,
                col(Run.status).in_(RunStatus.ACTIVE),
            )
        ).all()
    )


def begin_turn(db: Session, conv: Conversation, question: str) -> tuple[ChatMessage, ChatMessage]:
    """Append the question and an empty answer slot (status running) at the end."""
    last = db.exec(select(func.max(ChatMessage.position)).where(ChatMessage.conversation_id == conv.id)).one()
    pos = -1 if last is None else int(last)
    user = ChatMessage(conversation_id=conv.id, position=pos + 1, role="user", content=question)
    answer = ChatMessage(conversation_id=conv.id, position=pos + 2, role="assistant", status=MessageStatus.RUNNING)
    db.add(user)
    db.add(answer)
    conv.updated_at = utcnow()
    db.add(conv)
    db.flush()
    return user, answer


def rewind(db: Session, conv: Conversation, message_id: str) -> None:
    """Put the user message `message_id` and everything after it aside (edit-and-re-ask):
    they become the conversation's other version, which `switch_version` brings back.
    Runs that answered them keep their settled credits."""
    msg = db.get(ChatMessage, message_id)
    if msg is None or msg.conversation_id != conv.id or msg.role != "user" or msg.hidden_by is not None:
        raise ChatError(404, "not_found", "No such question in this conversation.")
    key = new_id()
    db.exec(
        update(ChatMessage)
        .where(
            col(ChatMessage.conversation_id) == conv.id,
            col(ChatMessage.position) >= msg.position,
            col(ChatMessage.hidden_by).is_(None),
        )
        .values(hidden_by=key)
    )
    conv.other_version, conv.fork_position = key, msg.position
    db.add(conv)
    db.flush()


def other_version_questions(db: Session, conv: Conversation) -> int:
    """How many questions the conversation's other version holds (0: there is none)."""
    if not conv.other_version:
        return 0
    return int(
        db.exec(
            select(func.count())
            .select_from(ChatMessage)
            .where(
                ChatMessage.conversation_id == conv.id,
                ChatMessage.hidden_by == conv.other_version,
                ChatMessage.role == "user",
            )
        ).one()
    )


def switch_version(db: Session, conv: Conversation) -> int:
    """Show the other version of the conversation (the exchanges an edit put aside) instead of
    the one shown since that edit, which becomes the other version in turn — so an edit can
    always be undone, and redone. Returns how many questions are shown again."""
    key = conv.other_version
    hidden = (
        list(db.exec(select(ChatMessage).where(ChatMessage.conversation_id == conv.id, ChatMessage.hidden_by == key)))
        if key
        else []
    )
    if not hidden or conv.fork_position is None:
        raise ChatError(409, "no_other_version", "This conversation has no earlier version to show.")
    swap = new_id()
    db.exec(
        update(ChatMessage)
        .where(
            col(ChatMessage.conversation_id) == conv.id,
            col(ChatMessage.position) >= conv.fork_position,
            col(ChatMessage.hidden_by).is_(None),
        )
        .values(hidden_by=swap)
    )
    db.exec(
        update(ChatMessage)
        .where(col(ChatMessage.conversation_id) == conv.id, col(ChatMessage.hidden_by) == key)
        .values(hidden_by=None)
    )
    conv.other_version, conv.updated_at = swap, utcnow()
    db.add(conv)
    db.flush()
    return sum(1 for m in hidden if m.role == "user")


def history_before(db: Session, conversation_id: str, position: int) -> list[Exchange]:
    """Earlier complete question/answer pairs, oldest first (unanswered questions and
    failed answers are skipped; a cancelled answer's partial text counts)."""
    rows = db.exec(
        select(ChatMessage)
        .where(
            ChatMessage.conversation_id == conversation_id,
            col(ChatMessage.hidden_by).is_(None),
            col(ChatMessage.position) < position,
        )
        .order_by(col(ChatMessage.position))
    ).all()
    out: list[Exchange] = []
    question: str | None = None
    for m in rows:
        if m.role == "user":
            question = m.content
        elif question is not None:
            if m.content and m.status != MessageStatus.FAILED:
                out.append(Exchange(question, m.content))
            question = None
    return out


def save_answer(
    db: Session,
    message_id: str,
    content: str,
    thinking: str,
    citations: list[dict[str, Any]],
    status: str,
    grounding: str | None = None,
) -> bool:
    """Store the answer in its slot; False when the slot is gone (the chat was rewound or
    deleted meanwhile)."""
    msg = db.get(ChatMessage, message_id, populate_existing=True)
    if msg is None:
        return False
    msg.content, msg.thinking, msg.citations, msg.status = content, thinking, citations, status
    msg.grounding = grounding
    db.add(msg)
    conv = db.get(Conversation, msg.conversation_id)
    if conv is not None:
        conv.updated_at = utcnow()
        db.add(conv)
    db.flush()
    return True


def message_views(db: Session, conversation_id: str) -> list[dict[str, Any]]:
    """Messages for display; an answer's status and cost come from its run when it has one."""
    rows = messages(db, conversation_id)
    run_ids = [m.run_id for m in rows if m.run_id]
    runs = {op.id: op for op in db.exec(select(Run).where(col(Run.id).in_(run_ids))).all()} if run_ids else {}
    out = []
    for m in rows:
        op = runs.get(m.run_id) if m.run_id else None
        out.append(
            {
                "id": m.id,
                "position": m.position,
                "role": m.role,
                "content": m.content,
                "thinking": m.thinking,
                "citations": m.citations,
                "status": _status(m, op),
                "grounding": m.grounding,
                "grounding_label": LABELS.get(m.grounding or "", ""),
                "run_id": m.run_id,
                "run_status": op.status if op else None,
                "outcome_reason": op.outcome_reason if op else None,
                "charged_credits": op.charged_credits if op else None,
                "created_at": m.created_at.isoformat(),
            }
        )
    return out


def _status(m: ChatMessage, op: Run | None) -> str:
    if m.role != "assistant" or op is None:
        return m.status
    if op.status in RunStatus.ACTIVE or op.status == RunStatus.STOPPED and op.outcome is None:
        return MessageStatus.RUNNING if m.status == MessageStatus.RUNNING else m.status
    outcome = op.outcome or op.status
    return {
        RunStatus.SUCCEEDED: MessageStatus.COMPLETE,
        RunStatus.CANCELLED: MessageStatus.CANCELLED,
        RunStatus.FAILED: MessageStatus.FAILED,
    }.get(outcome, m.status)


def view(conv: Conversation) -> dict[str, Any]:
    return {
        "id": conv.id,
        "title": conv.title,
        "scope": conv.scope,
        "created_at": conv.created_at.isoformat(),
        "updated_at": conv.updated_at.isoformat(),
    }
