"""Drafts for checking citations, built from SciFact **train** claims (never validation):
claims cited correctly, cited to the wrong paper, cited to a paper that contradicts them
(SciFact CONTRADICT), left uncited, or citing papers the library lacks — written as Markdown
with a numbered reference list, LaTeX with a .bib, and DOCX with Zotero Word fields."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "scifact"
SURNAMES = (
    "Smith Garcia Chen Müller Okafor Tanaka Rossi Novak Haddad Silva Kowalski Ivanova Larsen Dubois Kim Patel "
    "Nguyen Cohen Moreau Jensen Fischer Ortega Sato Petrov Walsh Ahmed Lindqvist Costa Brown Park".split()
)
KINDS = ("correct", "wrong", "contradicted", "uncited", "missing")


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    abstract: str
    authors: list[str]
    year: int
    doi: str | None
    zotero_key: str

    @property
    def key(self) -> str:
        return f"{self.authors[0].split(',')[0].lower()}{self.year}sf{self.id}"


@dataclass
class Item:
    kind: str
    claim: str
    cited: Paper | None  # the paper the draft cites (None: uncited)
    evidence: Paper | None  # the paper that holds the claim's evidence
    extra: dict = field(default_factory=dict)


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _paper(doc: dict) -> Paper:
    h = _h(doc["_id"])
    a, b = SURNAMES[h % len(SURNAMES)], SURNAMES[(h // 31) % len(SURNAMES)]
    return Paper(
        id=doc["_id"],
        title=" ".join(doc["title"].split()).rstrip("."),
        abstract=" ".join(doc["text"].split()),
        authors=[f"{a}, {chr(65 + h % 26)}.", f"{b}, {chr(65 + (h // 7) % 26)}."],
        year=2000 + h % 20,
        doi=f"10.5555/sf.{doc['_id']}" if h % 3 else None,
        zotero_key="".join("ABCDEFGHIJKLMNPQRSTUVWXYZ23456789"[(h >> (5 * i)) % 33] for i in range(6)) + "SF",
    )


def scifact_set(
    data: Path = DATA,
    seed: int = 41,
    counts: dict[str, int] | None = None,
    library_size: int = 50,
    keep: Callable[[str], bool] | None = None,
) -> tuple[list[Paper], list[Item]]:
    """(the library's papers, the draft's items in order) from SciFact train claims (those whose
    id `keep` accepts, when given)."""
    counts = counts or {"correct": 16, "wrong": 10, "contradicted": 8, "uncited": 6, "missing": 5}
    corpus, support, contra = _scifact_claims(data, keep)
    rng = random.Random(seed)
    rng.shuffle(support)
    rng.shuffle(contra)
    take = iter(support)
    items: list[Item] = []
    for kind in ("correct", "uncited", "missing", "wrong"):
        for _ in range(counts[kind]):
            claim, doc = next(take)
            p = _paper(corpus[doc])
            items.append(Item(kind, claim, None if kind == "uncited" else p, p))
    for claim, doc in contra[: counts["contradicted"]]:
        p = _paper(corpus[doc])
        items.append(Item("contradicted", claim, p, p))
    library = {i.evidence.id: i.evidence for i in items if i.kind != "missing" and i.evidence}
    fillers = [d for d in corpus if d not in library and d not in {i.evidence.id for i in items if i.evidence}]
    rng.shuffle(fillers)
    for d in fillers[: max(0, library_size - len(library))]:
        library[d] = _paper(corpus[d])
    # a wrong citation names another library paper (not its evidence, which stays out of the library)
    others = sorted(library)
    for it in items:
        if it.kind == "wrong":
            it.extra["evidence_in_library"] = False
            it.cited = library[rng.choice([o for o in others if o != it.evidence.id])]
    rng.shuffle(items)
    return list(library.values()), items


def _scifact_claims(
    data: Path, keep: Callable[[str], bool] | None = None
) -> tuple[dict[str, dict], list[tuple[str, str]], list[tuple[str, str]]]:
    """SciFact's corpus by id, and its train claims with one cited paper, each paper once:
    (claim, paper id) supported, and contradicted."""
    corpus = {}
    with open(data / "corpus.jsonl", encoding="utf-8") as lines:
        for line in lines:
            d = json.loads(line)
            corpus[d["_id"]] = d
    support: list[tuple[str, str]] = []
    contra: list[tuple[str, str]] = []
    seen: set[str] = set()
    with open(data / "claims_train.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            doc, label = row["evidence_doc_id"], row["evidence_label"]
            if not doc or doc not in corpus or row["id"] in seen or doc in {x[1] for x in support + contra}:
                continue
            if keep is not None and not keep(row["id"]):
                continue
            if len(row["cited_doc_ids"].strip("[]").split()) != 1:
                continue  # one cited paper: the claim's source is unambiguous
            seen.add(row["id"])
            (support if label == "SUPPORT" else contra).append((row["claim"], doc))
    return corpus, support, contra


def _apa(p: Paper) -> str:
    authors = " & ".join(p.authors)
    doi = f" https://doi.org/{p.doi}" if p.doi else ""
    return f"{authors} ({p.year}). {p.title}. Journal of Findings, {p.year - 1990}, 1–12.{doi}"


def _sentence(claim: str) -> str:
    return claim.strip().rstrip(".")


def markdown(items: list[Item]) -> str:
    """Markdown with numbered citations and a numbered reference list."""
    numbers: dict[str, int] = {}
    refs: list[Paper] = []
    lines = ["# Draft", ""]
    for i, it in enumerate(items):
        if it.cited is None:
            s = f"{_sentence(it.claim)}."
        else:
            if it.cited.id not in numbers:
                refs.append(it.cited)
                numbers[it.cited.id] = len(refs)
            s = f"{_sentence(it.claim)} [{numbers[it.cited.id]}]."
        lines.append(s)
        if i % 5 == 4:
            lines.append("")
    lines += ["", "## References", ""]
    lines += [f"[{n}] {_apa(p)}" for n, p in enumerate(refs, 1)]
    return "\n".join(lines) + "\n"


def _tex(text: str) -> str:
    return "".join("\\" + ch if ch in "%&#_$" else ch for ch in text)


def latex(items: list[Item]) -> tuple[str, str]:
    """(LaTeX body citing with \\cite / \\citep, its .bib)."""
    body, bib = [], {}
    for i, it in enumerate(items):
        if it.cited is None:
            body.append(f"{_tex(_sentence(it.claim))}.")
        else:
            bib[it.cited.key] = it.cited
            cmd = "citep" if i % 2 else "cite"
            body.append(f"{_tex(_sentence(it.claim))}~\\{cmd}{{{it.cited.key}}}.")
    tex = (
        "\\documentclass{article}\n\\begin{document}\n\\section{Introduction}\n"
        + "\n\n".join(" ".join(body[i : i + 5]) for i in range(0, len(body), 5))
        + "\n\\bibliography{refs}\n\\end{document}\n"
    )
    entries = []
    for p in bib.values():
        doi = f",\n  doi = {{{p.doi}}}" if p.doi else ""
        entries.append(
            f"@article{{{p.key},\n  title = {{{p.title}}},\n  author = {{{' and '.join(p.authors)}}},\n"
            f"  journal = {{Journal of Findings}},\n  year = {{{p.year}}}{doi}\n}}"
        )
    return tex, "\n\n".join(entries) + "\n"


def _field(paragraph, code: str, shown: str) -> None:
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    def run_with(child) -> None:
        r = OxmlElement("w:r")
        r.append(child)
        paragraph._p.append(r)

    def char(kind: str):
        el = OxmlElement("w:fldChar")
        el.set(qn("w:fldCharType"), kind)
        return el

    run_with(char("begin"))
    instr = OxmlElement("w:instrText")
    instr.set(qn("xml:space"), "preserve")
    instr.text = code
    run_with(instr)
    run_with(char("separate"))
    t = OxmlElement("w:t")
    t.set(qn("xml:space"), "preserve")
    t.text = shown
    run_with(t)
    run_with(char("end"))


def zotero_code(p: Paper, user: str = "1234567") -> str:
    data = {
        "citationID": f"c{p.id}",
        "properties": {"formattedCitation": "", "plainCitation": ""},
        "citationItems": [
            {
                "id": int(p.id),
                "uris": [f"http://zotero.org/users/{user}/items/{p.zotero_key}"],
                "itemData": {
                    "id": int(p.id),
                    "type": "article-journal",
                    "title": p.title,
                    "author": [{"family": a.split(",")[0], "given": a.split(",")[1].strip()} for a in p.authors],
                    "issued": {"date-parts": [[p.year]]},
                    **({"DOI": p.doi} if p.doi else {}),
                },
            }
        ],
        "schema": "https://github.com/citation-style-language/schema/raw/master/csl-citation.json",
    }
    return " ADDIN ZOTERO_ITEM CSL_CITATION " + json.dumps(data) + " "


def docx(items: list[Item]) -> bytes:
    """DOCX with author–year citations inserted as Zotero Word fields, and a Zotero bibliography."""
    import docx as python_docx

    d = python_docx.Document()
    d.add_heading("Draft", 1)
    p = d.add_paragraph()
    cited: dict[str, Paper] = {}
    for i, it in enumerate(items):
        if i and i % 5 == 0:
            p = d.add_paragraph()
        if it.cited is None:
            p.add_run(f"{_sentence(it.claim)}. ")
            continue
        cited[it.cited.id] = it.cited
        p.add_run(f"{_sentence(it.claim)} ")
        surname = it.cited.authors[0].split(",")[0]
        _field(p, zotero_code(it.cited), f"({surname} et al., {it.cited.year})")
        p.add_run(". ")
    d.add_heading("References", 1)
    bib = d.add_paragraph()
    _field(bib, ' ADDIN ZOTERO_BIBL {"uncited":[]} CSL_BIBLIOGRAPHY ', "\n".join(_apa(x) for x in cited.values()))
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()
