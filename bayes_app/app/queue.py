"""The job queue the use cases hand work to, injected by the process that serves them.

The web process wires Dramatiq's queue in (`jobs.runs.DramatiqRunQueue`, installed by
`bayes_app.api.build_api`); tests may install their own.
"""

from __future__ import annotations

from typing import Protocol


class RunQueue(Protocol):
    """Where started runs and runs to settle go."""

    def run(self, op_id: str) -> None:
        """Enqueue the execution of a created run."""

    def finalize(self, op_id: str) -> None:
        """Enqueue the settlement of a stopped run a worker still holds."""


_queue: RunQueue | None = None


def use(queue: RunQueue) -> None:
    """Install the queue the use cases enqueue on."""
    global _queue
    _queue = queue


def runs() -> RunQueue:
    """The installed queue (RuntimeError when the process wired none)."""
    if _queue is None:
        raise RuntimeError("No job queue is configured (bayes_app.app.queue.use).")
    return _queue
