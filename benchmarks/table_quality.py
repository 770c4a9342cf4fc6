"""Extraction tables offline: cell accuracy on labelled papers, and a 200-paper × 5-column fill.

Labelled papers: SciFact train abstracts (cited by the train claims; never the held-out splits)
read and labelled by hand for the number of participants and whether the paper is a randomized
controlled trial (papers whose count is ambiguous — several groups, no total — are labelled for
the design only), plus the generated papers of the tests. The main-finding column is scored on
structured abstracts, whose author-marked CONCLUSION(S) sentence is the finding.

Each figure is printed beside a naive baseline (the first count next to a people word; "yes"
when the text says random- anywhere; the last sentence as the finding), and with --baseline REF
beside this script's figures at another commit (`benchmarks/baseline_run.measure_at`).

    python benchmarks/table_quality.py [--data ../shared/data] [--baseline REF] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bayes_app.tables.columns import Column
from bayes_app.tables.evidence import page_sentences
from bayes_app.tables.extract import extract_all

# SciFact corpus id -> (participants or None when ambiguous, randomized controlled trial?)
LABELS: dict[str, tuple[int | None, bool]] = {
    "2052720": (None, False),
    "14711483": (20, True),
    "25079962": (None, False),
    "5691302": (60746, False),
    "12009265": (14641, True),
    "43329366": (None, False),
    "22995579": (82, False),
    "4687948": (6110, False),
    "12209494": (4632, True),
    "3898784": (141311, False),
    "27873158": (None, True),
    "26112696": (None, False),
    "1642727": (170, True),
    "5323845": (None, False),
    "46695481": (12527, True),
    "6191684": (203, True),
    "16422880": (19714, False),
    "12258338": (None, False),
    "5304891": (197, False),
    "13906581": (None, False),
    "8447873": (None, False),
    "7813993": (160, False),
    "3692112": (84, True),
    "17682477": (12, False),
    "6751418": (23, False),
    "3355397": (193099, False),
    "4910408": (565, False),
    "24834968": (115, False),
    "5402581": (None, False),
}
COLUMNS = [
    Column("participants", "How many participants were studied?", "number"),
    Column("rct", "Is this a randomized controlled trial?", "yes_no"),
    Column("finding", "What is the main finding?", "text"),
]
EXTRA = [
    Column("design", "What is the study design?", "choice", ("cohort", "case-control", "randomized trial", "review")),
    Column("setting", "Where was the study conducted?", "text"),
]
_PEOPLE = re.compile(r"\b(\d[\d,]*)\s+(?:\w+\s+){0,3}?(?:patients|participants|subjects|women|men|adults|children)\b")


def naive(text: str) -> dict[str, object]:
    """The baseline: first count next to a people word, random- anywhere, the last sentence."""
    m = _PEOPLE.search(text)
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return {
        "participants": int(m.group(1).replace(",", "")) if m else None,
        "rct": "yes" if re.search(r"(?i)randomi[sz]", text) else "no",
        "finding": sentences[-1] if sentences else None,
    }


def _conclusion(text: str) -> str | None:
    m = re.search(r"\b(?:CONCLUSIONS?|Conclusions?|INTERPRETATION)\b[:\s]+([^.]*\.)", text)
    return m.group(1).strip() if m else None


def accuracy(docs: dict[str, dict]) -> dict[str, object]:
    tally = {k: [0, 0] for k in ("participants", "rct", "finding")}
    base = {k: [0, 0] for k in tally}
    found = 0
    cells = 0
    for doc_id, (n, rct) in LABELS.items():
        text = docs[doc_id]["text"]
        got = extract_all(COLUMNS, page_sentences(1, text, []))
        cells += len(got)
        found += sum(g.status == "found" for g in got.values())
        b = naive(text)
        if n is not None:
            tally["participants"][0] += got["participants"].value == n
            tally["participants"][1] += 1
            base["participants"][0] += b["participants"] == n
            base["participants"][1] += 1
        want = "yes" if rct else "no"
        tally["rct"][0] += got["rct"].value == want
        tally["rct"][1] += 1
        base["rct"][0] += b["rct"] == want
        base["rct"][1] += 1
        conclusion = _conclusion(text)
        if conclusion:
            quote = got["finding"].sentence.text if got["finding"].sentence else ""
            tally["finding"][0] += conclusion[:60] in quote
            tally["finding"][1] += 1
            base["finding"][0] += conclusion[:60] in str(b["finding"] or "")
            base["finding"][1] += 1
    out: dict[str, object] = {f"{k}_acc": round(v[0] / max(v[1], 1), 3) for k, v in tally.items()}
    out.update({f"naive_{k}_acc": round(v[0] / max(v[1], 1), 3) for k, v in base.items()})
    out.update({f"{k}_n": v[1] for k, v in tally.items()})
    out["cells_found"] = round(found / max(cells, 1), 3)
    return out


def scale(docs: dict[str, dict], papers: int = 200, seed: int = 1) -> dict[str, object]:
    """A 200-paper × 5-column fill of the extractor (sentences read, values written in memory)."""
    rng = random.Random(seed)
    pool = rng.sample(sorted(docs), papers)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    for doc_id in pool:
        d = docs[doc_id]
        # a paper of ~6 abstract-sized pages: the abstract and five neighbours' texts
        pages = [(i + 1, docs[pool[(pool.index(doc_id) + i) % papers]]["text"], []) for i in range(6)]
        sentences = [s for p, t, sp in pages for s in page_sentences(p, t, sp)]
        extract_all(COLUMNS + EXTRA, sentences)
        del d
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "fill_200x5_s": round(seconds, 2),
        "peak_rss_mb": round(peak / 1024, 1),
        "rss_growth_mb": round((peak - before) / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--baseline", help="a git ref: run this script there too and print both")
    ap.add_argument("--json", action="store_true", help="print one JSON line (for --baseline)")
    args = ap.parse_args(argv)
    docs = {d["_id"]: d for d in map(json.loads, (args.data / "scifact" / "corpus.jsonl").open())}
    figures = {**accuracy(docs), **scale(docs)}
    if args.json:
        print(json.dumps(figures))
        return 0
    other: dict[str, object] = {}
    if args.baseline:
        from benchmarks.baseline_run import measure_at

        other = (
            measure_at(args.baseline, "benchmarks/table_quality.py", ["--data", str(args.data.resolve()), "--json"])
            or {}
        )
    print(f"{'figure':<26}{'ours':>10}{'naive':>10}" + (f"{args.baseline:>12}" if args.baseline else ""))
    for key in ("participants_acc", "rct_acc", "finding_acc"):
        naive_key = "naive_" + key
        row = f"{key:<26}{figures[key]!s:>10}{figures[naive_key]!s:>10}"
        if args.baseline:
            row += f"{other.get(key, '-')!s:>12}"
        print(row)
    for key in ("participants_n", "rct_n", "finding_n", "cells_found", "fill_200x5_s", "peak_rss_mb", "rss_growth_mb"):
        row = f"{key:<26}{figures[key]!s:>10}{'':>10}"
        if args.baseline:
            row += f"{other.get(key, '-')!s:>12}"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
