"""Export a map or a subtree: Markdown prose with numbered citations, DOCX, JSON.

Citations are numbered in order of first use; the reference list gives author, year and
page: `[1] Lovelace & Turing (2024), Small Models, p. 3`.

    markdown(db, owner_id, map_id, node_id=None) -> str
    outline(db, owner_id, map_id, node_id=None) -> Outline (markdown + what each number cites)
    inline_citations(text, outline) -> (text with "[n]" as "(Author Year, p. N)", numbers used)
    checked_markers(text, outline) -> (text without markers its sentence doesn't match, dropped)
    docx_bytes(db, owner_id, map_id, node_id=None) -> bytes
    (BibTeX and LaTeX: maps/export_tex.py)
    as_json(db, owner_id, map_id) -> dict   (= service.map_view)
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pylatexenc.latexencode import RULE_DICT, UnicodeToLatexConversionRule, UnicodeToLatexEncoder
from sqlmodel import Session

from bayes_app.bidi import inert
from bayes_app.library.bibinfo import bib_info
from bayes_app.maps import csl, service
from bayes_app.maps.tree import walk
from bayes_app.maps.views import unshared_documents
from bayes_app.models import Citation, Document, MapNode, NodeKind

UNSHARED = "No longer shared with you"  # a cited collection's document, unshared since


@dataclass
class _Refs:
    """Numbering of cited sources: one number per paper (its pages listed in its entry)."""

    numbers: dict[str, int] = field(default_factory=dict)
    docs: dict[str, Document] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)  # key -> title of a removed source
    cited: dict[int, list[Citation]] = field(default_factory=dict)  # number -> its citations
    pages: dict[int, set[int]] = field(default_factory=dict)  # number -> the pages cited
    hidden: set[str] = field(default_factory=set)  # documents no longer shared with the map's owner

    def number(self, c: Citation) -> int:
        doc_key = c.document_id or f"removed:{c.source_title or ''}"
        if c.document_id is None:
            self.removed[doc_key] = c.source_title or "Untitled"
        if doc_key not in self.numbers:
            self.numbers[doc_key] = len(self.numbers) + 1
        n = self.numbers[doc_key]
        self.pages.setdefault(n, set()).add(c.page)
        if all(x.id != c.id for x in self.cited.setdefault(n, [])):
            self.cited[n].append(c)
        return n

    def inline(self) -> dict[int, str]:
        """number -> its author-year label: "Yang et al. 2025, pp. 4, 7"."""
        out = {}
        for doc_key, n in self.numbers.items():
            where = pages_label(self.pages.get(n, set()))
            if doc_key in self.removed:
                out[n] = f"{self.removed[doc_key]}, {where}"
            elif doc_key in self.hidden:
                out[n] = f"{UNSHARED}, {where}"
            else:
                doc = self.docs.get(doc_key)
                out[n] = f"{author_label(doc)} {doc.year if doc and doc.year else 'n.d.'}, {where}"
        return out

    def entries(self) -> list[tuple[int, str]]:
        out = []
        for doc_key, n in self.numbers.items():
            where = pages_label(self.pages.get(n, set()))
            if doc_key in self.removed:
                out.append((n, f"{self.removed[doc_key]}, {where} (source removed from the library)"))
            elif doc_key in self.hidden:
                out.append((n, f"{UNSHARED}, {where}"))
            else:
                out.append((n, reference(self.docs.get(doc_key), where)))
        return out


def pages_label(pages: set[int]) -> str:
    """ "p. 4" or "pp. 1, 4, 14"."""
    ps = sorted(pages)
    return f"p. {ps[0]}" if len(ps) == 1 else "pp. " + ", ".join(map(str, ps))


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


def reference(doc: Document | None, where: int | str) -> str:
    """`Author (year), Title, p. 3` (`where`: a page or a pages label)."""
    year = doc.year if doc and doc.year else "n.d."
    title = (doc.title or doc.filename) if doc else "Deleted document"
    return f"{author_label(doc)} ({year}), {title}, {f'p. {where}' if isinstance(where, int) else where}"


@dataclass
class _Tree:
    root: MapNode
    kids: dict[str | None, list[MapNode]]
    cits: dict[str, list[Citation]]
    refs: _Refs
    paged: bool = False  # markers carry their pages: "[2, p. 4]" (exports), else "[2]" (writers' outline)


def _tree(db: Session, owner_id: str, map_id: str, node_id: str | None, paged: bool = False) -> tuple[Any, _Tree]:
    m = service.get_map(db, owner_id, map_id)
    nodes = service._nodes(db, map_id)
    root = service.get_node(db, owner_id, map_id, node_id) if node_id else service.root_of(db, map_id)
    cits: dict[str, list[Citation]] = {}
    pairs = service.map_citations(db, map_id)
    refs = _Refs(hidden=unshared_documents(db, m.owner_id, pairs))
    for c, d in pairs:
        cits.setdefault(c.node_id, []).append(c)
        if d is not None and d.id not in refs.hidden:  # an unshared document's metadata stays out
            refs.docs[d.id] = d
    return m, _Tree(root, service.children_index(nodes), cits, refs, paged)


# a bracketed number (list) as it could appear in source text: "[5]", "[1, 3]", "[2–4]"
_SOURCE_BRACKETS = re.compile(r"(?<!\\)\[(\s*\d+(?:\s*[,;–-]\s*\d+)*\s*)\]")


def escape_brackets(text: str) -> str:
    """Source text with its bracketed numbers escaped (Markdown shows them as written; they
    can never be read as citation markers)."""
    return _SOURCE_BRACKETS.sub(lambda m: "\\[" + m.group(1) + "\\]", text)


def unescape_brackets(text: str) -> str:
    return text.replace("\\[", "[").replace("\\]", "]")


def _marks(t: _Tree, n: MapNode) -> str:
    return _marker(t, t.cits.get(n.id, []))


def _marker(t: _Tree, cits: list[Citation]) -> str:
    """ "[1][3]", or with pages "[1, p. 3; 3, pp. 4, 7]" (each source with the pages this claim cites)."""
    pages: dict[int, set[int]] = {}
    for c in cits:
        pages.setdefault(t.refs.number(c), set()).add(c.page)
    if not pages:
        return ""
    if not t.paged:
        return "".join(f"[{k}]" for k in sorted(pages))
    return "[" + "; ".join(f"{k}, {pages_label(pages[k])}" for k in sorted(pages)) + "]"


# an export's marker with pages: "[2, p. 4]", "[1, p. 3; 2, pp. 4, 7]"
_PAGED = re.compile(r"(?<!\\)\[(\d+, pp?\. \d+(?:, \d+)*(?:; \d+, pp?\. \d+(?:, \d+)*)*)\]")
_PAGED_ONE = re.compile(r"(\d+), pp?\. (\d+(?:, \d+)*)")


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>!|~&])")  # with [ ] escaped, "(" never opens a link


def md_text(text: str) -> str:
    """Untrusted text (titles, quotes, names) as literal Markdown: every character Markdown
    could read as syntax is escaped, so no HTML, link (`javascript:`), image or citation marker
    can come out of source text."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(inert(text).split()))


