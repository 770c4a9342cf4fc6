"""Export a map or a subtree for LaTeX: BibTeX entries (written by bibtexparser) and a
LaTeX document whose ``\\cite`` keys are those entries' keys.

    citation_keys(db, tree) -> {document id: (key, BibInfo)}
    bibtex(db, owner_id, map_id, node_id=None) -> str
    latex(db, owner_id, map_id, node_id=None) -> str
"""

from __future__ import annotations

import re

from sqlmodel import Session

from bayes_app.library.bibinfo import BibInfo, bib_info
from bayes_app.maps import service
from bayes_app.maps.export import _PAGED, _PAGED_ONE, _bib_escape, _blocks, _surname, _Tree, _tree
from bayes_app.models import Document


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


_URL_UNSAFE = re.compile(r"[{}\\\s%#]")
_KEY_OK = re.compile(r"^[A-Za-z0-9_:.+/-]{1,100}$")


def _cited_docs(t: _Tree) -> list[str]:
    ids = [n.id for n in service.subtree([n for kids in t.kids.values() for n in kids], t.root.id)]
    out: list[str] = []
    for nid in ids:
        for c in t.cits.get(nid, []):
            if c.document_id is not None and c.document_id in t.refs.docs and c.document_id not in out:
                out.append(c.document_id)
    return out


def citation_keys(db: Session, t: _Tree) -> dict[str, tuple[str, BibInfo]]:
    """document id -> (its \\cite key, its entry): the user's Zotero / Better BibTeX key where
    the paper came from Zotero, else a stable generated key (surname, year, first title word)."""
    infos = {did: bib_info(db, t.refs.docs[did]) for did in _cited_docs(t)}
    taken: set[str] = set()
    out: dict[str, tuple[str, BibInfo]] = {}
    for did, info in sorted(infos.items()):  # Zotero keys first, so a generated key never takes one
        if info.citekey and _KEY_OK.match(info.citekey) and info.citekey not in taken:
            taken.add(info.citekey)
            out[did] = (info.citekey, info)
    for did, info in sorted(infos.items(), key=lambda kv: (kv[1].year or 0, kv[1].title, kv[0])):
        if did not in out:
            out[did] = (bibtex_key(t.refs.docs[did], taken), info)
    return out


def _bib_entry(key: str, b: BibInfo) -> dict[str, str]:
    entry = {"ENTRYTYPE": b.entry_type, "ID": key, "title": b.title}
    venue_field = {"article": "journal", "inproceedings": "booktitle", "incollection": "booktitle"}
    for name, value in (
        ("author", " and ".join(b.authors)),
        ("year", str(b.year or "")),
        (venue_field.get(b.entry_type, "howpublished"), b.venue),
        ("volume", b.volume),
        ("number", b.issue),
        ("pages", (b.pages or "").replace("–", "--")),
        ("doi", b.doi),
        ("eprint", b.arxiv),
        ("archiveprefix", "arXiv" if b.arxiv else None),
        ("url", b.url),
    ):
        if value:
            entry[name] = value
    verbatim = ("doi", "url", "eprint")  # identifiers: no LaTeX commands, only what cannot break the entry goes
    return {
        k: v if k in ("ENTRYTYPE", "ID") else _URL_UNSAFE.sub("", v) if k in verbatim else _bib_escape(v)
        for k, v in entry.items()
    }


def bibtex(db: Session, owner_id: str, map_id: str, node_id: str | None = None) -> str:
    """The cited sources (of the map or subtree) as BibTeX, written by bibtexparser: entry
    type, journal or booktitle, volume, number, pages, DOI, arXiv id and URL from the paper's
    metadata, its Zotero item or its first page's venue line (`@misc` when none is known)."""
    _m, t = _tree(db, owner_id, map_id, node_id)
    return _bibtex_text(citation_keys(db, t))


def _bibtex_text(keys: dict[str, tuple[str, BibInfo]]) -> str:
    from bibtexparser.bibdatabase import BibDatabase
    from bibtexparser.bwriter import BibTexWriter

    bib = BibDatabase()
    bib.entries = [_bib_entry(k, info) for k, info in keys.values()]
    writer = BibTexWriter()
    writer.order_entries_by = None  # the export's order
    writer.display_order = ["title", "author", "year", "journal", "booktitle", "volume", "number", "pages", "doi"]
    return writer.write(bib)


def _latex_text(s: str) -> str:
    # brackets braced: a source "[5]" can never be read as an optional argument or a marker
    return _bib_escape(s).replace("[", "{[}").replace("]", "{]}")


def latex(db: Session, owner_id: str, map_id: str, node_id: str | None = None) -> str:
    """The map (or subtree) as a LaTeX document: each claim with `\\cite[p.~4]{key}`, the keys
    those of :func:`bibtex` (``\\bibliography{sources}``, the ``export.bib`` saved as sources.bib)."""
    m, t = _tree(db, owner_id, map_id, node_id, paged=True)
    keys = citation_keys(db, t)

    def cite(mk: re.Match) -> str:
        key_of = {n: keys[d][0] for d, n in t.refs.numbers.items() if d in keys}  # numbered as blocks are made
        out = []
        for one in mk.group(1).split("; "):
            num, pages = _PAGED_ONE.fullmatch(one).groups()  # type: ignore[union-attr]
            if int(num) in key_of:
                where = ("p.~" if "," not in pages else "pp.~") + pages.replace(", ", ",~")
                out.append(f"\\cite[{where}]{{{key_of[int(num)]}}}")
        return "~" + "".join(out) if out else ""

    body: list[str] = []
    commands = ["section", "subsection", "subsubsection", "paragraph", "subparagraph", "subparagraph"]
    for kind, value in _blocks(t, _latex_text):
        if kind == "heading":
            level, text = value
            body.append(f"\\{commands[min(level, 6) - 1]}{{{text}}}\n")
        else:
            body.append(re.sub(r"\s+~", "~", _PAGED.sub(cite, value)) + "\n")
    title = _latex_text(m.title if getattr(m, "title", "") else "Related work")
    return "\n".join(
        [
            "\\documentclass{article}",
            "\\usepackage[utf8]{inputenc}",
            "\\usepackage[T1]{fontenc}",
            "\\usepackage{url}",
            f"\\title{{{title}}}",
            "\\begin{document}",
            "\\maketitle",
            "",
            *body,
            "\\bibliographystyle{plain}",
            "\\bibliography{sources}",
            "\\end{document}",
            "",
        ]
    )
