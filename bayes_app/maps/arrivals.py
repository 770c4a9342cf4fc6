"""New papers arriving: batched per user in Redis, then matched against the user's watching maps.

    note_indexed(r, owner, doc) -> bool     remember a freshly indexed paper; True: schedule a batch
    take_batch(r, owner) -> [doc ids]       the papers noted since the last batch (emptied at once)
    relevant_maps(db, owner, docs, ...)     map id → the papers over the relevance floor for it

One pending set and one "batch scheduled" flag per user: the first paper of a batch schedules
ONE delayed message; every paper indexed before it fires joins that batch, so a Zotero sync of
200 items gives one update proposal per map, not 200 runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import redis
from sqlmodel import Session, col, select

from bayes_app.maps import living
from bayes_app.maps.access import _nodes
from bayes_app.maps.updates import proposed_documents
from bayes_app.models import Citation, DocStatus, Document, DocumentCollection, Mindmap
from bayes_app.zotero.scopes import with_subcollections

PENDING_TTL_S = 7 * 86_400


def _pending(owner_id: str) -> str:
    return f"living:{owner_id}:pending"


def _flag(owner_id: str) -> str:
    return f"living:{owner_id}:scheduled"


def note_indexed(r: redis.Redis, owner_id: str, document_id: str, flag_ttl_s: float) -> bool:
    """Add a freshly indexed paper to the owner's pending set; True when no batch is scheduled
    yet (the caller schedules one). The flag outlives the batch delay by `flag_ttl_s` so a lost
    message cannot block batching for long."""
    pipe = r.pipeline()
    pipe.sadd(_pending(owner_id), document_id)
    pipe.expire(_pending(owner_id), PENDING_TTL_S)
    pipe.set(_flag(owner_id), "1", nx=True, ex=max(1, int(flag_ttl_s)))
    return bool(pipe.execute()[2])


def take_batch(r: redis.Redis, owner_id: str) -> list[str]:
    """The papers noted since the last batch, removed from the pending set atomically; the
    "scheduled" flag is cleared so the next arrival schedules a new batch."""
    pipe = r.pipeline()  # MULTI/EXEC: a paper noted meanwhile lands in this batch or the next
    pipe.smembers(_pending(owner_id))
    pipe.delete(_pending(owner_id))
    pipe.delete(_flag(owner_id))
    members = pipe.execute()[0]
    return sorted(m.decode() if isinstance(m, bytes) else m for m in members)


def put_back(r: redis.Redis, owner_id: str, document_ids: Sequence[str]) -> None:
    """Return papers to the pending set (their map was busy; the next batch takes them)."""
    if document_ids:
        r.sadd(_pending(owner_id), *document_ids)
        r.expire(_pending(owner_id), PENDING_TTL_S)


def still_indexing(db: Session, owner_id: str) -> int:
    """How many of the owner's papers are still queued or being indexed (a sync in progress)."""
    rows = db.exec(select(Document.id).where(Document.owner_id == owner_id, col(Document.status).in_(DocStatus.ACTIVE)))
    return len(list(rows))


def watches_any(db: Session, owner_id: str) -> bool:
    """Whether the owner has a map with "Watch for new papers" on (else nothing to batch)."""
    q = select(Mindmap.id).where(Mindmap.owner_id == owner_id, col(Mindmap.watch_new_papers).is_(True))
    return db.exec(q).first() is not None


VectorsOf = Callable[[str], np.ndarray]  # document id → its passages' unit vectors
EmbedTexts = Callable[[list[str]], np.ndarray]  # map texts → unit vectors


def relevant_maps(
    db: Session,
    owner_id: str,
    document_ids: Sequence[str],
    vectors_of: VectorsOf,
    embed_texts: EmbedTexts,
    floor: float,
) -> dict[str, list[dict[str, Any]]]:
    """For each of the owner's maps with "Watch for new papers" on: the indexed papers of
    `document_ids` whose passages match the map's question or themes at least `floor`
    (papers the map already cites, or an earlier update already proposed, are left out; a map
    scoped to a collection takes only the papers in it), each as {"id", "score"}. Maps no paper
    reaches are left out."""
    docs = list(
        db.exec(
            select(Document).where(
                col(Document.id).in_(list(document_ids)),
                Document.owner_id == owner_id,
                Document.status == DocStatus.INDEXED,
            )
        )
    )
    maps = list(db.exec(select(Mindmap).where(Mindmap.owner_id == owner_id, col(Mindmap.watch_new_papers).is_(True))))
    if not docs or not maps:
        return {}
    vecs = {d.id: vectors_of(d.id) for d in docs}
    out: dict[str, list[dict[str, Any]]] = {}
    for m in maps:
        texts = living.map_texts(_nodes(db, m.id))
        if not texts:
            continue
        text_vecs = embed_texts(texts)
        skip = proposed_documents(db, m.id) | set(
            db.exec(select(Citation.document_id).where(Citation.map_id == m.id)).all()
        )
        if m.collection_id:  # a scoped map researches only its collection (and its sub-collections)
            scope = with_subcollections(db, owner_id, [m.collection_id]) or []
            inside = db.exec(
                select(DocumentCollection.document_id).where(col(DocumentCollection.collection_id).in_(scope))
            )
            skip |= {d.id for d in docs} - set(inside.all())
        hits = []
        for d in docs:
            if d.id in skip:
                continue
            score = living.relevance(vecs[d.id], text_vecs)
            if score >= floor:
                hits.append({"id": d.id, "score": round(score, 4)})
        if hits:
            out[m.id] = hits
    return out
