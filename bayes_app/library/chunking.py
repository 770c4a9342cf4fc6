"""Split page texts into overlapping chunks that are exact slices of one page.

Offset scheme: a chunk never crosses a page. ``char_start``/``char_end`` are offsets into the
text of page ``page`` (as returned by :func:`bayes_app.library.pdf.iter_pages`), so
``chunk.text == pages[chunk.page - 1].text[chunk.char_start:chunk.char_end]`` and
``page_end == page`` always (the field exists so a future cross-page scheme needs no schema
change). Chunks start and end on whitespace boundaries, prefer to end at a sentence end, and
consecutive chunks of a page overlap by about ``overlap_tokens``. A short tail of a page is
merged into the page's previous chunk instead of becoming a chunk of its own.

Token counts are an approximation, not a real tokenizer: every run of up to 16 word characters
and every other non-space character is a "piece", and tokens = round(1.3 * pieces). Against
all-MiniLM-L6-v2's WordPiece on the test papers the real count is 0.75-1.15x the estimate for
prose (median 0.87) but up to 2.7x on formula-heavy text; it also undercounts SMILES, long
identifiers and non-Latin scripts. Leave headroom below a model's hard input limit.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate

from bayes_app.library.pdf import PageLayout, PageText
from bayes_app.library.structure import SECTION_SEP, Role, Span

TOKENS_PER_PIECE = 1.3
MAX_RUN_CHARS = 200
REPEAT_CUT = 0.8  # a sentence cut by a chunk's end is repeated whole up to this share of a chunk
_WORD = re.compile(r"\S+")
_PIECE = re.compile(r"\w{1,16}|[^\w\s]")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")
_ABBREVIATIONS = frozenset(
    {
        "al.",
        "e.g.",
        "i.e.",
        "etc.",
        "fig.",
        "figs.",
        "eq.",
        "eqs.",
        "ref.",
        "refs.",
        "vs.",
        "cf.",
        "no.",
        "vol.",
        "pp.",
        "sec.",
        "tab.",
        "approx.",
    }
)
_HYPHEN_MARKERS = str.maketrans("", "", "\u00ad\ufffe\u0002")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrieval unit: a slice ``[char_start, char_end)`` of page ``page``'s text."""

    index: int
    page: int
    page_end: int
    char_start: int
    char_end: int
    text: str
    content_hash: str
    token_count: int
    role: str = "body"  # library.structure.Role of the run the chunk was cut from
    section: str = ""


def estimate_tokens(text: str) -> int:
    """Approximate token count: round(1.3 × pieces); see the module docstring."""
    return round(TOKENS_PER_PIECE * len(_PIECE.findall(text)))


def embedding_text(text: str) -> str:
    """The text to embed for a chunk: hyphenation markers joined, whitespace collapsed."""
    return " ".join(text.translate(_HYPHEN_MARKERS).split())


def content_hash(text: str) -> str:
    """sha256 of :func:`embedding_text`, so an unchanged hash means an unchanged embedding."""
    return hashlib.sha256(embedding_text(text).encode("utf-8")).hexdigest()


def heading_lead(text: str, section: str) -> int:
    """How many leading characters of a chunk's ``text`` are its section's own headings and the
    space after them (a heading joins the passage after it, :func:`segments`): a
    passage is shown and highlighted from the sentence after them, its ``section`` names them.
    0 when the text does not open with them, or holds nothing else."""
    names = [" ".join(h.split()).casefold() for h in section.split(SECTION_SEP) if h.strip()]
    pos = 0
    while names:
        rest = text[pos:]
        skipped = len(rest) - len(rest.lstrip())
        for name in names:
            end = _match_words(rest, skipped, name)
            if end:
                pos += end
                names.remove(name)
                break
        else:
            break
    rest = text[pos:]
    return pos + len(rest) - len(rest.lstrip()) if pos and rest.strip() else 0


def _match_words(text: str, start: int, words: str) -> int:
    """End of ``words`` (whitespace-insensitive, case-folded) at ``text[start:]`` followed by
    a line break, or 0."""
    i = start
    for j, word in enumerate(words.split(" ")):
        if j:
            k = i
            while k < len(text) and text[k].isspace():
                k += 1
            if k == i:
                return 0
            i = k
        if text[i : i + len(word)].casefold() != word:
            return 0
        i += len(word)
    line_end = i
    while line_end < len(text) and text[line_end] in " \t":
        line_end += 1
    return i if line_end < len(text) and text[line_end] in "\r\n" else 0


