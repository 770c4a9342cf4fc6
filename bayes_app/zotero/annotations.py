"""The user's Zotero annotations (highlights, underlines, notes …) on synced documents.

Annotations are child items of the PDF attachment; the sync stores them like every other item
(`zotero_items`, `item_type == "annotation"`, `parent_key` = the attachment key), so they follow
Zotero's versions, edits and deletions. This module reads them back, validated:

    for_document(db, owner_id, document_id) -> [Annotation]     (sorted as Zotero sorts them)
    highlights(db, owner_id, document_ids=None) -> [(Document, Annotation)]   text highlights
    highlighted_pages(db, owner_id, document_ids) -> {(document id, page): [highlight text]}
    is_highlighted(quote, texts) -> bool

Rectangles are Zotero's: PDF user-space points, `[x1, y1, x2, y2]` with y up from the page's
bottom-left corner; `page_index` is 0-based, `page` is 1-based (Bayes's page numbers).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlmodel import Session, col, select

from bayes_app.library import documents as lib
from bayes_app.library.quotes import normalize
from bayes_app.models import Document, ZoteroItem

TYPES = ("highlight", "underline", "note", "image", "ink", "text")
TEXT_TYPES = ("highlight", "underline")
DEFAULT_COLOR = "#ffd400"
_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
MAX_RECTS = 200
MAX_TEXT = 7_500  # Zotero truncates annotation text there too


class Annotation(BaseModel):
    """A Zotero annotation on a synced PDF: `rects` are `[x1, y1, x2, y2]` in PDF points (y up
    from the page's bottom-left corner), `page_index` is 0-based, `page` 1-based."""

    model_config = ConfigDict(frozen=True)

    key: str
    type: str
    text: str
    comment: str
    color: str
    page: int
    page_index: int
    page_label: str
    rects: list[list[float]]
    sort_index: str
    attachment_key: str


def _rects(position: object) -> tuple[int, list[list[float]]]:
    """(page index, rectangles) from Zotero's `annotationPosition` (a JSON string); bad values
    give (-1, [])."""
    try:
        pos = json.loads(position) if isinstance(position, str) else position
    except ValueError:
        return -1, []
    if not isinstance(pos, dict):
        return -1, []
    idx = pos.get("pageIndex")
    if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < 100_000:
        return -1, []
    out = []
    for r in (pos.get("rects") or [])[:MAX_RECTS]:
        if (
            isinstance(r, list)
            and len(r) == 4
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in r)
        ):
            x1, y1, x2, y2 = (float(v) for v in r)
            out.append([min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)])
    return idx, out


def parse(key: str, parent_key: str, data: Mapping[str, Any]) -> Annotation | None:
    """An annotation from a stored item's data; None when it is not a usable PDF annotation."""
    kind = data.get("annotationType")
    if kind not in TYPES:
        return None
    idx, rects = _rects(data.get("annotationPosition"))
    if idx < 0:
        return None
    color = str(data.get("annotationColor") or DEFAULT_COLOR)
    return Annotation(
        key=key,
        type=kind,
        text=str(data.get("annotationText") or "")[:MAX_TEXT],
        comment=str(data.get("annotationComment") or "")[:MAX_TEXT],
        color=color.lower() if _COLOR.match(color) else DEFAULT_COLOR,
        page=idx + 1,
        page_index=idx,
        page_label=str(data.get("annotationPageLabel") or "")[:50],
        rects=rects,
        sort_index=str(data.get("annotationSortIndex") or "")[:40],
        attachment_key=parent_key,
    )


def _of_documents(db: Session, docs: list[Document]) -> dict[str, list[Annotation]]:
    """{document id: annotations} for synced documents (one query per library)."""
    by_lib: dict[str, dict[str, Document]] = {}
    for d in docs:
        if d.zotero_library_id and d.zotero_attachment_key:
            by_lib.setdefault(d.zotero_library_id, {})[d.zotero_attachment_key] = d
    out: dict[str, list[Annotation]] = {d.id: [] for d in docs}
    for library_id, atts in by_lib.items():
        keys = list(atts)
        for i in range(0, len(keys), 500):
            rows = db.exec(
                select(ZoteroItem.key, ZoteroItem.parent_key, ZoteroItem.data).where(
                    ZoteroItem.library_id == library_id,
                    col(ZoteroItem.parent_key).in_(keys[i : i + 500]),
                    ZoteroItem.item_type == "annotation",
                    ZoteroItem.trashed == False,
                )
            )
            for key, parent_key, data in rows:
                parent = parent_key or ""  # never empty: the rows were selected by it
                a = parse(key, parent, data or {})
                if a is not None:
                    out[atts[parent].id].append(a)
    for anns in out.values():
        anns.sort(key=lambda a: (a.sort_index, a.key))
    return out


