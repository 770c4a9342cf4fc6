"""What a citation of a library paper needs: entry type, venue, volume, issue, pages, DOI,
arXiv id, URL and citation key — from the paper's metadata, its Zotero item (a Better BibTeX
key included) or the venue line its first page prints ("Journal 10 (2012) 100-120")."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlmodel import Session, select

from bayes_app.models import Document, PageText, ZoteroItem

_YEAR = r"((?:19|20)\d{2})"
_PAGES = r"([A-Za-z]?\d+)\s*[-–—]\s*([A-Za-z]?\d+)"
_JOURNAL = r"([A-Z][A-Za-z.&:,' -]{2,90}?)"
# "Journal of Tests 10 (2012) 100-120", "J. Chem. 12(3) (2019) 45–67"
_VENUE_PAREN = re.compile(
    rf"{_JOURNAL}\s+(\d{{1,4}})\s*(?:\((\d{{1,4}})\)\s*)?\({_YEAR}\)\s*,?\s*(?:pp?\.\s*)?{_PAGES}"
)
# Vancouver header "J Abbr. 2019;12(3):45-67"
_VENUE_VANC = re.compile(rf"{_JOURNAL}\.?\s+{_YEAR};\s*(\d{{1,4}})\s*(?:\((\d{{1,4}})\))?\s*:\s*{_PAGES}")
# ACS header "J. Chem. Inf. Model. 2019, 59, 1324-1337"
_VENUE_ACS = re.compile(rf"{_JOURNAL}\s+{_YEAR},\s*(\d{{1,4}}),\s*{_PAGES}")
_VOLUME = re.compile(r"\bvol(?:\.|ume)\s*(\d+)(?:,?\s*(?:no\.|issue)\s*(\d+))?", re.I)
_ARXIV = re.compile(r"\barXiv:\s*(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})", re.I)
_ARXIV_STAMP = re.compile(
    r"\barXiv:\s*(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})v\d+\s*\[", re.I
)  # the margin stamp
_CITEKEY = re.compile(r"^\s*Citation Key:\s*(\S+)\s*$", re.I | re.M)
_ZOTERO_TYPES = {
    "journalArticle": "article",
    "magazineArticle": "article",
    "newspaperArticle": "article",
    "conferencePaper": "inproceedings",
    "book": "book",
    "bookSection": "incollection",
    "thesis": "phdthesis",
    "report": "techreport",
    "preprint": "misc",
    "manuscript": "unpublished",
}


@dataclass
class BibInfo:
    """One paper as a bibliography entry (BibTeX type; CSL type derived)."""

    entry_type: str = "misc"  # article | inproceedings | book | incollection | phdthesis | techreport | misc
    title: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str | None = None  # journal, proceedings or book title
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    doi: str | None = None
    arxiv: str | None = None
    url: str | None = None
    citekey: str | None = None  # the user's Zotero / Better BibTeX key


def venue_fields(first_page: str) -> dict[str, str]:
    """Venue, volume, issue, pages (and year) from a first page's venue line; arXiv id."""
    lines = [" ".join(x.split()) for x in first_page.replace("\ufffe", "").splitlines()[:40]]
    out: dict[str, str] = {}
    for line in lines:  # the venue line is one printed line
        if m := _VENUE_PAREN.search(line):
            out = {"venue": m[1], "volume": m[2], "issue": m[3] or "", "year": m[4], "pages": f"{m[5]}–{m[6]}"}
        elif m := _VENUE_VANC.search(line):
            out = {"venue": m[1], "year": m[2], "volume": m[3], "issue": m[4] or "", "pages": f"{m[5]}–{m[6]}"}
        elif m := _VENUE_ACS.search(line):
            out = {"venue": m[1], "year": m[2], "volume": m[3], "pages": f"{m[4]}–{m[5]}"}
        elif m := _VOLUME.search(line):
            out = {"volume": m[1], "issue": m[2] or ""}
        if out:
            break
    text = "\n".join(lines)
    if "venue" in out:
        out["venue"] = out["venue"].strip(" ,;:-")
    if m := _ARXIV_STAMP.search(first_page) or _ARXIV.search(text):
        out["arxiv"] = m[1]
    return {k: v for k, v in out.items() if v}


def _zotero_item(db: Session, doc: Document) -> dict:
    if not (doc.zotero_library_id and doc.zotero_item_key):
        return {}
    item = db.exec(
        select(ZoteroItem).where(ZoteroItem.library_id == doc.zotero_library_id, ZoteroItem.key == doc.zotero_item_key)
    ).first()
    return dict(item.data) if item else {}


def bib_info(db: Session, doc: Document) -> BibInfo:
    """The entry for ``doc``: its Zotero item's fields win, then its first page's venue line."""
    info = BibInfo(title=doc.title or doc.filename, authors=list(doc.authors or []), year=doc.year, doi=doc.doi)
    z = _zotero_item(db, doc)
    if z:
        info.entry_type = _ZOTERO_TYPES.get(str(z.get("itemType", "")), "misc")
        venues = ("publicationTitle", "proceedingsTitle", "bookTitle", "conferenceName")
        info.venue = next((str(z[k]).strip() for k in venues if str(z.get(k) or "").strip()), None)
        info.volume = str(z.get("volume") or "").strip() or None
        info.issue = str(z.get("issue") or "").strip() or None
        info.pages = str(z.get("pages") or "").strip() or None
        info.url = str(z.get("url") or "").strip() or None
        key = str(z.get("citationKey") or "").strip()
        if not key and (m := _CITEKEY.search(str(z.get("extra", "")))):
            key = m[1]
        info.citekey = key or None
    page = db.get(PageText, (doc.id, 1))
    found = venue_fields(page.text) if page is not None else {}
    info.venue = info.venue or found.get("venue")
    info.volume = info.volume or found.get("volume")
    info.issue = info.issue or found.get("issue")
    info.pages = info.pages or found.get("pages")
    info.arxiv = found.get("arxiv")
    if info.year is None and found.get("year"):
        info.year = int(found["year"])
    if info.entry_type == "misc" and info.venue and (info.volume or info.pages or info.doi):
        info.entry_type = "article"  # a journal's venue line: an article
    if info.doi and not info.url:
        info.url = f"https://doi.org/{info.doi}"
    elif info.arxiv and not info.url:
        info.url = f"https://arxiv.org/abs/{info.arxiv}"
    return info
