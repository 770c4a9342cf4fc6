"""Writer: commits each node (with its citations) in its own transaction, then appends a
`node` event to the run's stream; relations likewise (`relation` events)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bayes_app.maps import service
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.runs import lifecycle as lc
from bayes_app.runs.executor import RunAborted, RunContext, RunFailed


class Writer:
    def __init__(self, ctx: RunContext, map_id: str) -> None:
        self.ctx, self.map_id = ctx, map_id
        self.written: list[dict[str, Any]] = []  # node events of this run

    def _gone(self) -> RunAborted:
        """The map or node was deleted under the run: stop (the cancel is on its way)."""
        if self.ctx.aborted:
            return RunAborted(self.ctx.abort_reason())
        return RunAborted(lc.RESOURCE_DELETED)

    async def node(
        self,
        parent_id: str,
        kind: str,
        title: str,
        body: str = "",
        *,
        citations: list[dict[str, Any]] | None = None,
        confidence: float | None = None,
        after_id: str | None = None,
    ) -> dict[str, Any]:
        self.ctx.check_abort()

        def write() -> tuple[Any, list[Any]]:
            with self.ctx.sessions() as db:
                return service.write_agent_node(
                    db,
                    self.map_id,
                    parent_id,
                    kind,
                    title,
                    body,
                    run_id=self.ctx.run.id,
                    confidence=confidence,
                    citations=citations,
                    after_id=after_id,
                )

        try:
            node, cits = await asyncio.to_thread(write)
        except MapNotFound:
            raise self._gone() from None
        except MapError as err:  # the map is as deep or as large as it may be: stop, saying why
            raise RunFailed(err.code, err.message) from None
        ev = {
            "id": node.id,
            "map_id": self.map_id,
            "parent_id": node.parent_id,
            "kind": node.kind,
            "title": node.title,
            "body": node.body,
            "order": node.order_index,
            "confidence": node.confidence,
            "citations": len(cits),
            "support": min((c.support_score for c in cits if c.support_score is not None), default=None),
            "run_id": self.ctx.run.id,
            "committed_at": time.time(),
        }
        self.ctx.emit("node", ev)
        self.written.append(ev)
        return ev

    async def update(self, node_id: str, **values: Any) -> None:
        def write() -> Any:
            with self.ctx.sessions() as db:
                return service.update_agent_node(db, self.map_id, node_id, **values)

        try:
            node = await asyncio.to_thread(write)
        except MapNotFound:
            raise self._gone() from None
        self.ctx.emit(
            "node",
            {
                "id": node.id,
                "map_id": self.map_id,
                "parent_id": node.parent_id,
                "kind": node.kind,
                "title": node.title,
                "updated": True,
                "run_id": self.ctx.run.id,
                "committed_at": time.time(),
            },
        )

    async def cite(self, node_id: str, citations: list[dict[str, Any]]) -> int:
        """Add citations to a node this or an earlier run wrote (a merged near-duplicate)."""
        self.ctx.check_abort()

        def write() -> list[Any]:
            with self.ctx.sessions() as db:
                return service.add_agent_citations(db, self.map_id, node_id, citations)

        try:
            rows = await asyncio.to_thread(write)
        except MapNotFound:
            return 0  # the node was deleted meanwhile: nothing to merge into
        if rows:
            self.ctx.emit(
                "node",
                {
                    "id": node_id,
                    "map_id": self.map_id,
                    "updated": True,
                    "citations_added": len(rows),
                    "run_id": self.ctx.run.id,
                    "committed_at": time.time(),
                },
            )
        return len(rows)

    async def relation(self, source_id: str, target_id: str, kind: str = "contradicts") -> None:
        self.ctx.check_abort()

        def write() -> Any:
            with self.ctx.sessions() as db:
                return service.add_relation(db, self.map_id, source_id, target_id, kind, run_id=self.ctx.run.id)

        try:
            rel = await asyncio.to_thread(write)
        except MapNotFound:
            raise self._gone() from None
        if rel is not None:
            self.ctx.emit(
                "relation",
                {"id": rel.id, "source_id": source_id, "target_id": target_id, "kind": kind, "run_id": self.ctx.run.id},
            )
