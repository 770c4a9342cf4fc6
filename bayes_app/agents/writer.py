"""Writer: commits each node (with its citations) in its own transaction, then appends a
`node` event to the run's stream; relations likewise (`relation` events). A claim a member's run
would cite from a paper the owner has not made readable to the map is not written: it goes to a
proposal only the owner sees (`maps.updates.divert_to_owner`; no event names it)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bayes_app.agents.retrieval import member_run
from bayes_app.maps import service
from bayes_app.maps.agent_writes import NotShared, unshared
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.maps.updates import divert_to_owner
from bayes_app.models import Mindmap
from bayes_app.runs import lifecycle as lc
from bayes_app.runs.executor import RunAborted, RunContext, RunFailed


class Writer:
    def __init__(self, ctx: RunContext, map_id: str) -> None:
        self.ctx, self.map_id = ctx, map_id
        self.written: list[dict[str, Any]] = []  # node events of this run
        self.diverted = 0  # claims kept for the owner's decision (papers not readable to the map)

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
        except NotShared:  # the owner took a paper back meanwhile: theirs to decide
            return await self.divert(title, citations or [], parent_id=parent_id, kind=kind, confidence=confidence)
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

    async def refused(self, citations: list[dict[str, Any]]) -> bool:
        """This run may not cite one of these documents on the map (a member's run: only what the
        owner made readable to it)."""
        if not member_run(self.ctx):
            return False

        def check() -> bool:
            with self.ctx.sessions() as db:
                m = db.get(Mindmap, self.map_id)
                return m is not None and bool(unshared(db, m, self.ctx.run.id, citations))

        return await asyncio.to_thread(check)

    async def divert(
        self,
        text: str,
        citations: list[dict[str, Any]],
        *,
        parent_id: str | None,
        theme_title: str | None = None,
        kind: str = "claim",
        confidence: float | None = None,
    ) -> dict[str, Any]:
        """Keep a claim for the owner's decision instead of writing it (see the module docstring);
        its event-like answer has no node id (`diverted`)."""

        def write() -> None:
            with self.ctx.sessions() as db:
                for c in citations[:1]:
                    divert_to_owner(
                        db,
                        self.map_id,
                        self.ctx.run.id,
                        text,
                        c,
                        parent_id=parent_id,
                        theme_title=theme_title,
                        kind=kind,
                        confidence=confidence,
                    )

        try:
            await asyncio.to_thread(write)
        except Exception:  # noqa: BLE001 - the map went away under us
            raise self._gone() from None
        self.diverted += 1
        return {"id": None, "parent_id": parent_id, "diverted": True}

    async def update(self, node_id: str, **values: Any) -> None:
        """Change a node this run wrote (never another: `maps.agent_writes.update_agent_node`)."""

        def write() -> Any:
            with self.ctx.sessions() as db:
                return service.update_agent_node(db, self.map_id, node_id, run_id=self.ctx.run.id, **values)

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
                return service.add_agent_citations(db, self.map_id, node_id, citations, run_id=self.ctx.run.id)

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