def _ends_sentence(word: str) -> bool:
    return bool(_SENTENCE_END.search(word)) and word.lower() not in _ABBREVIATIONS


def _page_spans(text: str, target_tokens: int, overlap_tokens: int, min_tail_tokens: int) -> Iterator[tuple[int, int]]:
    """Yield ``(char_start, char_end)`` of the chunks of one page."""
    # A run without spaces longer than MAX_RUN_CHARS (a text bomb, a base64 blob) is cut into
    # pieces, so one "word" never becomes one giant chunk; offsets stay those of the page text.
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    if any(e - s > MAX_RUN_CHARS for s, e in words):
        words = [(k, min(k + MAX_RUN_CHARS, e)) for s, e in words for k in range(s, e, MAX_RUN_CHARS)]
    if not words:
        return
    pieces = [len(_PIECE.findall(text, s, e)) for s, e in words]
    cum = [0, *accumulate(pieces)]  # cum[k] = pieces in words[:k]
    n = len(words)
    target = target_tokens / TOKENS_PER_PIECE
    overlap = overlap_tokens / TOKENS_PER_PIECE
    min_tail = min_tail_tokens / TOKENS_PER_PIECE
    i = 0
    while True:
        # Largest j with pieces(words[i:j]) <= target, at least one word.
        j = max(i + 1, min(n, bisect_right(cum, cum[i] + target) - 1))
        if j < n and cum[n] - cum[j] < min_tail:
            j = n  # short tail: fold it into this chunk
        elif j < n:
            j = _at_sentence_end(text, words, cum, i, j, target)
        yield words[i][0], words[j - 1][1]
        if j >= n:
            return
        i = _next_start(text, words, cum, i, j, target, overlap)


def _next_start(
    text: str, words: list[tuple[int, int]], cum: list[int], i: int, j: int, target: float, overlap: float
) -> int:
    """Where the chunk after words[i:j] starts: at a sentence start, repeating whole sentences.

    A sentence cut by the chunk's end is repeated whole (when it is at most REPEAT_CUT of a
    chunk), so every sentence up to that long is whole in some chunk; else the last whole sentences
    within `overlap` pieces are repeated, or the last one alone when it is at most half a chunk
    (a sentence opening "Moreover, …" keeps the one it leans on), or none when it is longer. Cut
    inside a sentence longer than that, about `overlap` pieces of it are repeated."""

    def starts_sentence(k: int) -> bool:
        return _ends_sentence(text[words[k - 1][0] : words[k - 1][1]])

    if starts_sentence(j):
        starts = [k for k in range(j - 1, i, -1) if starts_sentence(k) and cum[j] - cum[k] <= target / 2]
        within = [k for k in starts if cum[j] - cum[k] <= overlap]
        return within[-1] if within else starts[0] if starts else j
    # cut inside a sentence: repeat it whole (a results sentence with its statistics runs to 200
    # tokens; the chunks still move on by a fifth of one)
    cut = next((k for k in range(j - 1, i, -1) if starts_sentence(k)), None)
    if cut is not None and cum[j] - cum[cut] <= REPEAT_CUT * target:
        return cut
    nxt = j  # a sentence longer than that: roughly `overlap` pieces of it are repeated
    while nxt - 1 > i and cum[j] - cum[nxt - 1] <= overlap:
        nxt -= 1
    return nxt


def _at_sentence_end(text: str, words: list[tuple[int, int]], cum: list[int], i: int, j: int, target: float) -> int:
    """The chunk words[i:j] ends on a sentence end instead, if that keeps at least half the target."""
    for k in range(j - 1, i, -1):
        if cum[k + 1] - cum[i] < target / 2:
            break
        if _ends_sentence(text[words[k][0] : words[k][1]]):
            return k + 1
    return j


def iter_chunks(
    pages: Iterable[PageText],
    target_tokens: int = 250,
    overlap_tokens: int = 50,
    min_tail_tokens: int | None = None,
) -> Iterator[Chunk]:
    """Chunk pages lazily (see :func:`chunk_pages`); works with a page iterator."""
    if target_tokens <= 0 or not 0 <= overlap_tokens < target_tokens:
        raise ValueError("need target_tokens > 0 and 0 <= overlap_tokens < target_tokens")
    tail = target_tokens // 4 if min_tail_tokens is None else min_tail_tokens
    index = 0
    for page in pages:
        for start, end in _page_spans(page.text, target_tokens, overlap_tokens, tail):
            text = page.text[start:end]
            yield Chunk(
                index=index,
                page=page.number,
                page_end=page.number,
                char_start=start,
                char_end=end,
                text=text,
                content_hash=content_hash(text),
                token_count=estimate_tokens(text),
            )
            index += 1


