"""Passages with numbered sentences: provenance by selection, not by copying.

A model that must cite a passage is shown each passage's sentences with ids and answers with
ids; the quote is then taken from the ids by the system, so it is always verbatim. The
convention (one sentence per line; a passage header line above its sentences):

    Passage 2 (Doc title, p. 7)
    [2.1] First sentence of the passage.
    [2.2] Second sentence.

Pure domain code: used by the researcher (which resolves ids to quotes) and by the offline
provider (which answers such requests by picking ids itself).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bayes_app.search.sparse import tokens

MAX_SENTENCE_CHARS = 600  # a longer "sentence" (a table, a run-on line) is cut at clause marks
_CLAUSE = re.compile(r"(?<=[;:])\s+")
_ID = re.compile(r"^\s*\[?\s*(\d+)\s*[.:,]\s*(\d+)\s*\]?\s*$")
_LINE = re.compile(r"^\[(\d+)\.(\d+)\] (.+)$", re.M)
_HEADER = re.compile(r"^Passage (\d+) \((.*)\)$", re.M)
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s+")
_ABBREVIATIONS = frozenset(
    "e.g i.e fig figs eq eqs et al vs cf dr mr mrs ms no nos vol pp ca approx resp sec ref refs".split()
)


def split_sentences(
    text: str,
    end: re.Pattern[str] = _SENTENCE_END,
    abbreviations: frozenset[str] = _ABBREVIATIONS,
    continues: Callable[[str], bool] | None = None,
) -> list[str]:
    """Sentences of a passage, verbatim: a break at each `end` match, except after one of
    `abbreviations` ("e.g.", "Fig.") or an initial, or where `continues(next character)`."""
    out, start = [], 0
    for m in end.finditer(text):
        before = text[start : m.start()].split()
        last = before[-1].lower().rstrip(".") if before else ""
        if last in abbreviations or (len(last) == 1 and last.isalpha()):
            continue
        nxt = text[m.end() : m.end() + 1]
        if continues is not None and nxt and continues(nxt):
            continue
        out.append(text[start : m.end()].strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


@dataclass(frozen=True, slots=True)
class Sentence:
    id: str  # "passage.sentence", both 1-based
    passage: int
    index: int
    text: str


def sentences_of(n: int, text: str) -> list[Sentence]:
    """The sentences of passage `n`, verbatim, numbered from 1; over-long ones are split
    at clause marks so a quote stays readable."""
    parts: list[str] = []
    for s in split_sentences(" ".join(text.split())):
        if len(s) <= MAX_SENTENCE_CHARS:
            parts.append(s)
            continue
        chunk = ""
        for clause in _CLAUSE.split(s):
            if chunk and len(chunk) + 1 + len(clause) > MAX_SENTENCE_CHARS:
                parts.append(chunk)
                chunk = clause
            else:
                chunk = f"{chunk} {clause}" if chunk else clause
        if chunk:
            parts.append(chunk)
    return [Sentence(f"{n}.{i}", n, i, s) for i, s in enumerate(parts, 1)]


def format_numbered(passages: Iterable[tuple[int, str, str]]) -> str:
    """(n, header, text) per passage → the numbered-sentence convention."""
    blocks = []
    for n, header, text in passages:
        lines = [f"Passage {n} ({' '.join(header.split()) or 'untitled'})"]
        lines += [f"[{s.id}] {s.text}" for s in sentences_of(n, text)]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def parse_numbered(text: str) -> list[Sentence]:
    """The sentences `format_numbered` wrote into `text`."""
    return [
        Sentence(f"{m.group(1)}.{m.group(2)}", int(m.group(1)), int(m.group(2)), m.group(3))
        for m in _LINE.finditer(text)
    ]


def strip_numbered(text: str) -> str:
    """`text` without its numbered sentences and passage headers (what the request asks)."""
    return _HEADER.sub("", _LINE.sub("", text)).strip()


def parse_id(raw: object) -> tuple[int, int] | None:
    """(passage, sentence) from an id as a model may write it: "2.3", "[2.3]", 2.3, "2:3"."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, float):
        raw = repr(raw)
    m = _ID.match(str(raw))
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2))


@dataclass(frozen=True, slots=True)
class Selection:
    """The verbatim quote a list of sentence ids selects, or why it selects none."""

    passage: int | None
    quote: str
    ids: tuple[str, ...]
    problem: str | None = None  # "no_sentences" | "unknown_sentence"


def _coverage(wording_terms: set[str], text: str) -> float:
    return len(wording_terms & set(tokens(text))) / len(wording_terms) if wording_terms else 0.0


def select(raw_ids: object, by_passage: dict[int, list[Sentence]], wording: str = "") -> Selection:
    """The quote the ids select: the valid ids grouped into runs of consecutive sentences of
    one passage; the run whose text covers most of `wording`'s terms wins (the first run on a
    tie), its sentences joined with spaces. Ids naming no shown sentence are dropped; none
    left → `unknown_sentence` (junk) or `no_sentences` (the model gave none)."""
    items = raw_ids if isinstance(raw_ids, list) else ([] if raw_ids in (None, "") else [raw_ids])
    if not items:
        return Selection(None, "", (), "no_sentences")
    valid: list[tuple[int, int]] = []
    for raw in items:
        pid = parse_id(raw)
        if pid is not None and 1 <= pid[1] <= len(by_passage.get(pid[0], [])) and pid not in valid:
            valid.append(pid)
    if not valid:
        return Selection(None, "", (), "unknown_sentence")
    runs: list[list[tuple[int, int]]] = []
    for passage in dict.fromkeys(p for p, _ in valid):  # passages in the order first named
        for i in sorted(i for p, i in valid if p == passage):
            if runs and runs[-1][-1] == (passage, i - 1):
                runs[-1].append((passage, i))
            else:
                runs.append([(passage, i)])
    terms = set(tokens(wording))
    texts = [" ".join(by_passage[p][i - 1].text for p, i in run) for run in runs]
    best = max(range(len(runs)), key=lambda k: (_coverage(terms, texts[k]), -k))
    run = runs[best]
    return Selection(run[0][0], texts[best], tuple(f"{p}.{i}" for p, i in run))