def _plain(text: str) -> str:
    return text


def _blocks(t: _Tree, esc: Callable[[str], str] = _plain) -> list[tuple[str, Any]]:
    """The subtree as ("heading", (level, text)) / ("para", text) blocks, depth first; `esc`
    turns untrusted text into the target format's literal text."""
    out: list[tuple[str, Any]] = []

    # Steps, done in order by `walk` (no recursion): ("node", n, level) writes a node and
    # returns the steps of its children; ("leaves", [claims], _) one paragraph of leaf claims;
    # ("synthesis", n, level) a synthesis note. Citation numbers are given as steps are done.
    def expand(step: tuple[str, Any, int]) -> list[tuple[str, Any, int]]:
        what, n, level = step
        if what == "leaves":
            out.append(("para", " ".join(_claim_sentence(t, k, esc) for k in n)))
            return []
        if what == "synthesis":
            out.extend(_synthesis_blocks(t, n, level, esc))
            return []
        kids = t.kids.get(n.id, [])
        if not (n.kind in (NodeKind.QUESTION, NodeKind.THEME, NodeKind.CHAPTER) or (kids and n.kind == NodeKind.NOTE)):
            out.append(("para", _claim_sentence(t, n, esc)))
            return [("node", k, level + 1) for k in kids]
        out.append(("heading", (min(level, 6), esc(n.title or "Untitled"))))
        if n.body.strip():
            out.append(("para", esc(n.body.strip())))
        return _child_steps(t, kids, level)

    for _ in walk([("node", t.root, 1)], expand):
        pass
    return out