def iter_structured_chunks(
    pages: Iterable[PageText | PageLayout],
    page_spans: Iterable[Sequence[Span]],
    target_tokens: int = 250,
    overlap_tokens: int = 50,
    min_tail_tokens: int | None = None,
) -> Iterator[Chunk]:
    """Chunk each page within its role runs (:func:`segments`): a chunk never mixes
    a reference list with body text or a running head with a caption, and carries the run's
    role and section. Offsets stay offsets into the page text."""
    if target_tokens <= 0 or not 0 <= overlap_tokens < target_tokens:
        raise ValueError("need target_tokens > 0 and 0 <= overlap_tokens < target_tokens")
    tail = target_tokens // 4 if min_tail_tokens is None else min_tail_tokens
    index = 0
    for page, spans in zip(pages, page_spans, strict=True):
        for seg in segments(spans):
            piece = page.text[seg.start : seg.end]
            if seg.role == Role.HEADER_FOOTER and sum(c.isalpha() for c in piece) < 8:
                continue  # a bare page number is no passage
            for start, end in _page_spans(piece, target_tokens, overlap_tokens, tail):
                text = piece[start:end]
                yield Chunk(
                    index=index,
                    page=page.number,
                    page_end=page.number,
                    char_start=seg.start + start,
                    char_end=seg.start + end,
                    text=text,
                    content_hash=content_hash(text),
                    token_count=estimate_tokens(text),
                    role=seg.role,
                    section=seg.section[:500],
                )
                index += 1


def chunk_pages(
    pages: Iterable[PageText],
    target_tokens: int = 250,
    overlap_tokens: int = 50,
    min_tail_tokens: int | None = None,
) -> list[Chunk]:
    """Split pages into chunks of about ``target_tokens`` with ``overlap_tokens`` of overlap.

    Chunks never cross pages; a page's trailing piece under ``min_tail_tokens`` (default a
    quarter of the target) of new text is merged into its previous chunk, so a chunk can reach
    about ``target_tokens + min_tail_tokens``. A single word longer than the target is a chunk
    of its own. Empty pages yield no chunks.
    """
    return list(iter_chunks(pages, target_tokens, overlap_tokens, min_tail_tokens))


# ---- role runs: the parts of a page chunked separately
_MERGE_INTO_BODY = frozenset({Role.HEADING, Role.EQUATION})
_SHORT_EQUATION_CHARS = 200


def segments(spans: Sequence[Span]) -> list[Span]:
    """Group a page's spans into runs to chunk separately.

    A heading joins the run after it (a heading alone is no passage), and a short
    equation between body text stays inside that body passage; every other role change,
    and every section change, starts a new run.
    """
    out: list[Span] = []
    pending_heading: Span | None = None
    for s in spans:
        role = s.role
        if role == Role.HEADING:
            if pending_heading is None:
                pending_heading = s
            else:
                pending_heading = Span(pending_heading.start, s.end, Role.HEADING, s.section)
            continue
        if (
            role == Role.EQUATION
            and s.end - s.start <= _SHORT_EQUATION_CHARS
            and out
            and out[-1].role == Role.BODY
            and out[-1].section == s.section
        ):
            out[-1] = Span(out[-1].start, s.end, Role.BODY, s.section)
            continue
        start = s.start
        if pending_heading is not None:
            if role != Role.HEADER_FOOTER:
                start = pending_heading.start  # "References" opens the reference run, etc.
            else:
                out.append(Span(pending_heading.start, pending_heading.end, Role.BODY, pending_heading.section))
            pending_heading = None
        if out and out[-1].role == role and out[-1].section == s.section:
            out[-1] = Span(out[-1].start, s.end, role, s.section)
        else:
            out.append(Span(start, s.end, role, s.section))
    if pending_heading is not None:
        if out and out[-1].role == Role.BODY:
            out[-1] = Span(out[-1].start, pending_heading.end, Role.BODY, out[-1].section)
        else:
            out.append(Span(pending_heading.start, pending_heading.end, Role.BODY, pending_heading.section))
    return out
