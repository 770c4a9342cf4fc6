"""Read a draft into paragraphs and references: Markdown / plain text, LaTeX with its .bib
(bibtexparser; LaTeX to text by pylatexenc), DOCX (python-docx; Zotero Word plugin citations
carry their item keys in the field code `ADDIN ZOTERO_ITEM CSL_CITATION {json}`)."""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from bayes_app.audits.draft import DraftRejected, Ref
from bayes_app.audits.references import entry_number, parse_reference

FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".tex": "latex", ".docx": "docx"}
MAX_DRAFT_BYTES = 5 << 20
MAX_BIB_BYTES = 5 << 20
_REF_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\d+\.?\s*)?(references|bibliography|works cited|literature cited)\s*:?\s*$", re.I
)
_ZOTERO = re.compile(r"^\s*ADDIN\s+ZOTERO_ITEM\s+CSL_CITATION\s+(\{.*\})\s*$", re.S)
_ZOTERO_BIBL = re.compile(r"^\s*ADDIN\s+ZOTERO_BIBL")


@dataclass
class RawDraft:
    """A read draft: body paragraphs, its references by key, and per paragraph its Zotero
    fields in order (visible text, reference keys): two fields may read alike ("(Kim, 2011)")."""

    format: str
    paragraphs: list[str]
    references: dict[str, Ref] = field(default_factory=dict)
    fields: dict[int, list[tuple[str, list[str]]]] = field(default_factory=dict)


def draft_format(filename: str) -> str:
    """The draft's format from its file name; DraftRejected (415) for any other type."""
    fmt = FORMATS.get(PurePath(filename or "").suffix.lower())
    if fmt is None:
        raise DraftRejected(
            "unsupported_type",
            f"“{filename}” is not a draft Bayes can read: upload a .md, .txt, .tex (with its .bib) or .docx file.",
            415,
        )
    return fmt


def read(filename: str, data: bytes, bib: bytes | None = None) -> RawDraft:
    """Read a draft file (DraftRejected when it is empty, too large, unreadable or of another type)."""
    fmt = draft_format(filename)
    if not data or not data.strip():
        raise DraftRejected("empty_file", f"“{filename}” is empty: upload the draft with its text.")
    if len(data) > MAX_DRAFT_BYTES:
        raise DraftRejected(
            "too_large", f"The draft is larger than {MAX_DRAFT_BYTES >> 20} MB: upload the text without images.", 413
        )
    if bib is not None and len(bib) > MAX_BIB_BYTES:
        raise DraftRejected("too_large", f"The .bib file is larger than {MAX_BIB_BYTES >> 20} MB.", 413)
    if fmt == "docx":
        raw = _docx(filename, data)
    else:
        text = _text(filename, data)
        raw = _latex(text) if fmt == "latex" else _plain(text, fmt)
    if bib:
        raw.references.update(read_bib(_text("the .bib file", bib)))
    if not any(p.strip() for p in raw.paragraphs):
        raise DraftRejected("empty_file", f"“{filename}” has no text to check: upload the draft with its sentences.")
    return raw


