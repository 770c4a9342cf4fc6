"""A map as Zotero note HTML: the standalone map note (themes → claims → quotes as nested lists)
and the child note for one cited Zotero item (the claims that cite it).

Everything that comes from users, documents or models (titles, claims, quotes, names) is
escaped with `html.escape`; the only markup is the fixed skeleton written here, and the only
links are `zotero://` links built from keys of 8 capitals or digits."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape

from sqlmodel import Session, col, select

from bayes_app.bidi import inert
from bayes_app.maps import service as maps
from bayes_app.maps.tree import bottom_up
from bayes_app.models import Citation, Document, MapNode, NodeKind, ZoteroLibrary

_KEY = re.compile(r"^[0-9A-Z]{8}$")  # safe in a URL whatever Zotero sends


@dataclass
class MapNotes:
    """What to write for one map: its note, and one child note per cited Zotero item."""

    title: str
    map_note: str
    child_notes: dict[str, str] = field(default_factory=dict)  # parent item key → note HTML


def _e(text: str | None) -> str:
    return escape(" ".join(inert(str(text or "")).split()), quote=True)


def open_pdf_link(library: ZoteroLibrary | None, attachment_key: str | None, page: int) -> str | None:
    """`zotero://open-pdf/…?page=N` (1-based page) for an attachment of a Web API library."""
    if library is None or not attachment_key or not _KEY.match(attachment_key):
        return None
    where = "library" if library.library_type == "user" else f"groups/{int(library.library_key)}"
    return f"zotero://open-pdf/{where}/items/{attachment_key}?page={max(1, int(page))}"


def _source(doc: Document | None, c: Citation) -> str:
    if doc is None:
        return f"{c.source_title or 'Removed source'} (removed from the library)"
    authors = list(doc.authors or [])
    who = authors[0].split(",")[0].split()[-1] if authors and authors[0].split() else "Unknown author"
    if len(authors) > 1:
        who += " et al." if len(authors) > 2 else f" & {authors[1].split(',')[0].split()[-1]}"
    return f"{who} ({doc.year or 'n.d.'}), {doc.title or doc.filename}"


def _citation_li(c: Citation, doc: Document | None, libs: dict[str, ZoteroLibrary]) -> str:
    text = f"“{_e(c.quote)}” — {_e(_source(doc, c))}, p. {int(c.page)}"
    link = open_pdf_link(
        libs.get(doc.zotero_library_id or "") if doc else None, doc.zotero_attachment_key if doc else None, c.page
    )
    if link:
        text += f' <a href="{escape(link, quote=True)}">open in Zotero</a>'
    return f"<li>{text}</li>"


def _node_lis(tops: list[MapNode], kids: dict, cits: dict, docs: dict, libs: dict) -> list[str]:
    """The nested `<li>` of each of `tops` with its subtree, built children first (no recursion)."""
    html: dict[str, str] = {}
    for n in bottom_up(tops, lambda n: kids.get(n.id, [])):
        head = _e(n.title or n.body or "Untitled")
        if n.kind in (NodeKind.THEME, NodeKind.CHAPTER):
            head = f"<strong>{head}</strong>"
        elif n.kind == NodeKind.COUNTERPOINT:
            head = f"<em>In contrast:</em> {head}"
        if n.title.strip() and n.body.strip():
            head += f"<br/>{_e(n.body)}"
        inner = [_citation_li(c, docs.get(c.document_id), libs) for c in cits.get(n.id, [])]
        inner += [html.pop(k.id) for k in kids.get(n.id, [])]
        html[n.id] = f"<li>{head}" + (f"<ul>{''.join(inner)}</ul>" if inner else "") + "</li>"
    return [html[n.id] for n in tops]


def render(db: Session, owner_id: str, map_id: str) -> MapNotes:
    """The notes for a map of `owner_id` (raises the maps' NotFound for another owner's map)."""
    m = maps.get_map(db, owner_id, map_id)
    nodes = maps._nodes(db, map_id)
    kids = maps.children_index(nodes)
    root = maps.root_of(db, map_id)
    cits: dict[str, list[Citation]] = {}
    docs: dict[str, Document] = {}
    for c, d in maps.map_citations(db, map_id):
        cits.setdefault(c.node_id, []).append(c)
        if d is not None:
            docs[d.id] = d
    lib_ids = {d.zotero_library_id for d in docs.values() if d.zotero_library_id}
    libs = (
        {r.id: r for r in db.exec(select(ZoteroLibrary).where(col(ZoteroLibrary.id).in_(lib_ids)))} if lib_ids else {}
    )
    question = _e(root.title) if root.title.strip() and root.title.strip() != m.title.strip() else ""
    parts = [f"<h1>{_e(m.title)}</h1>"]
    if question:
        parts.append(f"<p><strong>Question:</strong> {question}</p>")
    items = _node_lis(kids.get(root.id, []), kids, cits, docs, libs)
    parts.append(f"<ul>{''.join(items)}</ul>" if items else "<p>(The map is empty.)</p>")
    parts.append("<p><em>Written by Bayes; sending the map again updates this note.</em></p>")
    out = MapNotes(m.title, "".join(parts))

    by_item: dict[str, list[tuple[MapNode, Citation]]] = {}
    node_by_id = {n.id: n for n in nodes}
    for node_id, cs in cits.items():
        for c in cs:
            d = docs.get(c.document_id or "")
            if d is None or not d.zotero_item_key or d.zotero_item_key == d.zotero_attachment_key:
                continue  # a standalone attachment cannot carry a child note
            if node_id in node_by_id:
                by_item.setdefault(f"{d.zotero_library_id}:{d.zotero_item_key}", []).append((node_by_id[node_id], c))
    for lk, pairs in by_item.items():
        lis = []
        for n, c in pairs:
            lis.append(
                f"<li>{_e(n.title or n.body)}<ul>{_citation_li(c, docs.get(c.document_id or ''), libs)}</ul></li>"
            )
        out.child_notes[lk] = (
            f"<h2>Bayes: {_e(m.title)}</h2><p>Claims of this map that cite this item:</p><ul>{''.join(lis)}</ul>"
        )
    return out
