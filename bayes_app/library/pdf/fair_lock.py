"""A re-entrant lock handed over in arrival order.

`threading.RLock` lets a thread that releases it take it straight back, so two threads reading
300-page scans page by page could keep pdfium to themselves while a 1-page upload waits for
minutes (issue 36.6). With this lock a waiting thread gets it at the next release."""

from __future__ import annotations

import threading
from collections import deque


class FairRLock:
    """Re-entrant; waiters are served first come, first served. Context manager like RLock."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._waiting: deque[int] = deque()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return True
            if self._owner is None and not self._waiting:
                self._owner, self._depth = me, 1
                return True
            if not blocking:
                return False
            self._waiting.append(me)
            if not self._cond.wait_for(
                lambda: self._owner is None and self._waiting[0] == me, None if timeout < 0 else timeout
            ):
                self._waiting.remove(me)
                self._cond.notify_all()
                return False
            self._waiting.popleft()
            self._owner, self._depth = me, 1
            return True

    def release(self) -> None:
        with self._cond:
            if self._owner != threading.get_ident():
                raise RuntimeError("cannot release a lock this thread does not hold")
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._cond.notify_all()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *_exc: object) -> None:
        self.release()
