"""pdfium's lock is handed over in arrival order (issue 36.6): a thread that needs it a few
times gets it between two threads that take it back to back, not after they are done."""

from __future__ import annotations

import threading
import time

import pytest

from bayes_app.library.pdf import PDFIUM_LOCK
from bayes_app.library.pdf.fair_lock import FairRLock


def test_a_waiter_is_served_between_two_greedy_holders():
    lock = FairRLock()
    hogging_s = 3.0
    stop_at = time.monotonic() + hogging_s

    def hog() -> None:
        while time.monotonic() < stop_at:
            with lock:
                time.sleep(0.002)

    hogs = [threading.Thread(target=hog) for _ in range(2)]
    for h in hogs:
        h.start()
    time.sleep(0.1)
    started = time.monotonic()
    for _ in range(50):
        with lock:
            pass
    took = time.monotonic() - started
    for h in hogs:
        h.join()
    assert took < hogging_s - 1.0, took  # served in turn, long before the hogs stop


def test_reentrant_and_owned():
    lock = FairRLock()
    with lock, lock:
        assert not _other_thread_gets(lock)
    assert _other_thread_gets(lock)
    with pytest.raises(RuntimeError):
        lock.release()
    assert isinstance(PDFIUM_LOCK, FairRLock)


def _other_thread_gets(lock: FairRLock) -> bool:
    out: list[bool] = []
    t = threading.Thread(target=lambda: out.append(lock.acquire(timeout=0.2) and (lock.release() or True)))
    t.start()
    t.join()
    return out[0]
