"""Starting, cancelling, settling and reading runs: the domain side of the API and actors.

Redis and the broker are passed in as callables so this stays testable without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from sqlmodel import Session

from bayes_app.credits import pricing
from bayes_app.errors import DomainError
from bayes_app.models import Run, RunStatus
from bayes_app.runs import control, events
from bayes_app.runs import lifecycle as lc


class RunRequestError(DomainError, ValueError):
    """A run that cannot be started (bad input, no price, not enough credits …)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(code, message, status)


def estimate_for(db: Session, model: str, prompt_tokens: int, output_tokens: int) -> int:
    """The reserve for one run: its prompt plus the output budget at the model's price."""
    return pricing.cost_micro(pricing.get_price(db, model), prompt_tokens, 0, output_tokens)


def get_owned(db: Session, owner_id: str, op_id: str) -> Run | None:
    """The run if it exists and belongs to `owner_id` (else None: answer 404)."""
    op = db.get(Run, op_id, populate_existing=True)
    return op if op is not None and op.owner_id == owner_id else None


def view(db: Session, op: Run) -> dict[str, Any]:
    return {
        "id": op.id,
        "kind": op.kind,
        "title": op.title,
        "status": op.status,
        "outcome": op.outcome,
        "outcome_reason": op.outcome_reason,
        "model": op.model,
        "attempt": op.attempt,
        "reserved_credits": op.reserved_credits,
        "charged_credits": op.charged_credits,
        "created_at": op.created_at.isoformat() if op.created_at else None,
        "started_at": op.started_at.isoformat() if op.started_at else None,
        "cancel_requested_at": op.cancel_requested_at.isoformat() if op.cancel_requested_at else None,
        "stopped_at": op.stopped_at.isoformat() if op.stopped_at else None,
        "finalized_at": op.finalized_at.isoformat() if op.finalized_at else None,
        "usage": lc.usage_totals(db, op.id),
    }


def cancel_run(sessions: Callable[[], Session], r: redis.Redis, op_id: str, reason: str = lc.USER_CANCEL) -> bool:
    """Record the cancel in the DB, set + publish the abort flag. Idempotent.

    True when the run had already stopped (nothing to cancel)."""
    with sessions() as db:
        already_stopped = lc.request_cancel(db, op_id, reason)
    if not already_stopped:
        control.request_abort(r, op_id, reason)
    return already_stopped


def cancel_resource_runs(
    sessions: Callable[[], Session],
    r: redis.Redis,
    resource_type: str,
    resource_id: str,
    reason: str = lc.RESOURCE_DELETED,
) -> list[str]:
    """Cancel every active run working on a resource (e.g. a deleted mindmap); the caller
    enqueues the finalizer for the returned ids (or calls `settle`)."""
    from sqlmodel import col, select

    with sessions() as db:
        ids = list(
            db.exec(
                select(Run.id).where(
                    Run.resource_type == resource_type,
                    Run.resource_id == resource_id,
                    col(Run.status).in_(RunStatus.ACTIVE),
                )
            ).all()
        )
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
            op = db.get(Run, op_id, populate_existing=True)
            if op is not None and op.finalized_at is not None:
                data = lc.terminal_event(op)["data"]
                control.retry_for(lambda: events.append_done(r, op_id, data), DONE_RETRY_S, f"append done of {op_id}")
    return result
