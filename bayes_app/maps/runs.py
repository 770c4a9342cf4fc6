"""Starting runs on a map (one operation per run, titled "<kind> · <map title>", resource =
the map, so deleting the map cancels them with `resource_deleted`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from sqlmodel import Session, col, select

from bayes_app.credits import ledger, pricing
from bayes_app.errors import NotFound
from bayes_app.maps import service
from bayes_app.maps.access import authorize, role_of
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.models import MapNode, Mindmap, NodeKind, Role, Run, RunStatus
from bayes_app.runs import kinds
from bayes_app.runs import lifecycle as lc
from bayes_app.runs.kinds import RunKind
from bayes_app.runs.service import RunRequestError, cancel_resource_runs, estimate_for
from bayes_app.sharing.collections import scope_owner

RESOURCE = "mindmap"
MAX_PROMPT_CHARS = 8_000
UPDATE_KIND = "update_map"  # the one kind that takes the new papers (document_ids)
MAX_UPDATE_PAPERS = 200
COLLECTION_NOT_SHARED = "This map's collection is no longer shared with you."


def map_kind(name: Any) -> RunKind | None:
    """The registered map run kind called `name` (None when there is none)."""
    kind = kinds.get(name) if isinstance(name, str) else None
    return kind if kind is not None and kind.resource == RESOURCE else None


def started_key(map_id: str) -> str:
    """Redis Stream with one entry per run started on the map: open editors block on it, so a
    run started elsewhere (another tab, the API) is followed at once, not at the next poll."""
    return f"map:{map_id}:started"


def announce_started(r: redis.Redis, map_id: str, op_id: str) -> None:
    """Wake the map's open editors (a hint only: they read the run from the database)."""
    key = started_key(map_id)
    r.xadd(key, {"run": op_id}, maxlen=20, approximate=True)
    r.expire(key, 86_400)


def announce_edit(r: redis.Redis, map_id: str) -> None:
    """Wake the map's open editors after an edit (another user's or tab's page re-reads the map
    now instead of at its next revision poll); a hint only, like `announce_started`."""
    key = started_key(map_id)
    r.xadd(key, {"edit": "1"}, maxlen=20, approximate=True)
    r.expire(key, 86_400)


def run_title(kind: str, map_title: str) -> str:
    """The history row of a map run: its kind and the map ("Research · PaSa")."""
    return f"{kinds.label(kind)} · {map_title}"


def start_map_run(
    db: Session,
    owner_id: str,
    kind: str,
    mindmap_id: Any,
    node_id: Any = None,
    prompt: Any = None,
    *,
    model: str,
    output_tokens: int,
    role_models: dict[str, str] | None = None,
    document_ids: Any = None,
) -> Run:
    """Validate, reserve and create a QUEUED map run (the caller enqueues it). `role_models`
    names the model of each agent role (planner, researcher, critic, writer); each needs a price.

    Raises RunRequestError: 400 bad input, 404 map/node not found, 402 insufficient
    credits, 409 model unpriced or a run already active on the map."""
    spec, prompt = _checked_request(kind, mindmap_id, node_id, prompt)
    try:  # an editor's run: charged to the editor (`owner_id`), researching the map owner's library
        m = authorize(db, owner_id, mindmap_id, Role.EDITOR)
        node = service.get_node(db, m.owner_id, m.id, node_id) if node_id else None
    except MapNotFound as err:
        raise RunRequestError(404, "not_found", str(err)) from None
    except MapError as err:
        raise RunRequestError(err.status, err.code, err.message) from None
    _check_node(db, spec, kind, node)
    _check_input(db, spec, kind, m, prompt, document_ids)
    payload = _payload(db, m, node, prompt, kind, role_models, document_ids)
    try:
        for role_model in sorted(set((role_models or {}).values()) - {model}):
            pricing.get_price(db, role_model)  # PriceMissing: refused before anything is written
        estimate = estimate_for(db, model, spec.prompt_budget, output_tokens * 4)
        return lc.create_operation(
            db, owner_id, kind, run_title(kind, m.title), estimate, model, input=payload, resource=(RESOURCE, m.id)
        )
    except pricing.PriceMissing as err:
        raise RunRequestError(409, "model_unpriced", str(err)) from None
    except ledger.InsufficientCredits as err:
        raise RunRequestError(402, "insufficient_credits", str(err)) from None


def _checked_request(kind: str, mindmap_id: Any, node_id: Any, prompt: Any) -> tuple[RunKind, str]:
    """The run kind and the prompt, whitespace collapsed; RunRequestError 400 for bad fields."""
    spec = map_kind(kind)
    if spec is None:
        raise RunRequestError(400, "bad_kind", f"Unknown map run kind {kind!r}.")
    if not isinstance(mindmap_id, str) or not mindmap_id:
        raise RunRequestError(400, "missing_fields", "mindmap_id is required for map runs.")
    if node_id is not None and not isinstance(node_id, str):
        raise RunRequestError(400, "bad_field", "node_id must be a string.")
    if prompt is not None and not isinstance(prompt, str):
        raise RunRequestError(400, "bad_field", "prompt must be a string.")
    prompt = " ".join((prompt or "").split())
    if len(prompt) > MAX_PROMPT_CHARS:
        raise RunRequestError(400, "too_long", f"The prompt is longer than {MAX_PROMPT_CHARS} characters.")
    return spec, prompt


