"""Bidirectional-text controls made inert (issue 36.9).

The embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069) and the direction
marks (U+200E, U+200F, U+061C) change how the text around them is *displayed* without being
visible themselves: `Claim with \u202egnp.exe\u202c` shows as "…exe.png". Every title and text
a user, a document or a model supplies loses them before it is stored (`models/shown_text.py`)
and again before it is exported (rows written before this rule)."""

from __future__ import annotations

from typing import Any

BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_DROP = str.maketrans("", "", BIDI_CONTROLS)


def inert(text: str) -> str:
    """`text` without bidi controls (the letters' own direction still applies)."""
    return text.translate(_DROP) if any(c in text for c in BIDI_CONTROLS) else text


def inert_deep(value: Any) -> Any:
    """`value` (JSON: str, list, dict) with `inert` applied to every string in it."""
    if isinstance(value, str):
        return inert(value)
    if isinstance(value, list):
        return [inert_deep(v) for v in value]
    if isinstance(value, dict):
        return {k: inert_deep(v) for k, v in value.items()}
    return value
