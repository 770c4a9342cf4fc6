"""A sentence cut by a page or column break, joined with its continuation.

Chunks never cross a page (`library.chunking`), so a sentence that runs from the foot of a page
(or column) on to the next is cut in two: its head ends one chunk without end punctuation, its
tail opens a later body chunk in lower case ("…compared to other" / "methods [4]. The …").
`continued` gives a chunk's text with that tail appended, so the whole sentence can be quoted;
the quote then runs across the break and still locates (`library.highlight.find_quote_spans`
reads across a page break, skipping a trailing page number).

    is_cut(text) -> bool                       ends mid-sentence
    tail(text) -> str                           the opening fragment up to its first sentence end
    continued(text, following) -> str | None    text + the continuation found in the chunks after it
    continued_chunk(db, chunk) -> str           the same for a stored chunk (next chunks by index)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MAX_TAIL_WORDS = 60  # a longer "continuation" is not the rest of one sentence
LOOK_AHEAD = 4  # chunks searched for the continuation (running heads, captions and footnotes between)
_SKIPPED_ROLES = {"header_footer", "figure", "caption", "footnote", "equation", "front_matter"}
_HYPHEN_END = re.compile(r"[A-Za-z][-\u00ad\ufffe\u0002]\s*$")
# end of a sentence: . ! ? (closing quotes, brackets, a citation mark may follow) then space + capital
_SENTENCE_END = re.compile(
    r"[.!?][\"'”’)\]]*(?:\s*\[\d+(?:[,–-]\d+)*\])?(?=\s+[\"“(\[]?[A-Z0-9]|\s*$)|:(?=[ \t]*[\r\n])"
)
# a page number printed at the foot of the page ("… to counterfac-\n11"): not part of the sentence
PAGE_NUMBER_TAIL = re.compile(
    r"(?:[\r\n]+[ \t]*|(?<=[\u00ad\ufffe\u0002])|(?<=[.!?]) )(?:\d{1,4}|[ivxlc]{1,6})\s*$", re.I
)
# a sentence end, perhaps followed by a citation mark ("… scenarios.” 37", "… compounds. 146,148")
_ENDED = re.compile(r"[.!?:][\"'”’)\]]*(?:\s*\[\d+(?:[,–-]\d+)*\])?\s*$|[.!?][\"'”’)\]]*\s?[\d,–-]*\s*$")


def without_page_number(text: str) -> str:
    """The text without a page number at its very end."""
    return PAGE_NUMBER_TAIL.sub("", text.rstrip())


def is_cut(text: str) -> bool:
    """True when the text's last sentence has no end punctuation (it ends mid-sentence; a page
    number after it does not count)."""
    body = without_page_number(text)
    return bool(re.search(r"[A-Za-z]", body[-40:])) and not _ENDED.search(body)


def tail(text: str) -> str:
    """The opening fragment of a text that continues a cut sentence — it starts in lower case
    (or with punctuation or a digit inside a sentence) — up to its first sentence end; "" when
    the text opens a sentence of its own or the fragment is too long."""
    s = text.lstrip()
    if not s or s[0].isupper() or s[0] in '"“([':
        return ""
    m = _SENTENCE_END.search(s)
    fragment = s[: m.end()] if m else ""
    if not re.search(r"[A-Za-z]{2,}", fragment) or len(fragment.split()) > MAX_TAIL_WORDS:
        return ""
    return fragment


def continued(text: str, following: Iterable[str]) -> str | None:
    """`text` with the rest of its cut last sentence (from the first of `following` that
    continues it), or None when the text is not cut or no continuation is found."""
    if not is_cut(text):
        return None
    for nxt in following:
        fragment = tail(nxt)
        if fragment:
            head = without_page_number(text)
            return head + fragment if _HYPHEN_END.search(head) else f"{head} {fragment}"
        if nxt.strip():
            return None  # a sentence of its own follows: the cut one is not continued here
    return None


def continued_chunk(db: Any, chunk: Any) -> str:
    """A stored chunk's text, with the continuation of its cut last sentence from the next body
    chunks of its document (running heads, captions and footnotes in between are passed over;
    on the same page only what lies after the chunk's end counts: chunks overlap)."""
    from sqlmodel import col, select

    from bayes_app.models import Chunk

    if not is_cut(chunk.text):
        return chunk.text
    rows = db.exec(
        select(Chunk)
        .where(Chunk.document_id == chunk.document_id)
        .where(col(Chunk.chunk_index) > chunk.chunk_index)
        .order_by(col(Chunk.chunk_index))
        .limit(LOOK_AHEAD)
    ).all()
    following = []
    for c in rows:
        if c.role in _SKIPPED_ROLES:
            continue
        if c.page == chunk.page:
            if c.char_end <= chunk.char_end:
                continue
            following.append(c.text[max(0, chunk.char_end - c.char_start) :])
        elif c.page == chunk.page + 1:
            following.append(c.text)
        else:
            break
    return continued(chunk.text, following) or chunk.text
