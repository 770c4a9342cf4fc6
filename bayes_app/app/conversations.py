"""Conversation use cases that span the database and the job queue."""

from __future__ import annotations

from bayes_app.app import runs
from bayes_app.db import sessions
from bayes_app.chat import conversations as chat
from bayes_app.db import session_scope
from bayes_app.redis_client import get_redis
from bayes_app.runs import service


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