def for_document(db: Session, owner_id: str, document_id: str) -> list[Annotation]:
    """A document's synced annotations (none for documents that did not come from Zotero).
    Another owner's document is `NotFound`."""
    doc = lib.get_owned(db, owner_id, document_id)
    return _of_documents(db, [doc])[doc.id]


def highlights(db: Session, owner_id: str, document_ids: list[str] | None = None) -> list[tuple[Document, Annotation]]:
    """The owner's text highlights/underlines (with text and rectangles), by document."""
    q = select(Document).where(Document.owner_id == owner_id, col(Document.zotero_library_id).is_not(None))
    if document_ids is not None:
        q = q.where(col(Document.id).in_(document_ids))
    docs = list(db.exec(q))
    found = _of_documents(db, docs)
    return [(d, a) for d in docs for a in found[d.id] if a.type in TEXT_TYPES and a.text.strip() and a.rects]


def highlighted_pages(db: Session, owner_id: str, document_ids: list[str]) -> dict[tuple[str, int], list[str]]:
    """{(document id, page): [highlighted text]} for the given documents."""
    out: dict[tuple[str, int], list[str]] = {}
    for d, a in highlights(db, owner_id, document_ids):
        out.setdefault((d.id, a.page), []).append(a.text)
    return out


def is_highlighted(quote: str, texts: list[str]) -> bool:
    """Whether a quote lies in (or contains, or overlaps by most of its words) a highlight."""
    q = normalize(quote).text
    if not q:
        return False
    qw = set(q.split())
    for t in texts:
        h = normalize(t).text
        if not h:
            continue
        if q in h or h in q:
            return True
        hw = set(h.split())
        if len(qw & hw) >= 0.6 * min(len(qw), len(hw)) and len(qw & hw) >= 5:
            return True
    return False


def region_of(a: Annotation) -> dict:
    """A citation's `region` for a passage the user highlighted (page rectangles, colour)."""
    return {
        "page_index": a.page_index,
        "rects": a.rects,
        "annotation_key": a.key,
        "color": a.color,
        "highlighted": True,
    }


def highlights_on(db: Session, spots: list[tuple[str, int, str]]) -> list[Annotation | None]:
    """For each (document id, page, text): the user's highlight that text lies in or covers, if any."""
    ids = {d for d, _, _ in spots}
    if not ids:
        return []
    docs = list(
        db.exec(select(Document).where(col(Document.id).in_(ids), col(Document.zotero_library_id).is_not(None)))
    )
    found = _of_documents(db, docs) if docs else {}
    out: list[Annotation | None] = []
    for doc_id, page, text in spots:
        out.append(
            next(
                (
                    a
                    for a in found.get(doc_id, [])
                    if a.type in TEXT_TYPES and a.page == page and a.text.strip() and is_highlighted(text, [a.text])
                ),
                None,
            )
        )
    return out


def prefer_highlighted(db: Session, hits: list[dict]) -> list[dict]:
    """Search hits (dicts with document_id, page, text) with `highlighted` and `highlight` (the
    region) set, the strong highlighted ones first: the user's highlights are preferred evidence."""
    marks = highlights_on(
        db, [(str(h.get("document_id")), int(h.get("page") or 0), str(h.get("text") or "")) for h in hits]
    )
    out = []
    for h, a in zip(hits, marks):
        out.append({**h, "highlighted": a is not None, "highlight": region_of(a) if a is not None else None})
    if not any(h["highlighted"] for h in out):
        return out
    return sorted(out, key=lambda h: (bool(h.get("weak")), not h["highlighted"]))