def _text(filename: str, data: bytes) -> str:
    if b"\x00" in data[:4096]:
        raise DraftRejected(
            "unreadable", f"“{filename}” is not a text file: save the draft as UTF-8 text (.md, .txt, .tex) or .docx."
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DraftRejected(
            "unreadable", f"“{filename}” is not UTF-8 text: save it as UTF-8 and upload it again."
        ) from None


# ---- Markdown / plain text ----------------------------------------------------------------------
_MD_LINK = re.compile(r"(?<!\])\[([^\]\d][^\]]*)\]\([^)]*\)")
_MD_EMPHASIS = re.compile(r"(\*{1,3}|_{2,3})(\S(?:.*?\S)?)\1")
_MD_BLOCK = re.compile(r"^\s*(?:>\s*|[-*+]\s+|\d+[.)]\s+(?=[A-Z]))")


def _blocks(text: str) -> list[str]:
    return [b.strip() for b in re.split(r"\n\s*\n", text.replace("\r\n", "\n")) if b.strip()]


def _split_references(blocks: list[str]) -> tuple[list[str], list[str]]:
    """(body blocks, reference entries): entries follow a "References" heading, one per line."""
    for i, b in enumerate(blocks):
        first, _, rest = b.partition("\n")
        if _REF_HEADING.match(first):
            lines = [ln.strip() for blk in [rest, *blocks[i + 1 :]] for ln in blk.split("\n") if ln.strip()]
            return blocks[:i], [re.sub(r"^[-*+]\s+", "", ln) for ln in lines]
    return blocks, []


def references_from(entries: list[str]) -> dict[str, Ref]:
    """A reference list's entries under "n:<number>" (its printed number, else its position)."""
    out: dict[str, Ref] = {}
    for i, entry in enumerate(entries, 1):
        n = entry_number(entry) or i
        out[f"n:{n}"] = parse_reference(f"n:{n}", entry)
    return out


def _plain(text: str, fmt: str) -> RawDraft:
    body, entries = _split_references(_blocks(text))
    paragraphs = []
    for b in body:
        if fmt == "markdown":
            if b.startswith("#") or b.startswith("```") or b.startswith("|"):
                continue  # headings, code and tables are not sentences
            b = _MD_LINK.sub(r"\1", b)
            b = _MD_EMPHASIS.sub(r"\2", b)
            b = "\n".join(_MD_BLOCK.sub("", ln) for ln in b.split("\n"))
        paragraphs.append(" ".join(b.split()))
    return RawDraft(fmt, paragraphs, references_from(entries))


# ---- LaTeX + .bib ---------------------------------------------------------------------------------
_CITE_TEX = re.compile(
    r"\\(cite|citep|citet|citealp|citeauthor|parencite|textcite|autocite|footcite)\*?(?:\[[^\]]*\]){0,2}\{([^}]*)\}"
)
_DROP_TEX = re.compile(
    r"\\(?:section|subsection|subsubsection|chapter|paragraph|title|author|label|caption)\*?\{[^}]*\}"
)
_BIBITEM = re.compile(r"\\bibitem(?:\[[^\]]*\])?\{([^}]*)\}")


def _latex(text: str) -> RawDraft:
    from pylatexenc.latex2text import LatexNodes2Text

    m = re.search(r"\\begin\{document\}(.*?)(?:\\end\{document\}|$)", text, re.S)
    body = m.group(1) if m else text
    body = re.sub(r"(?<!\\)%.*", "", body)  # comments
    refs: dict[str, Ref] = {}
    bibl = re.search(r"\\begin\{thebibliography\}.*?\\end\{thebibliography\}", body, re.S)
    if bibl:
        items = _BIBITEM.split(bibl.group(0))
        for key, entry in zip(items[1::2], items[2::2]):
            entry = LatexNodes2Text().latex_to_text(entry.replace("\\end{thebibliography}", ""))
            refs[f"bib:{key.strip()}"] = parse_reference(f"bib:{key.strip()}", entry)
        body = body[: bibl.start()] + body[bibl.end() :]
    body = re.sub(r"\\(?:bibliography|bibliographystyle|printbibliography)\b(?:\{[^}]*\})?", "", body)
    body = _DROP_TEX.sub("\n\n", body)
    cites: list[str] = []

    def keep(mm: re.Match[str]) -> str:
        cites.append(mm.group(0))
        return f" CITEMARK{len(cites) - 1}X "

    body = _CITE_TEX.sub(keep, body)
    converter = LatexNodes2Text(math_mode="verbatim")
    paragraphs = []
    for b in _blocks(body):
        t = " ".join(converter.latex_to_text(b).split())
        t = re.sub(r"\s?CITEMARK(\d+)X\s?", lambda mm: " " + cites[int(mm.group(1))] + " ", t)
        t = re.sub(r"\s+([.,;:])", r"\1", " ".join(t.split()))
        if t:
            paragraphs.append(t)
    return RawDraft("latex", paragraphs, refs)


def _bib_authors(value: str) -> list[str]:
    return [" ".join(a.replace("{", "").replace("}", "").split()) for a in re.split(r"\s+and\s+", value) if a.strip()]


def read_bib(text: str) -> dict[str, Ref]:
    """A .bib file's entries under "bib:<citation key>" (Better BibTeX keys included)."""
    import bibtexparser
    from bibtexparser.bparser import BibTexParser

    parser = BibTexParser(common_strings=True, ignore_nonstandard_types=False)
    try:
        db = bibtexparser.loads(text, parser=parser)
    except Exception:  # noqa: BLE001 - pyparsing errors of a malformed file
        raise DraftRejected(
            "unreadable", "The .bib file could not be read: export it again from your reference manager."
        ) from None
    out: dict[str, Ref] = {}
    for e in db.entries:
        key = e.get("ID", "")
        title = " ".join(e.get("title", "").replace("{", "").replace("}", "").split()) or None
        year_m = re.search(r"(?:19|20)\d{2}", e.get("year", "") or e.get("date", ""))
        authors = _bib_authors(e.get("author", ""))
        text_ = ". ".join(x for x in (", ".join(authors), e.get("year", ""), title or "", e.get("journal", "")) if x)
        out[f"bib:{key}"] = Ref(
            key=f"bib:{key}",
            text=text_,
            title=title,
            authors=authors,
            year=int(year_m.group(0)) if year_m else None,
            doi=e.get("doi") or None,
        )
    return out


# ---- DOCX -----------------------------------------------------------------------------------------
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _docx(filename: str, data: bytes) -> RawDraft:
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError):
        raise DraftRejected(
            "unreadable", f"“{filename}” is not a Word document Bayes can open: save it again as .docx from Word."
        ) from None
    refs: dict[str, Ref] = {}
    texts: list[tuple[str, str, list[tuple[str, list[str]]]]] = []  # (style, text, fields)
    for p in document.paragraphs:
        fields: list[tuple[str, list[str]]] = []
        text, in_bibliography = _paragraph(p._p, refs, fields)
        if in_bibliography:
            continue
        texts.append((p.style.name if p.style is not None else "", " ".join(text.split()), fields))
    body: list[str] = []
    entries: list[str] = []
    by_paragraph: dict[int, list[tuple[str, list[str]]]] = {}
    in_refs = False
    for style, t, fields in texts:
        if not t:
            continue
        if _REF_HEADING.match(t):
            in_refs = True
            continue
        if in_refs:
            entries.append(t)
        elif not style.lower().startswith(("heading", "title")):
            if fields:
                by_paragraph[len(body)] = fields
            body.append(t)
    refs.update(references_from(entries))
    return RawDraft("docx", body, refs, by_paragraph)