def _child_steps(t: _Tree, kids: list[MapNode], level: int) -> list[tuple[str, Any, int]]:
    """The steps of a heading node's children: runs of leaf claims and notes as one paragraph
    each, synthesis notes, and the other children as nodes of their own."""
    steps: list[tuple[str, Any, int]] = []
    leaves: list[MapNode] = []
    for k in kids:
        leaf = not t.kids.get(k.id)
        if (
            leaf
            and k.kind in (NodeKind.CLAIM, NodeKind.COUNTERPOINT, NodeKind.NOTE)
            and not is_synthesis(k, t.cits.get(k.id, []))
        ):
            leaves.append(k)
            continue
        if leaves:
            steps.append(("leaves", leaves, level))
            leaves = []
        if leaf and is_synthesis(k, t.cits.get(k.id, [])):
            steps.append(("synthesis", k, min(level + 1, 6)))
        else:
            steps.append(("node", k, level + 1))
    if leaves:
        steps.append(("leaves", leaves, level))
    return steps


def is_synthesis(n: MapNode, cits: list[Citation]) -> bool:
    """A note Synthesize wrote: its body's markers [k] number the note's own citations."""
    return n.kind == NodeKind.NOTE and bool(cits) and all(c.agent == "synthesize" for c in cits)


def _synthesis_blocks(t: _Tree, n: MapNode, level: int, esc: Callable[[str], str]) -> list[tuple[str, Any]]:
    """A synthesis note: its title as a heading (never with markers), its paragraphs with the
    note's own markers renumbered as this export numbers the papers."""
    own = t.cits.get(n.id, [])

    def remap(m: re.Match) -> str:
        local = [int(x) for x in re.split(r"\s*[,;]\s*", m.group(1))]
        cited = [own[k - 1] for k in local if 1 <= k <= len(own)]
        if t.paged:
            return _marker(t, cited)
        nums = sorted({t.refs.number(c) for c in cited})
        return f"[{', '.join(map(str, nums))}]" if nums else ""

    out: list[tuple[str, Any]] = [("heading", (level, esc(n.title or "Synthesis")))]
    for para in (p for p in n.body.split("\n") if p.strip()):
        parts, pos = [], 0
        for m in _MARKER.finditer(para):  # source text escaped once, markers as they are
            parts.extend([_spaced(esc, unescape_brackets(para[pos : m.start()])), remap(m)])
            pos = m.end()
        parts.append(_spaced(esc, unescape_brackets(para[pos:])))
        out.append(("para", re.sub(r"[ \t]+([.,;:])", r"\1", "".join(parts)).strip()))
    return out


def _spaced(esc: Callable[[str], str], seg: str) -> str:
    """`esc(seg)` with the space around `seg` kept (escapers collapse it)."""
    if not seg.strip():
        return " " if seg else ""
    return (" " if seg[0].isspace() else "") + esc(seg.strip()) + (" " if seg[-1].isspace() else "")


def _claim_sentence(t: _Tree, n: MapNode, esc: Callable[[str], str] = _plain) -> str:
    text = _sentence(n.title or n.body)
    if n.kind == NodeKind.COUNTERPOINT:
        text = "In contrast, " + text[:1].lower() + text[1:] if text else text
    text = esc(text)
    marks = _marks(t, n)
    if marks and text.endswith("."):
        text = text[:-1] + f" {marks}."
    elif marks:
        text += f" {marks}"
    if n.body.strip() and n.title.strip():
        text += " " + esc(n.body.strip())
    return text


