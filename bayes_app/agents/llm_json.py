"""JSON-mode model calls for the agent roles (structured output over any provider)."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from bayes_app.llm.types import ChatRequest, StreamEvent, TextDelta
from bayes_app.runs.executor import RunContext

log = logging.getLogger("bayes.agents")
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.S)


def is_offline(ctx: RunContext) -> bool:
    return getattr(ctx.provider, "name", "") == "offline"


def parse_json(text: str) -> Any:
    """The JSON object in a model reply (tolerates code fences and text around it); None if none."""
    text = _FENCE.sub("", text or "").strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            return json.loads(text[start:end + 1])
        except ValueError:
            return None
    return None


async def ask_json(ctx: RunContext, step: str, system: str, user: str, max_tokens: int = 1_500,
                   extra_body: dict[str, Any] | None = None) -> Any:
    """One streamed JSON-mode call (usage recorded, abort checked per token); the parsed
    object, or None when the reply is not JSON."""
    parts: list[str] = []

    def on_event(ev: StreamEvent) -> None:
        if isinstance(ev, TextDelta):
            parts.append(ev.text)

    req = ChatRequest(model=ctx.run.model, max_tokens=max_tokens,
                      response_format={"type": "json_object"}, extra_body=extra_body,
                      messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])
    await ctx.stream_model(req, step, on_event)
    data = parse_json("".join(parts))
    if data is None:
        log.info("run %s: %s reply was not JSON", ctx.run.id, step)
    return data
