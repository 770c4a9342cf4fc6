"""Starting, cancelling, settling and reading runs: the domain side of the API and actors.

Redis and the broker are passed in as callables so this stays testable without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from sqlmodel import Session

from bayes_app.credits import ledger, pricing
from bayes_app.models import Operation, RunStatus, new_id
from bayes_app.runs import control, events
from bayes_app.runs import lifecycle as lc

KINDS = ("ask",)
MAX_PROMPT_CHARS = 8_000


class RunRequestError(ValueError):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def estimate_for(db: Session, model: str, prompt_tokens: int, output_tokens: int) -> int:
    """The reserve for one run: its prompt plus the output budget at the model's price."""
    return pricing.cost_micro(pricing.get_price(db, model), prompt_tokens, 0, output_tokens)


def start_run(db: Session, owner_id: str, kind: str, prompt: str, model: str,
              output_tokens: int, scope: dict[str, Any] | None = None,
              conversation_id: str | None = None, edit_message_id: str | None = None,
              role_models: dict[str, str] | None = None) -> Operation:
    """Validate, reserve and create a QUEUED run (the caller enqueues it).

    For "ask": the question and an answer slot are appended to the conversation (a new one
    when `conversation_id` is None; `scope` pins it), in the same transaction as the run.
    `edit_message_id` first rewinds the conversation to that question (edit and re-ask).
    `role_models` names the model of each role other than the main one; each needs a price.

    Raises RunRequestError: 400 bad input, 402 insufficient credits, 404 unknown
    conversation, 409 model unpriced or a conversation still answering.
    """
    from bayes_app.chat import conversations as chat
    from bayes_app.llm.tokens import count_tokens

    if kind not in KINDS:
        raise RunRequestError(400, "bad_kind", f"Unknown run kind {kind!r}; use one of {', '.join(KINDS)}.")
    prompt = (prompt or "").strip()
    if not prompt:
        raise RunRequestError(400, "missing_fields", "The prompt is empty.")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise RunRequestError(400, "too_long", f"The prompt is longer than {MAX_PROMPT_CHARS} characters.")
    try:
        # the prompt + up to 7 passages of ~300 tokens + instructions + history, per model call
        estimate = estimate_for(db, model, count_tokens(prompt) + 6_000, output_tokens)
        for role_model in set((role_models or {}).values()) - {model}:
            pricing.get_price(db, role_model)  # PriceMissing: refused before anything is written
        pinned = chat.normalize_scope(db, owner_id, scope)
        if conversation_id:
            conv = chat.get_owned(db, owner_id, conversation_id)
            if conv is None:
                raise chat.ChatError(404, "not_found", "No such conversation.")
            if chat.active_runs(db, conv.id):
                raise chat.ChatError(409, "conversation_busy",
                                     "This conversation is still answering; stop it or wait.")
            if scope is not None:
                conv.scope = pinned
            if edit_message_id:
                chat.rewind(db, conv, edit_message_id)
        else:
            conv = chat.create(db, owner_id, prompt, pinned)
        question, answer = chat.begin_turn(db, conv, prompt)
        op_id = new_id()
        answer.run_id = op_id
        db.add(answer)
        payload: dict[str, Any] = {"prompt": prompt, "conversation_id": conv.id,
                                   "question_id": question.id, "answer_id": answer.id,
                                   "models": dict(role_models or {})}
        title = f"Ask: {' '.join(prompt.split())}"
        return lc.create_operation(db, owner_id, kind, title, estimate, model, input=payload,
                                   resource=("conversation", conv.id), op_id=op_id)
    except chat.ChatError as err:
        db.rollback()
        raise RunRequestError(err.status, err.code, err.message) from None
    except pricing.PriceMissing as err:
        raise RunRequestError(409, "model_unpriced", str(err)) from None
    except ledger.InsufficientCredits as err:
        raise RunRequestError(402, "insufficient_credits", str(err)) from None


def get_owned(db: Session, owner_id: str, op_id: str) -> Operation | None:
    """The run if it exists and belongs to `owner_id` (else None: answer 404)."""
    op = db.get(Operation, op_id, populate_existing=True)
    return op if op is not None and op.owner_id == owner_id else None


def view(db: Session, op: Operation) -> dict[str, Any]:
    return {
        "id": op.id, "kind": op.kind, "title": op.title, "status": op.status,
        "outcome": op.outcome, "outcome_reason": op.outcome_reason, "model": op.model,
        "attempt": op.attempt, "reserved_credits": op.reserved_credits,
        "charged_credits": op.charged_credits,
        "created_at": op.created_at.isoformat() if op.created_at else None,
        "started_at": op.started_at.isoformat() if op.started_at else None,
        "cancel_requested_at": op.cancel_requested_at.isoformat() if op.cancel_requested_at else None,
        "stopped_at": op.stopped_at.isoformat() if op.stopped_at else None,
        "finalized_at": op.finalized_at.isoformat() if op.finalized_at else None,
        "usage": lc.usage_totals(db, op.id),
    }


def cancel_run(sessions: Callable[[], Session], r: redis.Redis, op_id: str,
               reason: str = lc.USER_CANCEL) -> bool:
    """Record the cancel in the DB, set + publish the abort flag. Idempotent.

    True when the run had already stopped (nothing to cancel)."""
    with sessions() as db:
        already_stopped = lc.request_cancel(db, op_id, reason)
    if not already_stopped:
        control.request_abort(r, op_id, reason)
    return already_stopped


def cancel_resource_runs(sessions: Callable[[], Session], r: redis.Redis, resource_type: str,
                         resource_id: str, reason: str = lc.RESOURCE_DELETED) -> list[str]:
    """Cancel every active run working on a resource (e.g. a deleted mindmap); the caller
    enqueues the finalizer for the returned ids (or calls `settle`)."""
    from sqlmodel import col, select

    with sessions() as db:
        ids = list(db.exec(select(Operation.id).where(
            Operation.resource_type == resource_type, Operation.resource_id == resource_id,
            col(Operation.status).in_(RunStatus.ACTIVE))).all())
    for op_id in ids:
        cancel_run(sessions, r, op_id, reason)
    return ids


DONE_RETRY_S = 15.0  # how long `settle` keeps trying to append `done` while Redis is away


def settle(sessions: Callable[[], Session], r: redis.Redis, op_id: str) -> lc.FinalizeResult:
    """Finalize the run if it can be now, and make sure its stream ends with `done`.

    A run may be finalized while Redis is away (it had already stopped); appending its
    `done` is then retried for up to DONE_RETRY_S (a restart), else the error is raised
    (the event API still ends a settled run's stream with a `done` read from the DB)."""
    result = lc.finalize(sessions, op_id, lambda: control.lease_alive(r, op_id))
    if result in ("finalized", "noop"):
        with sessions() as db:
            op = db.get(Operation, op_id, populate_existing=True)
            if op is not None and op.finalized_at is not None:
                data = lc.terminal_event(op)["data"]
                control.retry_for(lambda: events.append_done(r, op_id, data), DONE_RETRY_S,
                                  f"append done of {op_id}")
    return result
