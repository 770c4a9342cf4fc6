"""Fair ingestion (issue 36.6): one account's uploads cannot take every worker thread.

Two kinds of leased slots in Redis, shared by every worker process:
- per owner: at most `per_owner` of an owner's documents are read at once (BAYES_INGEST_PER_USER);
- large documents: at most `large` files over `large_bytes` are read at once, whoever owns them
  (BAYES_INGEST_LARGE_SLOTS, BAYES_INGEST_LARGE_MB), so small documents always find a thread.
A message that finds no slot goes back to the queue for a moment (jobs.middleware.FairShare).
A slot is a lease: a worker that dies loses it after LEASE_S.

`queue_positions` says where each waiting document stands under that rule.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import redis
from sqlmodel import Session, col, select

from bayes_app.models import DocStatus, Document

LEASE_S = 60.0
OWNER_KEY = "bayes:ingest-slots:owner:{}"
LARGE_KEY = "bayes:ingest-slots:large"

# KEYS[1] slots; ARGV holder, limit, now, lease. 1 when the holder has (or now took) a slot.
_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[3] + ARGV[4], ARGV[1])
  return 1
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3] + ARGV[4], ARGV[1])
  redis.call('EXPIRE', KEYS[1], math.ceil(ARGV[4]) * 2)
  return 1
end
return 0
"""


@dataclass(frozen=True)
class Claim:
    """Who a piece of ingestion work is for, and whether it counts as large."""

    owner_id: str
    large: bool


@dataclass(frozen=True)
class Limits:
    per_owner: int
    large: int
    large_bytes: int


def claim_of(db: Session, document_id: str, large_bytes: int) -> Claim | None:
    """The claim of a document's ingestion (None: the document is gone)."""
    doc = db.get(Document, document_id)
    return None if doc is None else Claim(doc.owner_id, doc.file_size > large_bytes)


def acquire(r: redis.Redis, claim: Claim, holder: str, limits: Limits, now: float | None = None) -> bool:
    """Take the slots `claim` needs for `holder` (a message id), all or none."""
    now = time.time() if now is None else now
    keys = [(OWNER_KEY.format(claim.owner_id), limits.per_owner)]
    if claim.large:
        keys.append((LARGE_KEY, limits.large))
    taken: list[str] = []
    for key, limit in keys:
        if not r.eval(_ACQUIRE, 1, key, holder, limit, now, LEASE_S):
            for k in taken:
                r.zrem(k, holder)
            return False
        taken.append(key)
    return True


def refresh(r: redis.Redis, claim: Claim, holder: str, now: float | None = None) -> None:
    """Extend the holder's leases (called while the work runs)."""
    now = time.time() if now is None else now
    for key in _keys(claim):
        r.zadd(key, {holder: now + LEASE_S}, xx=True)


def release(r: redis.Redis, claim: Claim, holder: str) -> None:
    for key in _keys(claim):
        r.zrem(key, holder)


def _keys(claim: Claim) -> list[str]:
    return [OWNER_KEY.format(claim.owner_id), *([LARGE_KEY] if claim.large else [])]


def queue_positions(db: Session, owner_id: str, per_owner: int) -> dict[str, int]:
    """document id → its place in the queue (1 = next) for the owner's waiting documents: the
    owner's own documents queued before it, plus, of each other owner's documents queued before
    it, at most `per_owner` (fair scheduling lets no owner take more threads than that)."""
    rows = db.exec(
        select(Document.id, Document.owner_id, Document.updated_at)
        .where(Document.status == DocStatus.QUEUED)
        .order_by(col(Document.updated_at), col(Document.id))
    ).all()
    ahead: Counter[str] = Counter()
    out: dict[str, int] = {}
    for doc_id, owner, _at in rows:
        if owner == owner_id:
            out[doc_id] = 1 + ahead[owner_id] + sum(min(n, per_owner) for o, n in ahead.items() if o != owner_id)
        ahead[owner] += 1
    return out
