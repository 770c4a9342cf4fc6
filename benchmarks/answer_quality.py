"""answer_quality: do Ask answers and Research maps answer the question? Offline, hand-labelled.

    .venv/bin/python benchmarks/answer_quality.py [--baseline main] [--detail]

Over the bundled papers (tests/fixtures/papers, all three in one library: the third is a
distractor) and the labelled questions of tests/support/answer_labels.py (answer-bearing facts
and the regions of text that address each question), in-process with the real index process,
real embeddings, Redis and SQLite (tests/support/maplab.py):

- Ask (the offline provider, as the Ask run calls it: the question searched, the passages in
  the instructions): recall = share of labelled facts the answer quotes;
- Research (a `build_map` run with the offline provider): recall = share of facts some claim
  quotes; precision = share of claims whose quote states a fact or lies in a labelled region;
  claims opening with words that point outside them ("This…", "It…", "Subsequently…");
  near-duplicate claim groups (tests/support/mapquality.py's test).

--baseline REF measures commit REF the same way (its own worktree under /tmp, this script and the
labels copied in) and prints both side by side with the change.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAPERS = ["pasa.pdf", "explanations-molecular-prediction-models.pdf", "duplicate-media.pdf"]


def run() -> dict:
    try:
        from bayes_app import registry

        registry.register()
    except ImportError:
        pass
    from bayes_app.library.pdf import iter_pages
    from bayes_app.search.embeddings import get_embedder
    from tests.support import pdfs
    from tests.support.answer_labels import QUESTIONS, measure_question
    from tests.support.maplab import MapLab

    model = get_embedder()

    def embed(texts):
        return model.embed_passages(list(texts))

    pages = {p: {i: t.text for i, t in enumerate(iter_pages(str(pdfs.FIXTURES / p)), 1)} for p in PAPERS[:2]}
    t0 = time.monotonic()
    with MapLab([pdfs.FIXTURES / p for p in PAPERS]) as lab:
        rows = [measure_question(lab, q, pages[q.paper], embed) for q in QUESTIONS]
    return {"rows": rows, "seconds": time.monotonic() - t0}


def totals(res: dict) -> dict:
    rows = res["rows"]
    facts = sum(r["facts"] for r in rows)
    return {
        "ask_recall": sum(r["ask_facts"] for r in rows) / facts,
        "ask_precision": sum(r["ask_relevant"] for r in rows) / max(1, sum(r["ask_sentences"] for r in rows)),
        "research_recall": sum(r["research_facts"] for r in rows) / facts,
        "claim_precision": sum(r["relevant_claims"] for r in rows) / max(1, sum(r["claims"] for r in rows)),
        "openers": sum(r["openers"] for r in rows),
        "duplicates": sum(r["duplicates"] for r in rows),
        "claims": sum(r["claims"] for r in rows),
        "questions": len(rows),
    }


def baseline(ref: str) -> dict | None:
    """The same measurement on commit `ref` (its own worktree; this script and the labels copied in)."""
    from benchmarks.baseline_run import measure_at

    return measure_at(ref, "benchmarks/answer_quality.py", copy=["tests/support/answer_labels.py"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", metavar="REF", help="also measure this commit (e.g. main)")
    ap.add_argument("--json", action="store_true", help="print one JSON line (used for the baseline)")
    ap.add_argument("--detail", action="store_true", help="answers and off-topic claims per question")
    ap.add_argument("--save", metavar="PATH", help="also write the full measurement as JSON")
    args = ap.parse_args()
    ours = run()
    if args.save:
        Path(args.save).write_text(json.dumps(ours, default=str))
    if args.json:
        print(json.dumps(ours, default=str))
        return
    base = baseline(args.baseline) if args.baseline else None
    o, b = totals(ours), totals(base) if base else None
    print(f"{o['questions']} labelled questions over {len(PAPERS)} bundled papers (offline)\n")
    print(f"{'measure':<52}" + (f"{'base':>10}" if b else "") + f"{'ours':>10}" + (f"{'ratio':>10}" if b else ""))
    for label, key, fmt in (
        ("Ask recall of answer-bearing facts (target >= 0.7)", "ask_recall", "{:.2f}"),
        ("Ask sentences addressing the question", "ask_precision", "{:.2f}"),
        ("Research recall of answer-bearing facts", "research_recall", "{:.2f}"),
        ("claim precision vs labels (target >= 0.8)", "claim_precision", "{:.2f}"),
        ("claims opening with a context-dependent word", "openers", "{}"),
        ("near-duplicate claims", "duplicates", "{}"),
        ("claims", "claims", "{}"),
    ):
        ratio = (o[key] / b[key] if b[key] else float("inf")) if b else None
        print(
            f"{label:<52}"
            + (f"{fmt.format(b[key]):>10}" if b else "")
            + f"{fmt.format(o[key]):>10}"
            + (f"{ratio:>10.2f}" if b else "")
        )
    print(f"\nseconds: ours {ours['seconds']:.0f}" + (f", base {base['seconds']:.0f}" if base else ""))
    if args.detail:
        for r in ours["rows"]:
            print(
                f"\n## {r['question']}  ask {r['ask_facts']}/{r['facts']}  research {r['research_facts']}/"
                f"{r['facts']}  claims {r['relevant_claims']}/{r['claims']}"
            )
            print("  answer:", r["ask_answer"][:700])
            print("  themes:", r["themes"])
            for t in r["off_topic"]:
                print("  off-topic:", t)


if __name__ == "__main__":
    main()
