"""JSON model calls for the agent roles: structured output over any provider.

Each call carries a JSON schema. It is sent as `response_format` at the best level the
endpoint and model accept (`bayes_app.llm.structured`: json_schema → json_object with
the schema → json_object → none,
learnt once per endpoint and model); the instructions describe the shape in words, never
with a literal example object a weak model could echo back.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pydantic import BaseModel

from bayes_app.llm import structured
from bayes_app.llm.structured import parse_json
from bayes_app.llm.types import ChatRequest, ProviderError, StreamEvent, TextDelta
from bayes_app.runs import kinds
from bayes_app.runs.executor import RunContext

log = logging.getLogger("bayes.agents")
# The role each call step runs as (its model is chosen per role: BAYES_MODEL_<ROLE>); a step
# named after a map run kind (restructure, counter, check_support, …) runs as that kind's role.
STEP_ROLES = {
    "planner": "planner",
    "router": "planner",
    "edit": "planner",
    "researcher": "researcher",
    "update": "researcher",  # the update run's researcher (agents/kinds/update_map.py)
    "critic": "critic",
    "answer": "writer",
}


def is_offline(ctx: RunContext) -> bool:
    return getattr(ctx.provider, "name", "") == "offline"


def step_role(step: str) -> str:
    """The role that makes `step`'s call."""
    if step in STEP_ROLES:
        return STEP_ROLES[step]
    kind = kinds.get(step)
    return kind.role if kind is not None and kind.resource == "mindmap" else step


def role_model(ctx: RunContext, step: str) -> str:
    """The model of the role that makes `step`'s call."""
    return ctx.model_for(step_role(step))


_WORDS = re.compile(r"[a-z0-9]+")


def _words(text: str) -> str:
    return " ".join(_WORDS.findall(text.lower()))


def echoes(text: str, instructions: str) -> bool:
    """True when a model's wording is a piece of its instructions (a weak model echoing
    them), or has no words at all."""
    w = _words(text)
    return not w or (len(w.split()) <= 12 and f" {w} " in f" {_words(instructions)} ")


async def ask_json(
    ctx: RunContext,
    step: str,
    system: str,
    user: str,
    schema: dict[str, Any] | type[BaseModel],
    max_tokens: int = 1_500,
    model: str | None = None,
    extra_body: dict[str, Any] | None = None,
) -> Any:
    """One streamed structured call (usage recorded, abort checked per token); the parsed
    object, or None when the reply is not JSON. `schema` is the step's pydantic output model
    (or, for a shape built per call, its JSON schema). An endpoint refusing the response format
    (`structured.is_refusal`) is asked again one level down."""
    model = model or role_model(ctx, step)
    if not isinstance(schema, dict):
        schema = structured.schema_of(schema)
    first = level = structured.level_for(ctx.provider, model)
    while True:
        parts: list[str] = []

        def on_event(ev: StreamEvent) -> None:
            if isinstance(ev, TextDelta):
                parts.append(ev.text)

        req = ChatRequest(
            model=model,
            max_tokens=max_tokens,
            response_format=structured.response_format(level, step, schema),
            extra_body=extra_body,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        )
        try:
            await ctx.stream_model(req, step, on_event)
        except ProviderError as err:
            nxt = structured.next_level(level) if structured.is_refusal(err) else None
            if nxt is None:
                raise
            log.info("run %s: %s refused response format %s (%s); using %s", ctx.run.id, step, level, err.message, nxt)
            level = nxt
            continue
        if level != first:
            structured.worked(ctx.provider, model, level)
        break
    data = parse_json("".join(parts))
    if data is None:
        log.info("run %s: %s reply was not JSON", ctx.run.id, step)
    return data
