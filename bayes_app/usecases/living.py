"""Living maps use cases: a freshly indexed paper is noted and batched; a batch becomes one
update run per relevant watching map; the user watches a map or not, sees the badge, and accepts
an update proposal in full or in part (then a crowded theme gets a split proposal)."""

from __future__ import annotations

import logging
import time
from typing import Any

import redis
from sqlmodel import select

from bayes_app.credits.pricing import display_credits
from bayes_app.db import session_scope
from bayes_app.maps import arrivals, crowding, proposals, updates
from bayes_app.maps import runs as map_runs
from bayes_app.maps.access import Role, _touch, acting_as, authorize
from bayes_app.maps.errors import MapError
from bayes_app.models import Chunk, Document
from bayes_app.redis_client import get_redis
from bayes_app.runs.service import RunRequestError
from bayes_app.settings import get_settings
from bayes_app.usecases import queue, runs
from bayes_app.usecases.schemas.maps import ProposalOut

log = logging.getLogger("bayes.app.living")


def note_indexed(document_id: str) -> None:
    """A paper finished indexing: add it to its owner's pending batch, scheduling the batch
    when it is the first one (never fails the ingestion: a lost hint costs one proposal)."""
    try:
        with session_scope() as db:
            doc = db.get(Document, document_id)
            if doc is None or not arrivals.watches_any(db, doc.owner_id):
                return
            owner_id = doc.owner_id
        s = get_settings()
        if arrivals.note_indexed(get_redis(), owner_id, document_id, s.living_batch_max_s + s.living_batch_s + 60):
            queue.get().living_batch(owner_id, time.time(), s.living_batch_s)
    except Exception:
        log.exception("could not note the new paper %s for living maps", document_id)


def propose_updates(owner_id: str, started_at: float) -> list[str]:
    """The owner's batch: wait while papers are still indexing (up to BAYES_LIVING_BATCH_MAX_S),
    then start one update run per watching map the batch is relevant to. Returns the run ids."""
    from bayes_app.agents.kinds.update_map import embed_texts, paper_vectors

    s = get_settings()
    r = get_redis()
    with session_scope() as db:
        busy = arrivals.still_indexing(db, owner_id)
    if busy and time.time() - started_at < s.living_batch_max_s:
        queue.get().living_batch(owner_id, started_at, s.living_batch_s)
        return []
    batch = arrivals.take_batch(r, owner_id)
    if not batch:
        return []

    def vectors_of(doc_id: str) -> Any:
        with session_scope() as db2:
            texts = dict(db2.exec(select(Chunk.id, Chunk.text).where(Chunk.document_id == doc_id)).all())
        return paper_vectors(doc_id, texts)[1]

    with session_scope() as db:
        found = arrivals.relevant_maps(db, owner_id, batch, vectors_of, embed_texts, s.living_relevance_floor)
    started = []
    busy_docs: set[str] = set()
    for map_id, hits in found.items():
        try:
            started.append(_start_update(owner_id, map_id, [h["id"] for h in hits]))
        except RunRequestError as err:
            if err.status == 409 and err.code != "model_unpriced":  # a run is on the map: next batch
                busy_docs.update(h["id"] for h in hits)
            else:
                log.warning("no update run on map %s: %s", map_id, err)
    if busy_docs:
        arrivals.put_back(r, owner_id, sorted(busy_docs))
        if arrivals.note_indexed(r, owner_id, sorted(busy_docs)[0], s.living_batch_max_s + s.living_batch_s + 60):
            queue.get().living_batch(owner_id, time.time(), s.living_batch_s)
    return started


def _start_update(owner_id: str, map_id: str, document_ids: list[str]) -> str:
    s = get_settings()
    with session_scope() as db:
        op = map_runs.start_map_run(
            db,
            owner_id,
            "update_map",
            map_id,
            model=s.model_default,
            output_tokens=s.run_reserve_output_tokens,
            role_models=s.role_models(),
            document_ids=document_ids,
        )
        op_id, status = op.id, op.status
    runs.submit(op_id, status)
    try:
        map_runs.announce_started(get_redis(), map_id, op_id)
    except redis.RedisError:
        log.warning("could not announce run %s on its map", op_id)
    return op_id


def set_watch(user_id: str, map_id: str, watch: bool) -> bool:
    """Turn "Watch for new papers" on or off for the owner's map (MapNotFound for a non-member,
    403 `forbidden_role` for a member: new papers arrive in the owner's library)."""
    with session_scope() as db:
        m = authorize(db, user_id, map_id, Role.OWNER)
        m.watch_new_papers = bool(watch)
        db.add(m)
        _touch(db, map_id)
        return m.watch_new_papers


def cost_words(charged: int | None) -> str:
    """What an update proposal's run cost, in words (micro-credits; None: not settled yet)."""
    return "cost not settled yet" if charged is None else f"cost {display_credits(charged)} credits"


def accept_update(user_id: str, map_id: str, proposal_id: str, items: list[int] | None) -> ProposalOut:
    """Accept some (`items`: their numbers) or all (None) of an update proposal, as one undoable
    edit; a theme it leaves crowded then gets a split proposal."""
    if items is not None and (not isinstance(items, list) or not all(type(i) is int for i in items)):
        raise MapError("bad_items", "items must be a list of item numbers.", 400)
    with session_scope() as db, acting_as(user_id):
        m = authorize(db, user_id, map_id, Role.EDITOR)
        p = proposals.get_pending(db, m.owner_id, map_id, proposal_id)
        if p.kind != updates.UPDATE:
            raise MapError("not_an_update", "Only an update proposal is accepted item by item.", 400)
        view, _touched = updates.accept_update(db, p, items)
        out = ProposalOut.model_validate(view)
    with session_scope() as db:
        crowding.propose_splits(db, map_id, get_settings().split_threshold)
    return out
