"""Reference-parsing and metadata accuracy, ours vs the baseline commit, side by side.

- Reference entries in eight styles (``tests/support/reference_sets``: APA, ACS, Vancouver,
  IEEE, Nature, Chicago author-date, arXiv, proceedings), generated with known fields: an entry
  is right when its first author's surname, its year and its title (normalised) are.
- Printed years: generated first pages that print the year one way each (venue line, ©,
  date line, Vancouver/ACS header, arXiv stamp, "Vol. N") and a CreationDate of another year,
  plus one that prints none (right answer: no year).
- The bundled papers (tests/fixtures/papers): title and year against what they print, and the
  share of their reference entries with authors, year and title.

    .venv/bin/python -m benchmarks.references [--baseline main] [--n 40]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bayes_app.library import references, structure
from bayes_app.library.citation_match import normalize_title
from bayes_app.library.pdf import extract_metadata, iter_layouts, pdf_document
from tests.support.reference_sets import STYLES, numbered, printed_papers, printed_pdf, reference_set

BUNDLED = {  # file -> (title, the year its first page prints)
    "pasa.pdf": ("PaSa: An LLM Agent for Comprehensive Academic Paper Search", 2025),
    "explanations-molecular-prediction-models.pdf": (
        "A Perspective on Explanations of Molecular Prediction Models",
        None,
    ),
    "duplicate-media.pdf": ("SF Districts in the style of Andy Warhol", None),
}


def _surname(authors: list[str]) -> str:
    """The first author's surname, read the same way for both parsers' outputs."""
    if not authors:
        return ""
    a = authors[0].strip()
    if "," in a and re.fullmatch(r"\s*(?:[A-Z][a-z]?\.?[ -]?)+", a.split(",", 1)[1]):
        return a.split(",")[0].strip()
    words = [w for w in a.split() if not re.fullmatch(r"(?:[A-Z]\.?[ -]?){1,4}|[A-Z]{1,3}", w)]
    if not words:
        return a
    return words[-1] if "." in a or len(words) > 1 else words[0]


def styles(n: int) -> dict[str, float]:
    out = {}
    for style in STYLES:
        pairs = reference_set(style, n, seed=1)
        right = 0
        for text, w in zip(numbered([e for e, _ in pairs], style), pairs, strict=True):
            r = references.parse_entry(text)
            right += (
                _surname(r.authors) == w[1].first_author_last
                and r.year == w[1].year
                and normalize_title(r.title) == normalize_title(w[1].title)
            )
        out[style] = right / n
    return out


def years() -> float:
    papers = printed_papers()
    right = 0
    for p in papers:
        with pdf_document(printed_pdf(p)) as pdf:
            right += extract_metadata(pdf).year == (p.year or None)
    return right / len(papers)


def bundled() -> dict[str, float]:
    papers = ROOT / "tests" / "fixtures" / "papers"
    title = year = 0
    complete = total = 0
    for name, (t, y) in BUNDLED.items():
        with pdf_document(papers / name, max_pages=200) as pdf:
            meta = extract_metadata(pdf)
            pages = list(iter_layouts(pdf))
        title += meta.title == t
        year += meta.year == y
        refs = references.parse_references(pages, structure.analyze(pages))
        total += len(refs)
        complete += sum(bool(r.authors and r.year and r.title) for r in refs)
    return {"title": title / len(BUNDLED), "year": year / len(BUNDLED), "refs_complete": complete / max(1, total)}


def measure(n: int) -> dict:
    return {"styles": styles(n), "printed_years": years(), "bundled": bundled()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40, help="entries per style")
    ap.add_argument("--baseline", default="main", help="commit to compare with ('' for none)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    ours = measure(args.n)
    if args.json:
        print(json.dumps(ours))
        return
    base = None
    if args.baseline:
        from benchmarks.baseline_run import measure_at

        base = measure_at(
            args.baseline, "benchmarks/references.py", ["--n", str(args.n)], copy=["tests/support/reference_sets.py"]
        )

    def cell(v: float | None) -> str:
        return "—" if v is None else f"{v:.0%}"

    print(f"{'measure':<34} {'ours':>6} {'baseline':>9}")
    for style, v in ours["styles"].items():
        print(f"{'entries right, ' + style:<34} {cell(v):>6} {cell(base and base['styles'][style]):>9}")
    all_ours = sum(ours["styles"].values()) / len(STYLES)
    all_base = sum(base["styles"].values()) / len(STYLES) if base else None
    print(f"{'entries right, all styles':<34} {cell(all_ours):>6} {cell(all_base):>9}")
    years_base = base and base["printed_years"]
    print(f"{'printed year right (generated)':<34} {cell(ours['printed_years']):>6} {cell(years_base):>9}")
    for k in ("title", "year", "refs_complete"):
        b = base and base["bundled"][k]
        print(f"{'bundled papers, ' + k:<34} {cell(ours['bundled'][k]):>6} {cell(b):>9}")


if __name__ == "__main__":
    main()