@dataclass(frozen=True)
class Outline:
    """A map or subtree as Markdown, with what each citation number stands for."""

    markdown: str
    labels: dict[int, str]  # number -> "Yang et al. 2025, p. 4"
    citations: dict[int, list[Citation]]  # number -> the citations behind it
    claims: dict[int, list[str]] = field(default_factory=dict)  # number -> the wordings citing it
    claims_of: dict[str, list[str]] = field(default_factory=dict)  # citation id -> its node's wording


def markdown(
    db: Session, owner_id: str, map_id: str, node_id: str | None = None, style: str = csl.DEFAULT_STYLE
) -> str:
    """The map (or the subtree under `node_id`) as Markdown prose, each claim's marker with the
    page it cites ("[2, p. 4]"), the references in the CSL ``style``."""
    style = csl.check_style(style)
    m, t = _tree(db, owner_id, map_id, node_id, paged=True)
    lines = _markdown_lines(t)
    entries = _styled_entries(db, t, style)
    if entries:
        lines.extend(["## References\n", *(f"{n}. {md_text(ref)}" for n, ref in entries), ""])
    if m.offline:
        lines.append("_Built in offline mode (extractive: claims are quoted sentences)._\n")
    return "\n".join(lines).rstrip() + "\n"


def _markdown_lines(t: _Tree) -> list[str]:
    lines: list[str] = []
    for kind, value in _blocks(t, md_text):
        if kind == "heading":
            level, text = value
            lines.append(f"{'#' * level} {text}\n")
        else:
            lines.append(value + "\n")
    return lines


def _styled_entries(db: Session, t: _Tree, style: str) -> list[tuple[int, str]]:
    """(number, entry) of every cited source, a library paper rendered in the CSL ``style``."""
    infos = {did: bib_info(db, d) for did, d in t.refs.docs.items()}
    rendered = csl.render(sorted(infos.items()), style)
    out = []
    for doc_key, n in t.refs.numbers.items():
        if doc_key in t.refs.removed:
            out.append((n, f"{t.refs.removed[doc_key]} (source removed from the library)"))
        elif doc_key in t.refs.hidden or doc_key not in rendered:
            out.append((n, UNSHARED))
        else:
            out.append((n, rendered[doc_key]))
    return out


# a citation marker: "[2]", "[1, 3]" — never an escaped "\[2\]" (source text)
_MARKER = re.compile(r"(?<!\\)\[(\d+(?:\s*[,;]\s*\d+)*)\]")


def inline_citations(text: str, o: Outline) -> tuple[str, list[int]]:
    """`text` with its numbered markers ("[2]", "[1, 3]") written as author-year citations
    ("(Yang et al. 2025, p. 4)"), which stay right wherever the text is later shown or exported
    (numbers change with the outline). Numbers the outline doesn't have are dropped.
    Returns the text and the numbers used, in order of first use."""
    used: list[int] = []

    def repl(m: re.Match) -> str:
        nums = [int(x) for x in re.split(r"\s*[,;]\s*", m.group(1)) if int(x) in o.labels]
        used.extend(n for n in nums if n not in used)
        return f"({'; '.join(o.labels[n] for n in nums)})" if nums else ""

    out = _MARKER.sub(repl, text)
    return re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", out)), used


