"""Structured output: which `response_format` an endpoint and model accept, learnt once.

Levels, best first:
- "json_schema": constrained decoding by a JSON schema, the OpenAI form (OpenAI, vLLM,
  Ollama, llama.cpp's own server); for a small model this is what makes its output usable;
- "json_object_schema": the same schema in JSON mode's `schema` key, the form
  llama-cpp-python's server takes (its grammar then follows the schema);
- "json_object": JSON mode (any valid JSON object);
- "prompt": no `response_format`; the instructions describe the shape and the reply is parsed.

A request refused with HTTP 400/422 at one level is retried at the next, and the endpoint + model
pair is remembered at that level for the life of the process (one refused request per worker
process and pair; a level is remembered only once the one below it worked, so an outage is
not mistaken for a refusal). A step declares its reply as a pydantic model; `schema_of` gives
its schema in the strict subset: every property required, `additionalProperties: false`,
nullable instead of optional; array bounds (minItems/maxItems) are used where an empty or
endless list is the failure mode of a small model.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

LEVELS = ("json_schema", "json_object_schema", "json_object", "prompt")
_known: dict[tuple[str, str], str] = {}
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.S)
_lock = threading.Lock()


def endpoint_of(provider: Any) -> str:
    """A stable name of the provider's endpoint (its base URL; the provider name otherwise)."""
    return str(getattr(provider, "endpoint", None) or getattr(provider, "name", "") or type(provider).__name__)


def level_for(provider: Any, model: str) -> str:
    with _lock:
        return _known.get((endpoint_of(provider), model), LEVELS[0])


def next_level(level: str) -> str | None:
    """The level to try when `level` was refused (None when there is nothing below)."""
    i = LEVELS.index(level)
    return LEVELS[i + 1] if i + 1 < len(LEVELS) else None


def worked(provider: Any, model: str, level: str) -> None:
    """`level` worked for `model` at this endpoint (after the levels above were refused)."""
    with _lock:
        key = (endpoint_of(provider), model)
        if LEVELS.index(_known.get(key, LEVELS[0])) < LEVELS.index(level):
            _known[key] = level


def is_refusal(err: Any) -> bool:
    """Does this error say the endpoint does not take the response format? A 4xx before any
    output, or a 5xx whose message names it (llama-cpp-python answers an unknown format
    with HTTP 500 and a validation error)."""
    if getattr(err, "partial", False):
        return False
    if getattr(err, "code", None) == "bad_request":
        return True
    message = str(getattr(err, "message", "") or "")
    return getattr(err, "status", None) == 500 and ("response_format" in message or "json_schema" in message)


def forget() -> None:
    """Drop what was learnt (tests; a server upgraded in place)."""
    with _lock:
        _known.clear()


def response_format(level: str, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    if level == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    if level == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    if level == "json_object":
        return {"type": "json_object"}
    return None


# ---- output models ---------------------------------------------------------------------------
M = TypeVar("M", bound=BaseModel)
_NOT_KEYWORDS = ("title", "default", "description")  # pydantic's annotations, not constraints


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a step's pydantic output model in the strict subset: nested models
    inlined (no `$ref`), every property required, no other property allowed, no titles."""
    full = model.model_json_schema()
    defs = full.pop("$defs", {})

    def strict(node: dict[str, Any]) -> dict[str, Any]:
        if "$ref" in node:
            return strict(defs[node["$ref"].rsplit("/", 1)[1]])
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _NOT_KEYWORDS:
                continue
            if key == "properties":
                out[key] = {name: strict(sub) for name, sub in value.items()}
            elif key == "items" and isinstance(value, dict):
                out[key] = strict(value)
            elif key in ("anyOf", "allOf", "oneOf"):
                out[key] = [strict(sub) for sub in value]
            else:
                out[key] = value
        if out.get("type") == "object":
            out["required"] = list(out.get("properties", {}))
            out["additionalProperties"] = False
        return out

    return strict(full)


def parse_as(model: type[M], data: Any) -> M | None:
    """`data` (a parsed reply) as `model`, or None when it does not fit."""
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


def items_as(model: type[M], data: Any, key: str) -> list[M]:
    """The items of the list under `key` of a reply that fit `model` (a small model's one
    malformed item costs that item only, not the reply)."""
    items = data.get(key) if isinstance(data, dict) else None
    parsed = (parse_as(model, item) for item in (items if isinstance(items, list) else []))
    return [item for item in parsed if item is not None]


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
            return json.loads(text[start : end + 1])
        except ValueError:
            return None
    return None
