"""Run use cases: start an Ask or a map run, stop a run, cancel the runs of a deleted resource.

Starting is "create + reserve in one transaction, then announce and enqueue"; when the
queue cannot take the run it is cancelled and settled (nothing stays reserved) and
QueueUnavailable is raised. Stopping is "cancel, then settle now or through the finalizer".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import redis

from bayes_app import registry
from bayes_app.agents.kinds import MAP_KINDS
from bayes_app.chat.start import start_ask_run
from bayes_app.db import session_scope, sessions
from bayes_app.errors import DomainError, NotFound
from bayes_app.llm.factory import is_offline
from bayes_app.maps import runs as map_runs
from bayes_app.models import Run, RunStatus
from bayes_app.redis_client import get_redis, new_async_redis
from bayes_app.runs import events, kinds, lifecycle, service
from bayes_app.runs.events import RunEvent, valid_cursor
from bayes_app.runs.follower import RunFollower
from bayes_app.runs.service import RunRequestError
from bayes_app.settings import get_settings
from bayes_app.usecases import queue
from bayes_app.usecases.schemas.runs import RunOut, RunRequest, RunStarted

# the map kinds a user starts (`update_map` is started by the living-maps batch, with its papers)
USER_MAP_KINDS = tuple(k.name for k in MAP_KINDS if k.name != map_runs.UPDATE_KIND)

log = logging.getLogger("bayes.app.runs")
# for the front doors: a run's stream events, the cursor check and a start's refusal
__all__ = ["RunEvent", "RunFollower", "RunRequestError", "follower", "valid_cursor"]


def follower(run_id: str = "", cursor: str | None = None) -> RunFollower:
    """A follower of a run's event stream from `cursor` (the live views: the HTTP event stream,
    the chat page); one-second blocking reads, so an idle batch comes at least once a second."""
    return RunFollower(new_async_redis(), run_id, cursor, block_ms=1000)


@dataclass(frozen=True)
class RunInfo:
    kind: str
    status: str
    charged_credits: int | None
    outcome_reason: str | None


def info(op_id: str) -> RunInfo | None:
    """What a live view shows of a run: kind, status, charge, why it ended (None: unknown)."""
    with session_scope() as db:
        op = db.get(Run, op_id)
        return RunInfo(op.kind, op.status, op.charged_credits, op.outcome_reason) if op else None


def view_owned(user_id: str, op_id: str) -> RunOut:
    """The run's view (status, outcome, credits, usage); NotFound unless it is the user's."""
    with session_scope() as db:
        op = service.get_owned(db, user_id, op_id)
        if op is None:
            raise NotFound("run")
        return RunOut.model_validate(service.view(db, op))


def settled_done(op_id: str) -> dict[str, Any] | None:
    """The `done` event of a settled run (its stream entry may have expired), else None."""
    with session_scope() as db:
        op = db.get(Run, op_id, populate_existing=True)
        return lifecycle.terminal_event(op) if op is not None and op.finalized_at is not None else None


def offline() -> bool:
    """Is this installation in offline mode (no model endpoint or key configured)?"""
    return is_offline()


def label(kind: str) -> str:
    """How run kind `kind` reads to a person (the registry's label: "Dive deeper")."""
    registry.register()
    return kinds.label(kind)


def all_labels() -> dict[str, str]:
    """Every run kind's name and how it reads to a person, in registration order."""
    registry.register()
    return {k.name: k.label for k in kinds.all_kinds()}


def needs_node(kind: str) -> bool:
    """Does run kind `kind` work on a node the user selects?"""
    registry.register()
    spec = kinds.get(kind)
    return spec is not None and spec.needs_node


def whole_map(kind: str) -> bool:
    """Does run kind `kind` work on the whole map (the selected node is not passed)?"""
    registry.register()
    spec = kinds.get(kind)
    return spec is not None and spec.whole_map


class QueueUnavailable(DomainError):
    """The broker could not take the run; it was cancelled and settled instead."""

    def __init__(self, op_id: str) -> None:
        super().__init__("unavailable", "The job queue is unavailable; try again.", 503)
        self.op_id = op_id


class RunNotFound(NotFound, LookupError):
    """No such run for this user."""

    def __init__(self) -> None:
        super().__init__("run")


class RunFinished(DomainError):
    """The run already ended."""

    def __init__(self, status: str) -> None:
        super().__init__("run_finished", f"The run already ended ({status}).", 409)
        self.run_status = status


def start_ask(
    user_id: str,
    kind: str,
    prompt: str,
    scope: Any = None,
    conversation_id: str | None = None,
    edit_message_id: str | None = None,
) -> RunStarted:
    """Start an Ask run (RunRequestError on refusal): its id and status, its conversation and answer."""
    settings = get_settings()
    with session_scope() as db:
        op = start_ask_run(
            db,
            user_id,
            kind,
            prompt,
            settings.model_default,
            settings.run_reserve_output_tokens,
            scope,
            conversation_id,
            edit_message_id,
            settings.role_models(),
        )
        out = RunStarted(
            id=op.id,
            status=op.status,
            conversation_id=op.input.get("conversation_id"),
            message_id=op.input.get("answer_id"),
        )
    submit(op.id, op.status)
    return out


def start_map_run(user_id: str, kind: Any, map_id: Any, node_id: Any = None, prompt: Any = None) -> RunStarted:
    """Start a map run (RunRequestError on refusal); open editors of the map are told."""
    settings = get_settings()
    with session_scope() as db:
        op = map_runs.start_map_run(
            db,
            user_id,
            kind,
            map_id,
            node_id,
            prompt,
            model=settings.model_default,
            output_tokens=settings.run_reserve_output_tokens,
            role_models=settings.role_models(),
        )
        op_id, status = op.id, op.status
    submit(op_id, status)
    try:
        map_runs.announce_started(get_redis(), map_id, op_id)
    except redis.RedisError:  # a hint only: open editors still find the run at their next poll
        log.warning("could not announce run %s on its map", op_id)
    return RunStarted(id=op_id, status=status)


def start(user_id: str, request: RunRequest) -> RunStarted:
    """Start the run a client asked for (`POST /runs`): a map kind goes to `start_map_run`
    (`mindmap_id`, `node_id`, `prompt`), anything else is an Ask question (`prompt` required;
    `scope`, `conversation_id`, `edit_message_id`). RunRequestError on a refusal."""
    kind = request.kind
    if map_runs.map_kind(kind) is not None:
        return start_map_run(user_id, kind, request.mindmap_id, request.node_id, request.prompt)
    prompt, conversation_id, edit_message_id = request.prompt, request.conversation_id, request.edit_message_id
    if not prompt:
        raise service.RunRequestError(400, "missing_fields", "Missing or empty field(s): prompt.")
    if edit_message_id and not conversation_id:
        raise service.RunRequestError(400, "bad_request", "edit_message_id needs the conversation_id.")
    scope = request.scope.model_dump() if request.scope is not None else None
    return start_ask(user_id, kind or "ask", prompt, scope, conversation_id, edit_message_id)


def submit(op_id: str, status: str) -> None:
    """Announce a just-created run on its stream and enqueue it; when that fails, cancel and
    settle it and raise QueueUnavailable."""
    try:
        events.append(get_redis(), op_id, "status", {"status": status})
        queue.get().run(op_id)
    except Exception:  # broker away: settle the run instead of leaving it queued forever
        log.exception("could not enqueue run %s", op_id)
        service.cancel_run(sessions, get_redis(), op_id, "enqueue_failed")
        service.settle(sessions, get_redis(), op_id)
        raise QueueUnavailable(op_id) from None


def stop(op_id: str) -> None:
    """Cancel a run (idempotent) and settle it, now or through the finalizer."""
    r = get_redis()
    service.cancel_run(sessions, r, op_id)
    if service.settle(sessions, r, op_id) == "wait":  # a worker is on it: it settles it
        queue.get().finalize(op_id)


def stop_owned(user_id: str, op_id: str, *, finished_ok: bool = False) -> None:
    """Stop the user's run. RunNotFound when it isn't theirs; RunFinished when it already
    ended (unless `finished_ok`: then nothing happens)."""
    with session_scope() as db:
        op = service.get_owned(db, user_id, op_id)
        if op is None:
            raise RunNotFound()
        ended = op.finalized_at is not None
        if ended and op.status != RunStatus.CANCELLED and not finished_ok:
            raise RunFinished(op.status)
    if not ended:
        stop(op_id)


def settle_cancelled(op_ids: list[str]) -> None:
    """Settle runs just cancelled because their resource went (now or through the finalizer)."""
    r = get_redis()
    for op_id in op_ids:
        if service.settle(sessions, r, op_id) == "wait":
            queue.get().finalize(op_id)
