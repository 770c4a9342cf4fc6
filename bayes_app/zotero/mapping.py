"""Zotero JSON → what Bayes keeps: compact item data, document metadata, collection paths."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FILE_LINK_MODES = ("imported_file", "imported_url")  # the file lives in Zotero Storage
PDF = "application/pdf"
_YEAR = re.compile(r"\b(1[5-9]\d\d|2[0-9]\d\d)\b")
_DOI = re.compile(r"\b(10\.\d{4,9}/\S+)", re.I)
# Fields kept per item (the rest of Zotero's JSON is not needed to rebuild a document).
_KEEP = (
    "itemType",
    "title",
    "creators",
    "date",
    "DOI",
    "extra",
    "collections",
    "parentItem",
    "linkMode",
    "contentType",
    "filename",
    "md5",
    "deleted",
    "url",
    "publicationTitle",
    "volume",
    "issue",
    "pages",
    "citationKey",
    "proceedingsTitle",
    "conferenceName",
    "bookTitle",
    "annotationType",
    "annotationText",
    "annotationComment",
    "annotationColor",
    "annotationPageLabel",
    "annotationPosition",
    "annotationSortIndex",
)


def compact(data: dict) -> dict:
    """The part of an item's `data` Bayes stores."""
    out = {k: data[k] for k in _KEEP if k in data}
    if "creators" in out:
        out["creators"] = [
            {k: c[k] for k in ("creatorType", "firstName", "lastName", "name") if k in c} for c in out["creators"]
        ][:100]
    return out


def is_trashed(data: dict) -> bool:
    return bool(data.get("deleted"))


def is_pdf_attachment(data: dict) -> bool:
    return data.get("itemType") == "attachment" and (
        data.get("contentType") == PDF or str(data.get("filename", "")).lower().endswith(".pdf")
    )


def has_stored_file(data: dict) -> bool:
    return data.get("linkMode") in FILE_LINK_MODES


def creator_name(c: dict) -> str:
    if c.get("name"):
        return str(c["name"]).strip()
    return " ".join(p for p in (str(c.get("firstName", "")).strip(), str(c.get("lastName", "")).strip()) if p)


@dataclass
class Metadata:
    title: str
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    doi: str | None = None
    collection_keys: list[str] = field(default_factory=list)


def metadata(item: dict | None, attachment: dict) -> Metadata:
    """Document metadata from the parent item (or a standalone attachment itself)."""
    src = item or attachment
    creators = [c for c in src.get("creators", []) if c.get("creatorType", "author") in ("author", "editor")]
    authors = [n for n in (creator_name(c) for c in creators) if n][:100]
    year = None
    if m := _YEAR.search(str(src.get("date", ""))):
        year = int(m.group(1))
    doi = str(src.get("DOI", "") or "").strip() or None
    if not doi and (m := _DOI.search(str(src.get("extra", "")))):
        doi = m.group(1)
    title = str(src.get("title", "") or "").strip() or str(attachment.get("filename", "") or "").strip()
    return Metadata(
        title=title[:1000],
        authors=[a[:200] for a in authors],
        year=year,
        doi=(doi or None) and doi[:300],
        collection_keys=list(src.get("collections", [])),
    )


def collection_paths(rows: dict[str, tuple[str, str | None]]) -> dict[str, str]:
    """{key: (name, parent key)} → {key: "Parent / Child"}; cycles and missing parents end the path."""
    out: dict[str, str] = {}
    for key in rows:
        parts: list[str] = []
        seen: set[str] = set()
        k: str | None = key
        while k and k in rows and k not in seen:
            seen.add(k)
            name, parent = rows[k]
            parts.append(name.strip() or k)
            k = parent
        out[key] = " / ".join(reversed(parts))[:300]
    return out
