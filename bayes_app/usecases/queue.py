"""The job queue the use cases hand work to, injected by the process that serves them.

Each process wires Dramatiq's queue in at start (`jobs.queue.DramatiqQueue`: the web process
in `bayes_app.api.build_api`, the worker in `jobs/__init__.py`), so nothing in the
application layer imports the broker; tests may install their own.
"""

from __future__ import annotations

from typing import Protocol


class Queue(Protocol):
    """Where the work that leaves the request goes."""

    def run(self, op_id: str) -> None:
        """Enqueue the execution of a created run."""

    def finalize(self, op_id: str) -> None:
        """Enqueue the settlement of a stopped run a worker still holds."""

    def ingest(self, document_id: str, generation: int) -> None:
        """Enqueue the ingestion of one document version."""

    def purge(self, document_id: str, file_sha256: str | None) -> None:
        """Enqueue removing a deleted document's vectors (and its file, when given)."""

    def sync_collections(self, document_id: str) -> None:
        """Enqueue copying a document's collection membership into its vectors."""

    def sync_zotero(self, library_id: str) -> None:
        """Enqueue a sync of one Zotero library."""

    def living_batch(self, owner_id: str, started_at: float, delay_s: float) -> None:
        """Enqueue, after `delay_s`, the owner's batch of new papers (usecases.living.propose_updates)."""


_queue: Queue | None = None


def use(queue: Queue) -> None:
    """Install the queue the use cases enqueue on."""
    global _queue
    _queue = queue


def get() -> Queue:
    """The installed queue (RuntimeError when the process wired none)."""
    if _queue is None:
        raise RuntimeError("No job queue is configured (bayes_app.usecases.queue.use).")
    return _queue
