"""Export a map or a subtree: Markdown prose with numbered citations, DOCX, BibTeX, JSON.

Citations are numbered in order of first use; the reference list gives author, year and
page: `[1] Lovelace & Turing (2024), Small Models, p. 3`.

    markdown(db, owner_id, map_id, node_id=None) -> str
    markdown_with_references(db, owner_id, map_id, node_id=None) -> (markdown, its reference list)
    docx_bytes(db, owner_id, map_id, node_id=None) -> bytes
    bibtex(db, owner_id, map_id, node_id=None) -> str
    as_json(db, owner_id, map_id) -> dict   (= service.map_view)
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session

from bayes_app.maps import service
from bayes_app.models import Citation, Document, MapNode, NodeKind


@dataclass
class _Refs:
    """Numbering of cited sources: one number per (document, page)."""

    numbers: dict[tuple[str, int], int] = field(default_factory=dict)
    docs: dict[str, Document] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)  # key -> title of a removed source

    def number(self, c: Citation) -> int:
        doc_key = c.document_id or f"removed:{c.source_title or ''}"
        if c.document_id is None:
            self.removed[doc_key] = c.source_title or "Untitled"
        key = (doc_key, c.page)
        if key not in self.numbers:
            self.numbers[key] = len(self.numbers) + 1
        return self.numbers[key]

    def entries(self) -> list[tuple[int, str]]:
        out = []
        for (doc_key, page), n in self.numbers.items():
            if doc_key in self.removed:
                out.append((n, f"{self.removed[doc_key]}, p. {page} (source removed from the library)"))
            else:
                out.append((n, reference(self.docs.get(doc_key), page)))
        return out


def _surname(name: str) -> str:
    name = name.strip()
    if "," in name:
        return name.split(",")[0].strip()
    return name.split()[-1] if name.split() else name


def author_label(doc: Document | None) -> str:
    authors = list(doc.authors or []) if doc else []
    if not authors:
        return "Unknown author"
    if len(authors) == 1:
        return _surname(authors[0])
    if len(authors) == 2:
        return f"{_surname(authors[0])} & {_surname(authors[1])}"
    return f"{_surname(authors[0])} et al."


def reference(doc: Document | None, page: int) -> str:
    year = doc.year if doc and doc.year else "n.d."
    title = (doc.title or doc.filename) if doc else "Deleted document"
    return f"{author_label(doc)} ({year}), {title}, p. {page}"


@dataclass
class _Tree:
    root: MapNode
    kids: dict[str | None, list[MapNode]]
    cits: dict[str, list[Citation]]
    refs: _Refs


def _tree(db: Session, owner_id: str, map_id: str, node_id: str | None) -> tuple[Any, _Tree]:
    m = service.get_map(db, owner_id, map_id)
    nodes = service._nodes(db, map_id)
    root = service.get_node(db, owner_id, map_id, node_id) if node_id else service.root_of(db, map_id)
    cits: dict[str, list[Citation]] = {}
    refs = _Refs()
    for c, d in service.map_citations(db, map_id):
        cits.setdefault(c.node_id, []).append(c)
        if d is not None:
            refs.docs[d.id] = d
    return m, _Tree(root, service.children_index(nodes), cits, refs)


def _marks(t: _Tree, n: MapNode) -> str:
    nums = sorted({t.refs.number(c) for c in t.cits.get(n.id, [])})
    return "".join(f"[{k}]" for k in nums)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


def _blocks(t: _Tree) -> list[tuple[str, Any]]:
    """The subtree as ("heading", (level, text)) / ("para", text) blocks, depth first."""
    out: list[tuple[str, Any]] = []
    contradicts = NodeKind.COUNTERPOINT

    def walk(n: MapNode, level: int) -> None:
        kids = t.kids.get(n.id, [])
        if n.kind in (NodeKind.QUESTION, NodeKind.THEME, NodeKind.CHAPTER) or (kids and n.kind == NodeKind.NOTE):
            out.append(("heading", (min(level, 6), n.title or "Untitled")))
            if n.body.strip():
                out.append(("para", n.body.strip()))
            leaf_text = []
            for k in kids:
                if not t.kids.get(k.id) and k.kind in (NodeKind.CLAIM, contradicts, NodeKind.NOTE):
                    leaf_text.append(_claim_sentence(t, k))
                else:
                    if leaf_text:
                        out.append(("para", " ".join(leaf_text)))
                        leaf_text = []
                    walk(k, level + 1)
            if leaf_text:
                out.append(("para", " ".join(leaf_text)))
        else:
            out.append(("para", _claim_sentence(t, n)))
            for k in kids:
                walk(k, level + 1)

    walk(t.root, 1)
    return out


def _claim_sentence(t: _Tree, n: MapNode) -> str:
    text = _sentence(n.title or n.body)
    if n.kind == NodeKind.COUNTERPOINT:
        text = "In contrast, " + text[:1].lower() + text[1:] if text else text
    marks = _marks(t, n)
    if marks and text.endswith("."):
        text = text[:-1] + f" {marks}."
    elif marks:
        text += f" {marks}"
    if n.body.strip() and n.title.strip():
        text += " " + n.body.strip()
    return text


def markdown(db: Session, owner_id: str, map_id: str, node_id: str | None = None) -> str:
    """The map (or the subtree under `node_id`) as Markdown prose with numbered citations."""
    return markdown_with_references(db, owner_id, map_id, node_id)[0]


def markdown_with_references(db: Session, owner_id: str, map_id: str,
                             node_id: str | None = None) -> tuple[str, str]:
    """`markdown()` and, on its own, its reference list ("## References" and the numbered
    entries; "" when nothing is cited). A node's body may hold a "## References" of its own
    (a saved synthesis), so the list cannot be found by searching the Markdown."""
    m, t = _tree(db, owner_id, map_id, node_id)
    lines: list[str] = []
    for kind, value in _blocks(t):
        if kind == "heading":
            level, text = value
            lines.append(f"{'#' * level} {text}\n")
        else:
            lines.append(value + "\n")
    refs: list[str] = []
    entries = t.refs.entries()
    if entries:
        refs = ["## References\n", *(f"{n}. {ref}" for n, ref in entries), ""]
    lines.extend(refs)
    if m.offline:
        lines.append("_Built in offline mode (extractive: claims are quoted sentences)._\n")
    return "\n".join(lines).rstrip() + "\n", "\n".join(refs).strip()


def docx_bytes(db: Session, owner_id: str, map_id: str, node_id: str | None = None) -> bytes:
    """The same prose as a Word document."""
    from docx import Document as Docx

    _m, t = _tree(db, owner_id, map_id, node_id)
    doc = Docx()
    for kind, value in _blocks(t):
        if kind == "heading":
            level, text = value
            doc.add_heading(text, level=min(level - 1, 9))
        else:
            doc.add_paragraph(value)
    entries = t.refs.entries()
    if entries:
        doc.add_heading("References", level=1)
        for n, ref in entries:
            doc.add_paragraph(f"[{n}] {ref}")
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def _bib_escape(s: str) -> str:
    return re.sub(r"([{}&%$#_])", r"\\\1", s)


def bibtex_key(doc: Document, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z]", "", _surname(doc.authors[0]) if doc.authors else "anon").lower() or "anon"
    base += str(doc.year or "nd")
    first = next((w for w in re.findall(r"[A-Za-z]{4,}", doc.title or "")), "")
    key = base + first.lower()
    k, i = key, 1
    while k in taken:
        i += 1
        k = f"{key}{i}"
    taken.add(k)
    return k


def bibtex(db: Session, owner_id: str, map_id: str, node_id: str | None = None) -> str:
    """The cited sources (of the map or subtree) as BibTeX entries."""
    _m, t = _tree(db, owner_id, map_id, node_id)
    ids = [n.id for n in service.subtree([n for kids in t.kids.values() for n in kids], t.root.id)]
    doc_ids: list[str] = []
    for nid in ids:
        for c in t.cits.get(nid, []):
            if c.document_id is not None and c.document_id not in doc_ids:
                doc_ids.append(c.document_id)
    taken: set[str] = set()
    out = []
    for did in doc_ids:
        d = t.refs.docs.get(did)
        if d is None:
            continue
        fields = [("title", d.title or d.filename)]
        if d.authors:
            fields.append(("author", " and ".join(d.authors)))
        if d.year:
            fields.append(("year", str(d.year)))
        if d.doi:
            fields.append(("doi", d.doi))
        body = ",\n".join(f"  {k} = {{{_bib_escape(v)}}}" for k, v in fields)
        out.append(f"@article{{{bibtex_key(d, taken)},\n{body}\n}}\n")
    return "\n".join(out)


def as_json(db: Session, owner_id: str, map_id: str) -> dict[str, Any]:
    return service.map_view(db, owner_id, map_id)
