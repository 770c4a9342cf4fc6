"""The map run kind `message`: a message typed on the map is either an edit command ("add a
note saying …", "rename X to Y", "delete X"; parsed by `agents.commands`, or by the model's edit step) or a
question answered from the map's claims, researching the library when they do not suffice."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel

from bayes_app.agents import planner, prompts
from bayes_app.agents.commands import edit_ops, find_node
from bayes_app.agents.kinds import common
from bayes_app.agents.kinds.common import CLAIM_KINDS, NO_PASSAGES, RESOURCE
from bayes_app.agents.llm_json import ask_json, is_offline, role_model
from bayes_app.agents.pipeline import Research, research_aspects
from bayes_app.agents.retrieval import library_of, retrieve
from bayes_app.agents.router import route
from bayes_app.llm import structured
from bayes_app.llm.offline import format_passages
from bayes_app.llm.types import ChatRequest, StreamEvent, TextDelta
from bayes_app.maps import service
from bayes_app.maps.access import acting_as
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.models import NodeKind
from bayes_app.runs.executor import RunContext, RunFailed
from bayes_app.runs.kinds import RunKind

EDIT_SYSTEM = prompts.EDIT


class EditOp(BaseModel):
    """One edit of the edit step's reply (the fields an op does not use are null)."""

    op: Literal["add", "rename", "delete"]
    node: str | None = None
    title: str | None = None
    kind: str | None = None
    under: str | None = None


class EditOps(BaseModel):
    """The edit step's reply."""

    ops: list[EditOp]


ANSWER_SYSTEM = prompts.ANSWER


async def _apply_edits(ctx: RunContext, map_id: str, message: str) -> list[dict[str, Any]]:
    ops = edit_ops(message)
    if not ops and not is_offline(ctx):
        data = await ask_json(ctx, "edit", EDIT_SYSTEM, f"ROLE: edit\n{message}", EditOps, max_tokens=400)
        ops = [o.model_dump() for o in structured.items_as(EditOp, data, "ops")]
    done: list[dict[str, Any]] = []

    def apply() -> None:  # on the map owner's rows, recorded as the edits of who started the run
        with ctx.sessions() as db, acting_as(ctx.run.owner_id):
            nodes = service._nodes(db, map_id)
            root = next(n for n in nodes if n.parent_id is None)
            for op in ops:
                try:
                    if op.get("op") == "add":
                        parent = find_node(nodes, str(op.get("under") or "")) if op.get("under") else root
                        kind = op.get("kind") if op.get("kind") in NodeKind.ALL[1:] else NodeKind.NOTE
                        n = service.add_child(
                            db, library_of(ctx), map_id, (parent or root).id, str(op.get("title") or ""), kind=kind
                        )
                        done.append({"op": "add", "node": n})
                    elif op.get("op") == "rename" and (t := find_node(nodes, str(op.get("node") or ""))):
                        n = service.update_node(db, library_of(ctx), map_id, t.id, title=str(op.get("title") or ""))
                        done.append({"op": "rename", "node": n})
                    elif (
                        op.get("op") == "delete" and (t := find_node(nodes, str(op.get("node") or ""))) and t.parent_id
                    ):
                        ids = service.delete_subtree(db, library_of(ctx), map_id, t.id)
                        done.append({"op": "delete", "deleted": ids})
                except (MapError, MapNotFound) as err:
                    done.append({"op": op.get("op"), "error": str(err)})

    await asyncio.to_thread(apply)
    for d in done:
        if "node" in d:
            ctx.emit("node", {**d["node"], "run_id": ctx.run.id, "updated": d["op"] == "rename"})
    ctx.emit(
        "agent",
        {
            "role": "editor",
            "edits": [
                {k: v for k, v in d.items() if k != "node"} | ({"node_id": d["node"]["id"]} if "node" in d else {})
                for d in done
            ],
        },
    )
    return done


async def message(ctx: RunContext) -> None:
    """Route a typed message to answer-from-the-map, edit-only or research; emit the route."""
    loaded, w = await common.start(ctx)
    text = " ".join(str(ctx.run.input.get("prompt") or "").split())
    claims = [n for n in loaded["nodes"] if n.kind in CLAIM_KINDS]
    chosen = await route(ctx, text, bool(claims))
    ctx.emit("route", {"route": chosen})
    if chosen == "edit":
        await _apply_edits(ctx, loaded["map"].id, text)
        return
    if chosen == "research":
        r = Research(ctx, w, text)
        r.seen_quotes = common.cited(ctx, loaded["map"].id)
        first = await retrieve(ctx, text, k=16 if is_offline(ctx) else 10)
        if not first:
            raise RunFailed(NO_PASSAGES, "The library has no passages on this request.")
        aspects = (await planner.plan(ctx, text, first))[:3]
        await research_aspects(r, loaded["node"].id, aspects)
        common.done(ctx, r, "no_claims")
        common.require_claims(r)
        return
    # answer from the map: its claims are the numbered passages
    with ctx.sessions() as db:
        cits = {c.node_id: c for c, _ in service.map_citations(db, loaded["map"].id)}
    passages = [
        {"n": i, "title": n.title[:80], "text": (cits[n.id].quote if n.id in cits else n.title)}
        for i, n in enumerate(claims, 1)
    ]
    ctx.emit("metadata", {"claims": [{"n": p["n"], "node_id": n.id} for p, n in zip(passages, claims)]})

    def on_event(ev: StreamEvent) -> None:
        if isinstance(ev, TextDelta) and ev.text:
            ctx.emit("text", {"delta": ev.text})

    req = ChatRequest(
        model=role_model(ctx, "answer"),
        max_tokens=800,
        messages=[
            {"role": "system", "content": ANSWER_SYSTEM},
            {"role": "user", "content": f"Claims:\n{format_passages(passages)}\n\n{text}"},
        ],
    )
    await ctx.stream_model(req, "answer", on_event)


KIND = RunKind(
    "message", "Message", common.then_split(message), RESOURCE, needs_prompt=True, prompt_budget=20_000, role="planner"
)
