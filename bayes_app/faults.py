"""Fault injection for chaos tests: make the first N passes through a named point fail
with a real database error. Off unless BAYES_FAULTS is set (never set it in production).

BAYES_FAULTS="finalize_settle:1" makes the first settle transaction of each process fail,
after it wrote its spend and release rows and before it commits, by running a statement
the database rejects (so the driver raises its own error and the transaction is aborted,
exactly as a lost connection or a serialization failure would).
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import text
from sqlmodel import Session

from bayes_app.settings import get_settings

log = logging.getLogger("bayes.faults")
_lock = threading.Lock()
_counts: dict[str, int] = {}


def _budget(point: str) -> int:
    for item in get_settings().faults_raw.split(","):
        name, _, times = item.strip().partition(":")
        if name == point:
            try:
                return int(times or 1)
            except ValueError:
                return 0
    return 0


def should_fail(point: str) -> bool:
    """True for the first `budget` calls at `point` in this process."""
    budget = _budget(point)
    if budget <= 0:
        return False
    with _lock:
        seen = _counts.get(point, 0)
        _counts[point] = seen + 1
    return seen < budget


def db_fault(db: Session, point: str) -> None:
    """Raise a genuine database error inside `db`'s transaction when `point` is armed."""
    if should_fail(point):
        log.warning("injected database fault at %s", point)
        db.exec(text("SELECT * FROM bayes_injected_fault"))  # type: ignore[call-overload]
