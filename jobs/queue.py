"""The application layer's job queue (`bayes_app.usecases.queue.Queue`) on Dramatiq.

The actor modules' send functions are looked up at call time, so tests can redirect them
(e.g. `jobs.runs.enqueue_run`)."""

from __future__ import annotations


class DramatiqQueue:
    def run(self, op_id: str) -> None:
        from jobs import runs

        runs.enqueue_run(op_id)

    def finalize(self, op_id: str) -> None:
        from jobs import runs

        runs.enqueue_finalize(op_id)

    def ingest(self, document_id: str, generation: int) -> None:
        from jobs import library

        library.enqueue_ingest(document_id, generation)

    def purge(self, document_id: str, file_sha256: str | None) -> None:
        from jobs import library

        library.purge_document.send(document_id, file_sha256)

    def sync_collections(self, document_id: str) -> None:
        from jobs import library

        library.sync_document_collections.send(document_id)

    def sync_zotero(self, library_id: str) -> None:
        from jobs import zotero

        zotero.sync_zotero_library.send(library_id)

    def living_batch(self, owner_id: str, started_at: float, delay_s: float) -> None:
        from jobs import living

        living.propose_map_updates.send_with_options(args=(owner_id, started_at), delay=int(delay_s * 1000))
