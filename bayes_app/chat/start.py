"""Starting an Ask run: the question and an answer slot join the conversation in the same
transaction as the run's reserve (the caller enqueues it)."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from bayes_app.chat import conversations as chat
from bayes_app.credits import ledger, pricing
from bayes_app.llm.tokens import count_tokens
from bayes_app.models import Conversation, Run, new_id
from bayes_app.runs import lifecycle as lc
from bayes_app.runs.service import RunRequestError, estimate_for

KINDS = ("ask",)
MAX_PROMPT_CHARS = 8_000


def start_ask_run(
    db: Session,
    owner_id: str,
    kind: str,
    prompt: str,
    model: str,
    output_tokens: int,
    scope: dict[str, Any] | None = None,
    conversation_id: str | None = None,
    edit_message_id: str | None = None,
    role_models: dict[str, str] | None = None,
) -> Run:
    """Validate, reserve and create a QUEUED run (the caller enqueues it).

    For "ask": the question and an answer slot are appended to the conversation (a new one
    when `conversation_id` is None; `scope` pins it), in the same transaction as the run.
    `edit_message_id` first rewinds the conversation to that question (edit and re-ask).
    `role_models` names the model of each role other than the main one; each needs a price.

    Raises RunRequestError: 400 bad input, 402 insufficient credits, 404 unknown
    conversation, 409 model unpriced or a conversation still answering.
    """
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
        for role_model in sorted(set((role_models or {}).values()) - {model}):
            pricing.get_price(db, role_model)  # PriceMissing: refused before anything is written
        conv = _conversation(db, owner_id, prompt, scope, conversation_id, edit_message_id)
        question, answer = chat.begin_turn(db, conv, prompt)
        op_id = new_id()
        answer.run_id = op_id
        db.add(answer)
        payload: dict[str, Any] = {
            "prompt": prompt,
            "conversation_id": conv.id,
            "question_id": question.id,
            "answer_id": answer.id,
            "models": dict(role_models or {}),
        }
        title = f"Ask: {' '.join(prompt.split())}"
        return lc.create_operation(
            db, owner_id, kind, title, estimate, model, input=payload, resource=("conversation", conv.id), op_id=op_id
        )
    except chat.ChatError as err:
        db.rollback()
        raise RunRequestError(err.status, err.code, err.message) from None
    except pricing.PriceMissing as err:
        raise RunRequestError(409, "model_unpriced", str(err)) from None
    except ledger.InsufficientCredits as err:
        raise RunRequestError(402, "insufficient_credits", str(err)) from None


def _conversation(
    db: Session,
    owner_id: str,
    prompt: str,
    scope: dict[str, Any] | None,
    conversation_id: str | None,
    edit_message_id: str | None,
) -> Conversation:
    """The conversation the question joins: a new one, or the owner's (re-scoped when `scope`
    is given, rewound to `edit_message_id`); ChatError 404 unknown, 409 still answering."""
    pinned = chat.normalize_scope(db, owner_id, scope)
    if not conversation_id:
        return chat.create(db, owner_id, prompt, pinned)
    conv = chat.get_owned(db, owner_id, conversation_id)
    if conv is None:
        raise chat.ChatError(404, "not_found", "No such conversation.")
    if chat.active_runs(db, conv.id):
        raise chat.ChatError(409, "conversation_busy", "This conversation is still answering; stop it or wait.")
    if scope is not None:
        conv.scope = pinned
    if edit_message_id:
        chat.rewind(db, conv, edit_message_id)
    return conv