def checked_markers(text: str, o: Outline, min_overlap: float = 0.2) -> tuple[str, list[int]]:
    """`text` (a writer's prose) keeping a marker only where it can point to its passage: a
    number the outline has, in a sentence that shares content terms with a claim or quote
    behind that number. Returns the text and the numbers dropped."""
    from bayes_app.maps.sentences import split_sentences
    from bayes_app.search.sparse import tokens

    behind = {
        n: set(tokens(" ".join(o.claims.get(n, []) + [c.quote for c in o.citations.get(n, [])]))) for n in o.labels
    }
    dropped: list[int] = []
    out = []
    for para in text.split("\n"):
        sents = []
        for s in split_sentences(para) if para.strip() else [para]:
            words = set(tokens(_MARKER.sub(" ", s)))

            def keep(m: re.Match, words: set[str] = words) -> str:
                nums = [int(x) for x in re.split(r"\s*[,;]\s*", m.group(1))]
                ok = [
                    n
                    for n in nums
                    if behind.get(n) and len(words & behind[n]) >= max(1, min_overlap * min(len(words), len(behind[n])))
                ]
                dropped.extend(n for n in nums if n not in ok)
                return f"[{', '.join(map(str, ok))}]" if ok else ""

            sents.append(_MARKER.sub(keep, s))
        out.append(" ".join(sents))
    cleaned = re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", "\n".join(out)))
    return cleaned, dropped


def outline(db: Session, owner_id: str, map_id: str, node_id: str | None = None) -> Outline:
    """The Markdown of `markdown()`, with the sources behind its numbers."""
    m, t = _tree(db, owner_id, map_id, node_id)
    lines = _markdown_lines(t)
    entries = t.refs.entries()
    if entries:
        lines.extend(["## References\n", *(f"{n}. {md_text(ref)}" for n, ref in entries), ""])
    if m.offline:
        lines.append("_Built in offline mode (extractive: claims are quoted sentences)._\n")
    claims: dict[int, list[str]] = {}
    by_node = {n.id: n for kids in t.kids.values() for n in kids} | {t.root.id: t.root}
    for n_, cits in t.refs.cited.items():
        claims[n_] = list({(by_node[c.node_id].title or by_node[c.node_id].body) for c in cits if c.node_id in by_node})
    claims_of = {
        c.id: [by_node[c.node_id].title or by_node[c.node_id].body]
        for cits in t.refs.cited.values()
        for c in cits
        if c.node_id in by_node
    }
    return Outline("\n".join(lines).rstrip() + "\n", t.refs.inline(), t.refs.cited, claims, claims_of)


def docx_bytes(
    db: Session, owner_id: str, map_id: str, node_id: str | None = None, style: str = csl.DEFAULT_STYLE
) -> bytes:
    """The same prose as a Word document (markers with pages, references in ``style``)."""
    from docx import Document as Docx

    style = csl.check_style(style)
    _m, t = _tree(db, owner_id, map_id, node_id, paged=True)
    doc = Docx()
    for kind, value in _blocks(t, lambda s: escape_brackets(inert(s))):  # source "[5]" apart from real markers
        if kind == "heading":
            level, text = value
            doc.add_heading(unescape_brackets(text), level=min(level - 1, 9))
        else:
            para, pos = doc.add_paragraph(), 0
            for m in _PAGED.finditer(value):  # real markers superscript; source brackets plain text
                para.add_run(unescape_brackets(value[pos : m.start()]))
                para.add_run(m.group(0)).font.superscript = True
                pos = m.end()
            para.add_run(unescape_brackets(value[pos:]))
    entries = _styled_entries(db, t, style)
    if entries:
        doc.add_heading("References", level=1)
        for n, ref in entries:
            doc.add_paragraph(f"[{n}] {inert(ref)}")
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


# Source metadata is untrusted: every LaTeX/BibTeX special character becomes a braced LaTeX
# command, so braces always balance and no text can close a field or start a command.
_BIB_ENCODER = UnicodeToLatexEncoder(
    conversion_rules=[
        UnicodeToLatexConversionRule(
            RULE_DICT,
            {ord("{"): r"\textbraceleft", ord("}"): r"\textbraceright", ord("\\"): r"\textbackslash", ord('"'): '"'},
        ),
        "defaults",
    ],
    replacement_latex_protection="braces-all",
    unknown_char_policy="keep",
    unknown_char_warning=False,
)


def _bib_escape(s: str) -> str:
    return _BIB_ENCODER.unicode_to_latex(" ".join(inert(s).split()))


def as_json(db: Session, owner_id: str, map_id: str) -> dict[str, Any]:
    return service.map_view(db, owner_id, map_id)
