"""Router for a message typed on the map: answer from the map, edit only, or research.

With a model: JSON `{"route": "answer" | "edit" | "research"}`; otherwise (or when the
reply is unusable) cue words decide.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from pydantic import BaseModel

from bayes_app.agents import prompts
from bayes_app.agents.llm_json import ask_json, is_offline
from bayes_app.llm import structured
from bayes_app.runs.executor import RunContext

Route = Literal["answer", "edit", "research"]
ROUTES: tuple[str, ...] = get_args(Route)
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
SYSTEM = prompts.ROUTER


class Routed(BaseModel):
    """The router step's reply."""

    route: Route


def route_by_cues(message: str, map_has_claims: bool) -> str:
    if _EDIT.search(message):
        return "edit"
    if _RESEARCH.search(message) or not map_has_claims:
        return "research"
    return "answer"


async def route(ctx: RunContext, message: str, map_has_claims: bool) -> str:
    if is_offline(ctx):
        return route_by_cues(message, map_has_claims)
    data = await ask_json(ctx, "router", SYSTEM, f"ROLE: router\nMessage: {message}", Routed, max_tokens=50)
    routed = structured.parse_as(Routed, data)
    return routed.route if routed is not None else route_by_cues(message, map_has_claims)
