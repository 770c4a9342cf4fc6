"""The map run kind `message`: a message typed on the map is either an edit command ("add a
note saying …", "rename X to Y", "delete X"; parsed here, or by the model's edit step) or a
question answered from the map's claims, researching the library when they do not suffice."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from bayes_app.agents import planner
from bayes_app.agents.kinds import CLAIM_KINDS, NO_PASSAGES, _cited, _done, _require_claims, _start
from bayes_app.agents.llm_json import ask_json, is_offline, role_model
from bayes_app.agents.pipeline import Research, research_aspects
from bayes_app.agents.retrieval import library_of, retrieve
from bayes_app.agents.router import route
from bayes_app.llm import structured as st
from bayes_app.llm.offline import format_passages
from bayes_app.llm.types import ChatRequest, StreamEvent, TextDelta
from bayes_app.maps import service
from bayes_app.maps.access import acting_as
from bayes_app.maps.errors import MapError, MapNotFound
from bayes_app.models import MapNode, NodeKind
from bayes_app.runs.executor import RunContext, RunFailed

EDIT_SYSTEM = (
    "Turn the user's request into edits of their research mindmap. Reply with a JSON object: "
    "key ops, a list of edits, each an object with key op (add, rename or delete), key node "
    "(the title of the node to rename or delete, else null), key title (the new title, else "
    "null), key kind (note, claim, theme or chapter for an added node, else null) and key "
    "under (the title of the parent of an added node, else null)."
)
EDIT_SCHEMA = st.obj(
    ops=st.array(
        st.obj(
            op=st.enum(["add", "rename", "delete"]),
            node=st.nullable(st.STRING),
            title=st.nullable(st.STRING),
            kind=st.nullable(st.STRING),
            under=st.nullable(st.STRING),
        )
    )
)


# ---- a message typed on the map --------------------------------------------------------------
ANSWER_SYSTEM = (
    "Answer the question from the claims of the user's research mindmap only, citing "
    "the markers [n]. If the map does not answer it, say so."
)
# "add a note saying X" / "… that says X" / "… called X": the verb introduces the title, it is not part of it
_ADD = re.compile(
    r"^\s*(?:please\s+)?(?:add|create)\s+(?:an?\s+)?(note|claim|theme|chapter)?\s*"
    r"(?:(?:that|which)\s+(?:says|reads)|saying|reading|called|titled|named|with\s+the\s+(?:text|title))?"
    r"\s*:?\s*[\"'“]?(.+?)[\"'”]?(?:\s+under\s+[\"'“]?(.+?)[\"'”]?)?\s*$",
    re.I,
)
_RENAME = re.compile(r"^\s*(?:please\s+)?rename\s+[\"']?(.+?)[\"']?\s+to\s+[\"']?(.+?)[\"']?\s*$", re.I)
_DELETE = re.compile(r"^\s*(?:please\s+)?(?:delete|remove)\s+(?:the\s+)?(?:node\s+)?[\"']?(.+?)[\"']?\s*$", re.I)


def _find(nodes: list[MapNode], words: str) -> MapNode | None:
    words = words.strip().lower()
    exact = [n for n in nodes if n.title.lower() == words]
    if exact:
        return exact[0]
    return next((n for n in nodes if words and words in n.title.lower()), None)


def edit_ops(message: str) -> list[dict[str, Any]]:
    """Edits a message asks for, by pattern (rename X to Y / delete X / add a note X under Y)."""
    if m := _RENAME.match(message):
        return [{"op": "rename", "node": m.group(1), "title": m.group(2)}]
    if m := _ADD.match(message):
        return [{"op": "add", "kind": (m.group(1) or "note").lower(), "title": m.group(2), "under": m.group(3)}]
    if m := _DELETE.match(message):
        return [{"op": "delete", "node": m.group(1)}]
    return []


async def _apply_edits(ctx: RunContext, map_id: str, message: str) -> list[dict[str, Any]]:
    ops = edit_ops(message)
    if not ops and not is_offline(ctx):
        data = await ask_json(ctx, "edit", EDIT_SYSTEM, f"ROLE: edit\n{message}", EDIT_SCHEMA, max_tokens=400)
        ops = [o for o in (data.get("ops") if isinstance(data, dict) else None) or [] if isinstance(o, dict)]
    done = []

    def apply() -> None:  # on the map owner's rows, recorded as the edits of who started the run
        with ctx.sessions() as db, acting_as(ctx.run.owner_id):
            nodes = service._nodes(db, map_id)
            root = next(n for n in nodes if n.parent_id is None)
            for op in ops:
                try:
                    if op.get("op") == "add":
                        parent = _find(nodes, str(op.get("under") or "")) if op.get("under") else root
                        kind = op.get("kind") if op.get("kind") in NodeKind.ALL[1:] else NodeKind.NOTE
                        n = service.add_child(
                            db, library_of(ctx), map_id, (parent or root).id, str(op.get("title") or ""), kind=kind
                        )
                        done.append({"op": "add", "node": n})
                    elif op.get("op") == "rename" and (t := _find(nodes, str(op.get("node") or ""))):
                        n = service.update_node(db, library_of(ctx), map_id, t.id, title=str(op.get("title") or ""))
                        done.append({"op": "rename", "node": n})
                    elif op.get("op") == "delete" and (t := _find(nodes, str(op.get("node") or ""))) and t.parent_id:
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
    loaded, w = await _start(ctx)
    text = " ".join(str(ctx.run.input.get("prompt") or "").split())
    claims = [n for n in loaded["nodes"] if n.kind in CLAIM_KINDS]
    chosen = await route(ctx, text, bool(claims))
    ctx.emit("route", {"route": chosen})
    if chosen == "edit":
        await _apply_edits(ctx, loaded["map"].id, text)
        return
    if chosen == "research":
        r = Research(ctx, w, text)
        r.seen_quotes = _cited(ctx, loaded["map"].id)
        first = await retrieve(ctx, text, k=16 if is_offline(ctx) else 10)
        if not first:
            raise RunFailed(NO_PASSAGES, "The library has no passages on this request.")
        aspects = (await planner.plan(ctx, text, first))[:3]
        await research_aspects(r, loaded["node"].id, aspects)
        _done(ctx, r, "no_claims")
        _require_claims(r)
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