def _paragraph(p: object, refs: dict[str, Ref], fields: list[tuple[str, list[str]]]) -> tuple[str, bool]:
    """A paragraph's visible text; Zotero citation fields are recorded in `refs` / `fields`."""
    text = _ParagraphText(refs, fields)
    for el in p.iter():  # type: ignore[attr-defined]
        text.read(el)
    return "".join(text.out), text.bibliography


class _ParagraphText:
    """A paragraph's text read element by element. A complex field (begin, its code, separate,
    the text it shows, end) may nest others: only the outermost one's shown text is kept."""

    def __init__(self, refs: dict[str, Ref], fields: list[tuple[str, list[str]]]) -> None:
        self.refs, self.fields = refs, fields
        self.out: list[str] = []
        self.instr: list[str] = []
        self.result: list[str] = []
        self.depth, self.in_result, self.bibliography = 0, False, False

    def read(self, el: Any) -> None:
        tag = el.tag
        if tag == _W + "fldChar":
            self._field_char(el.get(_W + "fldCharType"))
        elif tag == _W + "instrText" and self.depth == 1:
            self.instr.append(el.text or "")
        elif tag == _W + "fldSimple":
            self._field(el.get(_W + "instr") or "", "".join(t.text or "" for t in el.iter(_W + "t")))
        elif tag == _W + "t":
            if any(a.tag == _W + "fldSimple" for a in el.iterancestors()):
                return  # counted with its field
            (self.result if self.depth and self.in_result else self.out if not self.depth else []).append(el.text or "")
        elif tag == _W + "tab" and not self.depth:
            self.out.append(" ")

    def _field_char(self, kind: str | None) -> None:
        if kind == "begin":
            self.depth += 1
            if self.depth == 1:
                self.instr, self.result, self.in_result = [], [], False
        elif kind == "separate" and self.depth == 1:
            self.in_result = True
        elif kind == "end" and self.depth > 0:
            self.depth -= 1
            if self.depth == 0:
                shown = "".join(self.result)
                self._field("".join(self.instr), shown)
                self.out.append(shown)
                self.in_result = False

    def _field(self, code: str, shown: str) -> None:
        self.bibliography |= bool(_ZOTERO_BIBL.match(code))
        _zotero_field(code, shown, self.refs, self.fields)


def _zotero_field(code: str, shown: str, refs: dict[str, Ref], fields: list[tuple[str, list[str]]]) -> None:
    m = _ZOTERO.match(code)
    if not m or not shown.strip():
        return
    try:
        data = json.loads(m.group(1))
    except ValueError:
        return
    keys = []
    for item in data.get("citationItems") or []:
        uris = item.get("uris") or item.get("uri") or []
        uri = uris[0] if isinstance(uris, list) and uris else str(uris or "")
        zkey = uri.rstrip("/").rsplit("/", 1)[-1] if uri else None
        d = item.get("itemData") or {}
        authors = [
            " ".join(x for x in (a.get("given"), a.get("family")) if x) or a.get("literal", "")
            for a in d.get("author") or []
            if isinstance(a, dict)
        ]
        parts = ((d.get("issued") or {}).get("date-parts") or [[None]])[0]
        year = parts[0] if parts and isinstance(parts[0], int) else None
        key = f"zotero:{zkey or len(refs)}"
        refs[key] = Ref(
            key=key,
            text=". ".join(x for x in (", ".join(authors), str(year or ""), d.get("title") or "") if x),
            title=d.get("title"),
            authors=authors,
            year=year,
            doi=d.get("DOI"),
            zotero_key=zkey,
        )
        keys.append(key)
    if keys:
        fields.append((" ".join(shown.split()), keys))
