"""Find a sentence's citations: numbered `[1]`, `[1–3]`, `[1, 4]`; author–year `(Smith et al., 2020)`,
`(Smith & Lee 2019; Doe 2021)`, `Smith et al. (2020)`; LaTeX `\\cite{key}`, `\\citep{a,b}`; and the
visible text of a Zotero Word field, whose item keys the reader took from its field code."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from bayes_app.audits.draft import Cite, Ref
from bayes_app.audits.references import first_surname

_LATEX = re.compile(
    r"\\(?:cite|citep|citet|citealp|citeauthor|parencite|textcite|autocite|footcite)\*?"
    r"(?:\[[^\]]*\]){0,2}\{([^}]*)\}"
)
_NUMBERED = re.compile(r"\[(\s*\d{1,4}(?:\s*[-–—]\s*\d{1,4})?(?:\s*[,;]\s*\d{1,4}(?:\s*[-–—]\s*\d{1,4})?)*\s*)\]")
_PAREN = re.compile(r"\(([^()]{4,400})\)")
_NAME = r"(?:(?:van|von|de|der|den|da|di|le|la|du)\s+)*[A-Z][\w'’\-]+"
_AUTHORS = rf"(?P<names>{_NAME}(?:\s+et\s+al\.?|,?\s+(?:&|and)\s+{_NAME})?)"
_YEAR = r"(?P<year>(?:19|20)\d{2})(?P<suffix>[a-z]?)"
_AY_PART = re.compile(
    rf"^(?:(?:see|e\.g\.|cf\.|also|i\.e\.)\s*,?\s+)*{_AUTHORS},?\s+{_YEAR}(?:,\s*(?:p|pp)\.?\s*[\d–-]+)?$"
)
_NARRATIVE = re.compile(rf"\b{_AUTHORS}\s+\({_YEAR}\)")
_MAX_RANGE = 50  # "[1–2000]" is not a citation range


def _ascii(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def surname_key(name: str) -> str:
    """The comparable form of an author's surname ("Müller-Lee" → "mullerlee")."""
    return re.sub(r"[^a-z]", "", _ascii(name).casefold())


def author_year_key(names: str, year: str, suffix: str = "") -> str:
    """The key of an author–year citation: first author's surname and the year ("ay:smith:2020")."""
    first = re.split(r"\s+et\s+al|,|\s+&\s+|\s+and\s+", names.strip())[0].split()[-1]
    return f"ay:{surname_key(first)}:{year}{suffix}"


def _numbers(inner: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"[,;]", inner):
        bounds = [int(x) for x in re.split(r"[-–—]", part) if x.strip()]
        if len(bounds) == 2 and 0 <= bounds[1] - bounds[0] <= _MAX_RANGE:
            out.extend(range(bounds[0], bounds[1] + 1))
        elif bounds:
            out.append(bounds[0])
    return out


def find(sentence: str, fields: list[tuple[str, list[str]]] | None = None) -> list[Cite]:
    """The citations of `sentence` in reading order. `fields` are the Zotero Word citations still
    unplaced in the sentence's paragraph, in order (visible text, reference keys "zotero:KEY"):
    the ones found here are taken off the list."""
    found: list[tuple[int, Cite]] = []
    taken: list[tuple[int, int]] = []
    _zotero_fields(sentence, fields, taken, found)
    _bracketed(sentence, taken, found)
    _author_year(sentence, taken, found)
    found.sort(key=lambda x: x[0])
    return [c for _, c in found]


def _free(taken: list[tuple[int, int]], a: int, b: int) -> bool:
    return all(b <= s or a >= e for s, e in taken)


def _zotero_fields(
    sentence: str,
    fields: list[tuple[str, list[str]]] | None,
    taken: list[tuple[int, int]],
    found: list[tuple[int, Cite]],
) -> None:
    """The paragraph's next Zotero fields, while the sentence shows them in order."""
    start = 0
    while fields:
        visible, keys = fields[0]
        at = sentence.find(visible, start)
        if at < 0 or not _free(taken, at, at + len(visible)):
            break
        fields.pop(0)
        taken.append((at, at + len(visible)))
        start = at + len(visible)
        found.extend((at, Cite(marker=visible, key=k)) for k in keys)


def _bracketed(sentence: str, taken: list[tuple[int, int]], found: list[tuple[int, Cite]]) -> None:
    """LaTeX \\cite commands, then numbered markers ("[3]", "[1-4]")."""
    for m in _LATEX.finditer(sentence):
        if _free(taken, m.start(), m.end()):
            taken.append(m.span())
            keys = [k.strip() for k in m.group(1).split(",") if k.strip()]
            found.extend((m.start(), Cite(marker=m.group(0), key=f"bib:{k}")) for k in keys)
    for m in _NUMBERED.finditer(sentence):
        if _free(taken, m.start(), m.end()):
            taken.append(m.span())
            found.extend((m.start(), Cite(marker=m.group(0), key=f"n:{n}")) for n in _numbers(m.group(1)))


def _author_year(sentence: str, taken: list[tuple[int, int]], found: list[tuple[int, Cite]]) -> None:
    """Parenthetical author–year citations ("(Smith, 2020; Lee 2019)"), then narrative ones ("Smith (2020)")."""
    for m in _PAREN.finditer(sentence):
        if not _free(taken, m.start(), m.end()):
            continue
        parts = [p.strip() for p in m.group(1).split(";")]
        hits = [_AY_PART.match(p) for p in parts]
        if parts and all(hits):
            taken.append(m.span())
            found.extend(
                (m.start(), Cite(marker=m.group(0), key=author_year_key(h["names"], h["year"], h["suffix"])))
                for h in hits
                if h
            )
    for m in _NARRATIVE.finditer(sentence):
        if _free(taken, m.start(), m.end()):
            taken.append(m.span())
            found.append((m.start(), Cite(marker=m.group(0), key=author_year_key(m["names"], m["year"], m["suffix"]))))


def strip_markers(sentence: str, cites: Iterable[Cite]) -> str:
    """The sentence without its citation markers (what the claim says, for judging it)."""
    out = sentence
    for c in cites:
        out = out.replace(c.marker, " ")
    out = re.sub(r"\s+([.,;:!?])", r"\1", out)
    return " ".join(out.split())


def link_author_year(refs: dict[str, Ref]) -> dict[str, str]:
    """Author–year keys of the reference list's entries ("ay:smith:2020" → "n:3"), so an
    author–year citation points to its entry; a second entry of the same author and year
    takes the suffix b, the next c …"""
    out: dict[str, str] = {}
    for key, ref in refs.items():
        if not ref.authors or not ref.year:
            continue
        base = f"ay:{surname_key(first_surname(ref.authors[0]))}:{ref.year}"
        if base not in out:
            out[base] = key
            out[base + "a"] = key
        else:
            for suffix in "bcdefgh":
                if base + suffix not in out:
                    out[base + suffix] = key
                    break
    return out
