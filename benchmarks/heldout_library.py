"""heldout_library: offline Ask and Research over a library of ~30 PDFs made from SciFact abstracts
whose claims no ranker was tuned on (issue 37's held-out checks, rebuilt on data we have).

    .venv/bin/pip install -r benchmarks/requirements-heldout.txt   # fpdf2, to write the PDFs
    .venv/bin/python benchmarks/heldout_library.py [--data DIR] [--asks 20] [--seed 37] [--detail]
        [--baseline REF]

The library: one PDF per abstract (title, "Abstract", the text; DejaVu Sans, one column) for the
evidence abstracts of the two Research topics and of `--asks` claims drawn (seeded) from the
SciFact train `held` split (`benchmarks/scifact_sets.split_of`: never trained or tuned on), padded
with BM25's nearest other abstracts to 30 PDFs. Ingested in-process (real index process,
embeddings, Redis, SQLite: tests/support/maplab.py).

- **Ask** (each claim as the question, the offline answer as the Ask run writes it): the evidence
  paper cited (a quoted sentence from it), an annotated rationale sentence shown, and shown first.
  Issue 37's targets: ≥ 0.95 / ≥ 0.85 / ≥ 0.6.
- **Research** (two topics, a question each over 5–6 evidence abstracts of `held` claims): claims a
  map, topic rationale sentences reached by a claim's quote, share of claims quoting a topic
  evidence paper. Targets: ≥ 8 claims, ≥ 3 rationale sentences reached (of ~11), ≥ 0.35.

Rationale sentences are SciFact's sentence indices over the app's own splitter (as in
scripts/train_relevance.py), so a few are cut differently from SciFact's; a quote "shows" one when
either contains the other (letters and digits only). --baseline REF measures another commit the
same way (its own worktree; this script copied in) and prints both side by side.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LIBRARY_SIZE = 30
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

# Two topics of the held split, each a question a researcher would ask of its claims' evidence
# (claims picked by a shared subject; the questions written for the topic, not for a claim).
TOPICS = {
    "breast cancer": (
        "What affects breast cancer risk, prognosis and treatment outcome?",
        re.compile(r"\bbreast cancer\b", re.I),
    ),
    "stem cells": (
        "How is pluripotency of embryonic stem cells induced and maintained?",
        re.compile(r"\b(embryonic|pluripoten\w*|epiblast) stem cells?\b|\bstem cells from mouse embryonic\b", re.I),
    ),
}


@dataclass
class Claim:
    id: str
    text: str
    rationale: dict[str, set[int]] = field(default_factory=dict)  # doc id -> sentence indices


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", s.lower())


def load(data: Path) -> tuple[dict[str, dict], dict[str, Claim]]:
    from benchmarks.scifact_sets import split_of

    corpus = {}
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["_id"]] = d
    claims: dict[str, Claim] = {}
    with open(data / "claims_train.csv", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if split_of(r["id"]) != "held" or r["evidence_label"] not in ("SUPPORT", "CONTRADICT"):
                continue
            if r["evidence_doc_id"] not in corpus:
                continue
            c = claims.setdefault(r["id"], Claim(r["id"], r["claim"]))
            c.rationale.setdefault(r["evidence_doc_id"], set()).update(
                int(i) for i in re.findall(r"\d+", r["evidence_sentences"])
            )
    return corpus, claims


def rationale_sentences(corpus: dict[str, dict], c: Claim) -> dict[str, list[str]]:
    from bayes_app.llm.offline import split_sentences

    out = {}
    for doc, idx in c.rationale.items():
        sents = split_sentences(corpus[doc]["text"])
        out[doc] = [sents[i] for i in sorted(idx) if i < len(sents)]
    return out


def choose_sets(corpus: dict[str, dict], claims: dict[str, Claim], asks: int, seed: int):
    """(topic -> its claims, the Ask claims, the library's doc ids)."""
    from benchmarks.scifact_sets import BM25

    topics = {name: [c for c in claims.values() if rx.search(c.text)] for name, (_, rx) in TOPICS.items()}
    topic_docs = {d for cs in topics.values() for c in cs for d in c.rationale}
    single = sorted((c for c in claims.values() if len(c.rationale) == 1), key=lambda c: int(c.id))
    rng = random.Random(seed)
    rng.shuffle(single)
    ask: list[Claim] = []
    docs = set(topic_docs)
    for c in single:
        if len(ask) == asks:
            break
        new = set(c.rationale) - docs
        if len(docs | new) > LIBRARY_SIZE:
            continue
        ask.append(c)
        docs |= new
    bm25 = BM25({i: d.get("title", "") + " " + d["text"] for i, d in corpus.items()})
    for c in ask:  # pad with each claim's nearest other abstracts, in turn
        if len(docs) >= LIBRARY_SIZE:
            break
        s = bm25.scores(c.text)
        for i in sorted(s, key=lambda i: (-s[i], i))[:3]:
            if len(docs) < LIBRARY_SIZE:
                docs.add(bm25.ids[i])
    return topics, ask, sorted(docs, key=int)


def write_pdf(doc: dict, path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_margins(22, 22, 22)
    pdf.add_font("DejaVu", "", FONT)
    pdf.add_font("DejaVu", "B", FONT_BOLD)
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 14)
    pdf.multi_cell(0, 7, doc.get("title") or "Untitled", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_font("DejaVu", "B", 11)
    pdf.cell(0, 6, "Abstract", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(1)
    pdf.set_font("DejaVu", "", 10)
    pdf.multi_cell(0, 5, doc["text"], new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def ask_quotes(lab, question: str) -> list[tuple[str, str]]:
    """The offline Ask answer as the Ask run builds it: its quoted parts, each with its doc id."""
    from tests.support.answer_labels import offline_ask

    return offline_ask(lab, question, "document_id", without_marks=True)[1]


# SciFact's sentences keep a structured abstract's section label ("RESULTS At 12 weeks, …"),
# which the app cuts off as a run-in heading: it is not part of what a quote must show
_LABEL = re.compile(r"^(?:[A-Z][A-Z,/&-]+\s+)+(?=[A-Z0-9(])")


def shows(quote: str, sentences: list[str]) -> bool:
    """True when the quote holds one of the sentences (letters and digits only; or lies inside one,
    when it is at least 40 characters)."""
    q = _norm(quote)
    return any((r := _norm(_LABEL.sub("", s))) and (r in q or (len(q) >= 40 and q in r)) for s in sentences)


def measure_ask(lab, corpus, claims: list[Claim], sci_of: dict[str, str]) -> dict:
    rows = []
    for c in claims:
        quotes = ask_quotes(lab, c.text)
        rat = [s for ss in rationale_sentences(corpus, c).values() for s in ss]
        cited = any(sci_of.get(d or "") in c.rationale for _, d in quotes)
        shown = [shows(q, rat) for q, _ in quotes]
        rows.append(
            {
                "claim": c.text,
                "quotes": len(quotes),
                "cited": cited,
                "shown": any(shown),
                "first": bool(shown and shown[0]),
                "answer": [q[:160] for q, _ in quotes],
            }
        )
    n = len(rows) or 1
    return {
        "rows": rows,
        "cited": sum(r["cited"] for r in rows) / n,
        "shown": sum(r["shown"] for r in rows) / n,
        "first": sum(r["first"] for r in rows) / n,
        "sentences": sum(r["quotes"] for r in rows) / n,
    }


def measure_research(lab, corpus, name: str, claims: list[Claim], sci_of: dict[str, str]) -> dict:
    from sqlmodel import select

    from bayes_app.llm.offline import OfflineProvider
    from bayes_app.models import Citation, MapNode
    from tests.support.mapchecks import MARKER, name_checks, theme_claims

    question = TOPICS[name][0]
    mid = lab.create_map(question)
    t = time.monotonic()
    lab.run("build_map", mid, OfflineProvider, prompt=question)
    secs = time.monotonic() - t
    with lab.sessions() as db:
        every = list(db.exec(select(MapNode).where(MapNode.map_id == mid)))
        nodes = {n.id: n for n in every if n.kind == "claim"}
        cits = [c for c in db.exec(select(Citation).where(Citation.map_id == mid)) if c.node_id in nodes]
    names = name_checks(theme_claims(every))
    lab.run("synthesize", mid, OfflineProvider)
    with lab.sessions() as db:
        note = next(
            n for n in db.exec(select(MapNode).where(MapNode.map_id == mid)) if n.title.startswith("Synthesis:")
        )
    evid = {d for c in claims for d in c.rationale}
    rat = [s for c in claims for ss in rationale_sentences(corpus, c).values() for s in ss]
    rat = list(dict.fromkeys(rat))
    quotes = [c.quote for c in cits]
    reached = [s for s in rat if any(shows(q, [s]) for q in quotes)]
    on_topic = {c.node_id for c in cits if sci_of.get(c.document_id) in evid}
    return {
        "topic": name,
        "question": question,
        "claims": len(nodes),
        "rationale": len(rat),
        "reached": len(reached),
        "evidence_share": len(on_topic) / len(nodes) if nodes else 0.0,
        "evidence_papers": len(evid),
        "seconds": secs,
        "names_held": names["held"],
        "names": names["names"],
        "theme_names": [n.title for n in every if n.kind == "theme"],
        "synthesis_words": len(MARKER.sub(" ", note.body).split()),
        "titles": [(n.title[:140], n.id in on_topic) for n in nodes.values()],
    }


def run(data: Path, asks: int, seed: int) -> dict:
    from bayes_app import registry
    from tests.support.maplab import MapLab

    registry.register()
    corpus, claims = load(data)
    topics, ask, docs = choose_sets(corpus, claims, asks, seed)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bayes-heldout-") as tmp:
        paths = []
        for d in docs:
            p = Path(tmp) / f"{d}.pdf"
            write_pdf(corpus[d], p)
            paths.append(p)
        with MapLab(paths, credits=100_000) as lab:
            sci_of = dict(zip(lab.doc_ids, docs))
            ingest_secs = time.monotonic() - t0
            a = measure_ask(lab, corpus, ask, sci_of)
            r = [measure_research(lab, corpus, name, cs, sci_of) for name, cs in topics.items()]
    return {"pdfs": len(docs), "asks": len(ask), "ask": a, "research": r, "ingest_seconds": ingest_secs}


def figures(res: dict) -> list[tuple[str, float]]:
    out = [
        ("Ask: evidence paper cited (>= 0.95)", res["ask"]["cited"]),
        ("Ask: a rationale sentence shown (>= 0.85)", res["ask"]["shown"]),
        ("Ask: a rationale sentence first (>= 0.6)", res["ask"]["first"]),
        ("Ask: sentences shown per answer", res["ask"]["sentences"]),
    ]
    for t in res["research"]:
        out += [
            (f"Research {t['topic']}: claims (>= 8)", t["claims"]),
            (f"Research {t['topic']}: rationale reached of {t['rationale']} (>= 3)", t["reached"]),
            (f"Research {t['topic']}: claims quoting an evidence paper (>= 0.35)", t["evidence_share"]),
            (f"Research {t['topic']}: theme names held of {t['names']}", t["names_held"]),
            (f"Research {t['topic']}: synthesis words (<= 250)", t["synthesis_words"]),
        ]
    return out


def baseline(ref: str, argv: list[str]) -> dict | None:
    from benchmarks.baseline_run import measure_at

    return measure_at(
        ref,
        "benchmarks/heldout_library.py",
        argv,
        copy=["benchmarks/scifact_sets.py", "tests/support/answer_labels.py"],
    )


def main() -> None:
    from benchmarks.scifact_sets import find_data

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="SciFact dir (claims_train.csv, corpus.jsonl)")
    ap.add_argument("--asks", type=int, default=20)
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--baseline", metavar="REF")
    ap.add_argument("--detail", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    data = find_data(args.data)
    ours = run(data, args.asks, args.seed)
    if args.json:
        print(json.dumps(ours))
        return
    argv = ["--data", str(data), "--asks", str(args.asks), "--seed", str(args.seed)]
    base = baseline(args.baseline, argv) if args.baseline else None
    print(
        f"library: {ours['pdfs']} PDFs (SciFact held split), {ours['asks']} Ask claims, "
        f"ingest {ours['ingest_seconds']:.0f} s"
    )
    if args.detail:
        for r in ours["ask"]["rows"]:
            print(f"\nASK {r['claim']}\n  cited={r['cited']} shown={r['shown']} first={r['first']}")
            for q in r["answer"]:
                print("   -", q)
        for t in ours["research"]:
            print(f"\nRESEARCH {t['question']} ({t['evidence_papers']} evidence papers, {t['seconds']:.0f} s)")
            print("   themes:", " | ".join(t["theme_names"]))
            for title, ok in t["titles"]:
                print(f"   {'+' if ok else ' '} {title}")
    print(f"\n{'measure':<62}{'base':>9}{'ours':>9}{'ratio':>8}")
    bf = dict(figures(base)) if base else {}
    for name, v in figures(ours):
        b = bf.get(name)
        ratio = f"{v / b:.2f}" if b else "–"
        print(f"{name:<62}{(f'{b:.2f}' if b is not None else '–'):>9}{v:>9.2f}{ratio:>8}")


if __name__ == "__main__":
    main()