def _check_node(db: Session, spec: RunKind, kind: str, node: MapNode | None) -> None:
    """The node the run is about, when its kind needs one (RunRequestError 400 otherwise)."""
    if spec.needs_node and node is None:
        raise RunRequestError(400, "missing_fields", f"node_id is required for {kind} runs.")
    if kind == "counter" and node is not None and node.kind == NodeKind.QUESTION:
        raise RunRequestError(400, "bad_target", "Counter-evidence needs a claim, not the root question.")
    if kind == "check_support" and node is not None:
        from bayes_app.maps.citations import support_problem

        problem = support_problem(db, node)
        if problem is not None:
            raise RunRequestError(400, problem.code, problem.message)


def _check_input(db: Session, spec: RunKind, kind: str, m: Mindmap, prompt: str, document_ids: Any) -> None:
    """The new papers of an update run, the message of a run that needs one, the question of a
    map build (RunRequestError 400 when missing)."""
    if kind == UPDATE_KIND and (
        not isinstance(document_ids, list)
        or not 0 < len(document_ids) <= MAX_UPDATE_PAPERS
        or not all(isinstance(d, str) for d in document_ids)
    ):
        raise RunRequestError(400, "missing_fields", "document_ids (the new papers) is required for update runs.")
    if spec.needs_prompt and not prompt:
        raise RunRequestError(400, "missing_fields", "The message is empty.")
    if kind == "build_map" and not prompt and not service.root_of(db, m.id).title.strip():
        raise RunRequestError(400, "missing_fields", "Give the research question (prompt).")


def _payload(
    db: Session,
    m: Mindmap,
    node: MapNode | None,
    prompt: str,
    kind: str,
    role_models: dict[str, str] | None,
    document_ids: Any,
) -> dict[str, Any]:
    """The run's input: the map, the models, whose library it searches, and what it is about."""
    payload: dict[str, Any] = {"mindmap_id": m.id, "models": dict(role_models or {}), "library_owner": m.owner_id}
    if m.collection_id:  # a scoped map researches only its collection, in the collection owner's library
        try:
            payload["search_owner"] = scope_owner(db, m.owner_id, [m.collection_id])
        except NotFound:
            raise RunRequestError(409, "collection_not_shared", COLLECTION_NOT_SHARED) from None
        payload["collection_id"] = m.collection_id
    if node is not None:
        payload["node_id"] = node.id
    if prompt:
        payload["prompt"] = prompt
    if kind == UPDATE_KIND:
        payload["document_ids"] = list(document_ids)
    return payload


def map_runs(db: Session, owner_id: str, map_id: str, active_only: bool = False) -> list[Run]:
    """The runs `owner_id` started on the map, newest first (404 via MapNotFound for a non-member)."""
    role_of(db, owner_id, map_id)
    q = select(Run).where(Run.resource_type == RESOURCE, Run.resource_id == map_id, Run.owner_id == owner_id)
    if active_only:
        q = q.where(col(Run.status).in_(RunStatus.ACTIVE))
    return list(db.exec(q.order_by(col(Run.created_at).desc())))


def delete_map(sessions: Callable[[], Session], r: redis.Redis, owner_id: str, map_id: str) -> list[str]:
    """Cancel the map's active runs (`resource_deleted`), then delete the map. Returns the
    cancelled run ids: the caller settles them (or enqueues the finalizer)."""
    with sessions() as db:
        service.get_map(db, owner_id, map_id)
    ids = cancel_resource_runs(sessions, r, RESOURCE, map_id, lc.RESOURCE_DELETED)
    with sessions() as db:
        service.delete_map(db, owner_id, map_id)
    return ids


# how a run's end reads under the map, in plain words (never a raw reason code)
OUTCOME_WORDS = {
    "library_empty": "Your library is empty — add papers on the Library page first.",
    "no_passages": "Nothing in your library addresses this question. Try other words or add papers on the topic.",
    "no_usable_claims": "No claims: nothing in the passages found answers the question's aspects. "
    "Try other words or add papers on the topic.",
    "lease_lost": "The run was interrupted (its worker stopped); start it again.",
    "worker_lost": "The run was interrupted (its worker stopped); start it again.",
}


def outcome_line(status: str, reason: str | None) -> str:
    """A finished run's outcome as the map shows it: the status when it succeeded, else why in words."""
    if status == RunStatus.SUCCEEDED or not reason:
        return status
    if status != RunStatus.FAILED:
        return f"{status} ({reason})"  # CANCELLED (user): what stopped it
    if reason in OUTCOME_WORDS:
        return OUTCOME_WORDS[reason]
    if reason.startswith("provider_error"):
        return "The model call failed; try again later."
    if reason.startswith("internal_error"):
        return "The run failed because of an error on our side."
    return f"The run failed ({reason.replace('_', ' ')})."
