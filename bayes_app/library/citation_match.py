"""Match a parsed reference to a paper of the library: by DOI, else normalised title + year,
else a fuzzy title (rapidfuzz ratio ≥ 90 over normalised titles).

Pure functions and one in-memory index; no database. Fuzzy candidates are blocked by the
rarest words of the reference's title (an inverted index over the library's titles), so a
reference is compared with a handful of papers instead of the whole library.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz, process

FUZZY_MIN = 90.0  # rapidfuzz ratio (0–100) for a fuzzy title match
_MIN_TITLE_WORDS = 3  # shorter titles ("Introduction", "Attention") match only exactly with a year
_MIN_KEY_WORDS = 2  # a missing paper is listed by a title of at least two words ("Deep Learning")
_BLOCK_WORDS = 3  # the reference's rarest title words used to find candidates
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.I)
_NON_WORD = re.compile(r"[^\w]+")
_STOP = frozenset("a an and are as at by for from in into is of on or the to via with".split())


def normalize_doi(doi: str | None) -> str | None:
    """A DOI in its comparable form (no resolver prefix, lower case, no trailing dot)."""
    if not doi:
        return None
    d = _DOI_PREFIX.sub("", doi.strip()).strip().rstrip(".,;").lower()
    return d if d.startswith("10.") and "/" in d else None


def normalize_title(title: str | None) -> str:
    """Lower case, accents and punctuation removed, spaces collapsed ("" when absent)."""
    if not title:
        return ""
    t = title if title.isascii() else _strip_accents(title)
    return " ".join(_NON_WORD.sub(" ", t.casefold()).replace("_", " ").split())


def _strip_accents(text: str) -> str:
    t = unicodedata.normalize("NFKD", text.replace("\ufffe", "").replace("\u00ad", ""))
    return "".join(ch for ch in t if not unicodedata.combining(ch))


_NUMBER = re.compile(r"\w*\d\w*")


def _numbers(norm_title: str) -> frozenset[str]:
    return frozenset(_NUMBER.findall(norm_title))


def _words(norm_title: str) -> list[str]:
    return [w for w in norm_title.split() if w not in _STOP and len(w) > 1]


@dataclass(frozen=True)
class Paper:
    """What the matcher knows of one library document."""

    id: str
    title: str = ""
    year: int | None = None
    doi: str | None = None


@dataclass(frozen=True)
class Match:
    document_id: str
    how: str  # "doi" | "title" | "fuzzy"
    score: float  # 100 for doi/title


class PaperIndex:
    """The library's papers, indexed by DOI, by exact normalised title and by title word."""

    def __init__(self, papers: Iterable[Paper] = ()) -> None:
        self._by_doi: dict[str, str] = {}
        self._by_title: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
        self._by_word: dict[str, set[str]] = defaultdict(set)
        self._norm: dict[str, tuple[str, int | None, frozenset[str]]] = {}
        for p in papers:
            self.add(p)

    def __len__(self) -> int:
        return len(self._norm)

    def add(self, paper: Paper) -> None:
        """Index one paper (a paper without a title or DOI cannot be matched)."""
        norm = normalize_title(paper.title)
        self._norm[paper.id] = (norm, paper.year, _numbers(norm))
        if d := normalize_doi(paper.doi):
            self._by_doi.setdefault(d, paper.id)
        if norm:
            self._by_title[norm].append((paper.id, paper.year))
            for w in set(_words(norm)):
                self._by_word[w].add(paper.id)

    def match(
        self, title: str | None, year: int | None = None, doi: str | None = None, *, exclude: str | None = None
    ) -> Match | None:
        """The library paper a reference names, or None. ``exclude`` is the citing paper (a
        paper never cites itself)."""
        if (d := normalize_doi(doi)) and (hit := self._by_doi.get(d)) and hit != exclude:
            return Match(hit, "doi", 100.0)
        norm = normalize_title(title)
        words = _words(norm)
        if not norm:
            return None
        for pid, pyear in self._by_title.get(norm, ()):
            if (
                pid != exclude
                and (year is None or pyear is None or abs(year - pyear) <= 1)
                and (len(words) >= _MIN_TITLE_WORDS or (year is not None and pyear == year))
            ):
                return Match(pid, "title", 100.0)
        if len(words) < _MIN_TITLE_WORDS:
            return None
        return self._fuzzy(norm, words, year, exclude)

    def _fuzzy(self, norm: str, words: list[str], year: int | None, exclude: str | None) -> Match | None:
        known = [w for w in set(words) if w in self._by_word]
        rare = sorted(known, key=lambda w: len(self._by_word[w]))[:_BLOCK_WORDS]
        candidates: set[str] = set()
        for w in rare:
            candidates |= self._by_word[w]
        pool = []
        numbers = _numbers(norm)
        lo, hi = len(norm) * 0.8, len(norm) * 1.25  # a ratio ≥ 90 needs lengths this close
        for pid in candidates:
            ptitle, pyear, pnumbers = self._norm[pid]
            if (
                pid == exclude
                or not lo <= len(ptitle) <= hi
                or pnumbers != numbers
                or (year is not None and pyear is not None and abs(year - pyear) > 1)
            ):
                continue  # numbers differ: "Part 1" vs "Part 2", "GPT-3" vs "GPT-4" are other papers
            pool.append(pid)
        if not pool:
            return None
        hit = process.extractOne(norm, [self._norm[p][0] for p in pool], scorer=fuzz.ratio, score_cutoff=FUZZY_MIN)
        return Match(pool[hit[2]], "fuzzy", float(hit[1])) if hit else None


def reference_key(title: str | None, doi: str | None) -> str | None:
    """The grouping key of a reference that matches no library paper ("doi:…" or "t:…";
    None when it has neither a DOI nor a title of two words)."""
    if d := normalize_doi(doi):
        return "doi:" + d
    norm = normalize_title(title)
    return "t:" + norm if len(_words(norm)) >= _MIN_KEY_WORDS else None
