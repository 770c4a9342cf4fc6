"""Edit commands typed on a map ("add a note saying …", "rename X to Y", "delete X"), parsed
by pattern before any model is asked."""

from __future__ import annotations

import re
from typing import Any

from bayes_app.models import MapNode

# "add a note saying X" / "… that says X" / "… called X": the verb introduces the title, it is not part of it
_ADD = re.compile(
    r"^\s*(?:please\s+)?(?:add|create)\s+(?:an?\s+)?(note|claim|theme|chapter)?\s*"
    r"(?:(?:that|which)\s+(?:says|reads)|saying|reading|called|titled|named|with\s+the\s+(?:text|title))?"
    r"\s*:?\s*[\"'“]?(.+?)[\"'”]?(?:\s+under\s+[\"'“]?(.+?)[\"'”]?)?\s*$",
    re.I,
)
_RENAME = re.compile(r"^\s*(?:please\s+)?rename\s+[\"']?(.+?)[\"']?\s+to\s+[\"']?(.+?)[\"']?\s*$", re.I)
_DELETE = re.compile(r"^\s*(?:please\s+)?(?:delete|remove)\s+(?:the\s+)?(?:node\s+)?[\"']?(.+?)[\"']?\s*$", re.I)


def find_node(nodes: list[MapNode], words: str) -> MapNode | None:
    """The node titled `words` (exactly, else the first whose title contains them)."""
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
