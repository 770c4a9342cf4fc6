"""Source text quoted into Markdown (chat answers, the map's run text) as literal text.

Answers are rendered as Markdown, but a sentence quoted from a document is data: whatever it
holds must show as written and never become a link, an image, a heading, emphasis, a list,
HTML or a citation marker. `literal` backslash-escapes every character CommonMark (and GFM's
tables, strikethrough and autolinks) could read as syntax; `plain` undoes it.
"""

from __future__ import annotations

import re

# Inline syntax anywhere: escapes, code, emphasis, links/images ("[" escaped, so "(" never opens a
# link), HTML and entities, tables, strikethrough; ":" breaks GFM's bare-URL autolinks.
_INLINE = re.compile(r"([\\`*_\[\]<>!|~&#:])")
# Block syntax at the start of the text (whitespace is collapsed, so only there): lists, quotes.
_LEAD = re.compile(r"^(\d{1,9})([.)])|^([-+=])")
_ESCAPED = re.compile(r"\\([\\`*_\[\]<>!|~&#:.)\-+=])")


def literal(text: str) -> str:
    """`text` on one line, escaped so Markdown renders exactly these characters."""
    out = _INLINE.sub(r"\\\1", " ".join(text.split()))
    return _LEAD.sub(lambda m: f"{m.group(1)}\\{m.group(2)}" if m.group(1) else f"\\{m.group(3)}", out)


def plain(markdown: str) -> str:
    """The text `literal` escaped, as it was (whitespace collapsed)."""
    return _ESCAPED.sub(r"\1", markdown)
