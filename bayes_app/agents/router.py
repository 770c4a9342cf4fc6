"""Router for a message typed on the map: answer from the map, edit only, or research.

With a model: JSON `{"route": "answer" | "edit" | "research"}`; otherwise (or when the
reply is unusable) cue words decide.
"""

from __future__ import annotations

import re

from bayes_app.agents.llm_json import ask_json, is_offline
from bayes_app.llm import structured as st
from bayes_app.runs.executor import RunContext

ROUTES = ("answer", "edit", "research")
_EDIT = re.compile(
    r"^\s*(please\s+)?(add|create|rename|delete|remove|move|collapse|expand all|retitle|"
    r"change the title)\b",
    re.I,
)
_RESEARCH = re.compile(
    r"\b(find|research|search|look for|look up|evidence|explore|investigate|"
    r"more (on|about)|sources?)\b",
    re.I,
)
SYSTEM = (
    "Route the user's message about their research mindmap. 'answer': a question the map's "
    "claims can answer; 'edit': a request to change the map's nodes (add, rename, delete, move); "
    "'research': a request that needs new evidence from the library. Reply with a JSON object "
    "whose key route holds one of the three."
)
SCHEMA = st.obj(route=st.enum(list(ROUTES)))


def route_by_cues(message: str, map_has_claims: bool) -> str:
    if _EDIT.search(message):
        return "edit"
    if _RESEARCH.search(message) or not map_has_claims:
        return "research"
    return "answer"


async def route(ctx: RunContext, message: str, map_has_claims: bool) -> str:
    if is_offline(ctx):
        return route_by_cues(message, map_has_claims)
    data = await ask_json(ctx, "router", SYSTEM, f"ROLE: router\nMessage: {message}", SCHEMA, max_tokens=50)
    choice = data.get("route") if isinstance(data, dict) else None
    return choice if choice in ROUTES else route_by_cues(message, map_has_claims)
