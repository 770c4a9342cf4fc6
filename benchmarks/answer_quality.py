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
import asyncio
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAPERS = ["pasa.pdf", "explanations-molecular-prediction-models.pdf", "duplicate-media.pdf"]
OPENER = re.compile(r"^(?:This|These|That|Those|It|Its|They|Their|Such|Subsequently|Ultimately|Consequently|"
                    r"Thus|Hence|Then|Among these|Of these|The latter|The former)\b(?!\s+(?:paper|work|study|"
                    r"article|review|survey|perspective)\b)")
_MARKED = re.compile(r"(.+?)\s*\[(\d+(?:\s*,\s*\d+)*)\]")


def ask_answer(lab, question: str) -> tuple[str, list[tuple[str, int | None]]]:
    """The offline Ask answer as the Ask run builds it; its quoted sentences with their pages."""
    from bayes_app.chat import agent, prompts
    from bayes_app.llm.offline import OfflineProvider, format_passages
    from bayes_app.llm.types import ChatRequest

    hits = [h for h in agent.search_library(lab.sessions, lab.user_id, question, None, agent.TOP_K)
            if not h.get("weak")]
    numbered = [{**h, "n": i} for i, h in enumerate(hits, 1)]
    system = prompts.SYSTEM + "\n\n" + (prompts.PASSAGES.format(passages=format_passages(numbered)[:agent.TOOL_RESULT_CHARS])
                                        if numbered else prompts.NO_PASSAGES)
    req = ChatRequest(model="offline", messages=[{"role": "system", "content": system},
                                                 {"role": "user", "content": question}])
    text = asyncio.run(OfflineProvider().complete(req)).text
    pages = {h["n"]: h.get("page") for h in numbered}
    quoted = [(m.group(1).strip(), pages.get(int(m.group(2).split(",")[0]))) for m in _MARKED.finditer(text)]
    return text, quoted


def research(lab, question: str, embed) -> dict:
    from sqlmodel import select

    from bayes_app.llm.offline import OfflineProvider
    from bayes_app.models import Citation, MapNode
    from tests.support.mapquality import measure_map

    mid = lab.create_map(question)
    lab.run("build_map", mid, OfflineProvider, prompt=question)
    with lab.sessions() as db:
        claims = [n for n in db.exec(select(MapNode).where(MapNode.map_id == mid)) if n.kind == "claim"]
        cits = list(db.exec(select(Citation).where(Citation.map_id == mid)))
    by_node: dict[str, list] = {}
    for c in cits:
        by_node.setdefault(c.node_id, []).append((c.quote, c.page))
    m = measure_map(lab, mid, embed)
    return {"claims": [(n.title, by_node.get(n.id, [])) for n in claims], "duplicates": m["duplicates"],
            "themes": m["titles"]}


def run() -> dict:
    try:
        from bayes_app import registry
        registry.register()
    except ImportError:
        pass
    from bayes_app.library.pdf import iter_pages
    from bayes_app.search.embeddings import get_embedder
    from tests.support import pdfs
    from tests.support.answer_labels import QUESTIONS, addresses, facts_reached, region_texts
    from tests.support.maplab import MapLab

    model = get_embedder()

    def embed(texts):
        return model.embed_passages(list(texts))

    pages = {p: {i: t.text for i, t in enumerate(iter_pages(str(pdfs.FIXTURES / p)), 1)} for p in PAPERS[:2]}
    rows = []
    t0 = time.monotonic()
    with MapLab([pdfs.FIXTURES / p for p in PAPERS]) as lab:
        for q in QUESTIONS:
            regions = region_texts(q, pages[q.paper])
            text, quoted = ask_answer(lab, q.question)
            r = research(lab, q.question, embed)
            claim_quotes = [qt for _, cs in r["claims"] for qt, _ in cs]
            relevant = [any(addresses(q, qt, pg, regions) for qt, pg in cs) for _, cs in r["claims"]]
            rows.append({
                "question": q.question, "facts": len(q.facts),
                "ask_facts": sum(facts_reached(q, [s for s, _ in quoted])), "ask_answer": text,
                "ask_relevant": sum(addresses(q, s, pg, regions) for s, pg in quoted), "ask_sentences": len(quoted),
                "research_facts": sum(facts_reached(q, claim_quotes)), "claims": len(r["claims"]),
                "relevant_claims": sum(relevant), "openers": sum(bool(OPENER.match(t)) for t, _ in r["claims"]),
                "duplicates": r["duplicates"], "themes": r["themes"],
                "off_topic": [t[:100] for (t, _), ok in zip(r["claims"], relevant) if not ok],
                "claim_rows": [[t, ok] for (t, _), ok in zip(r["claims"], relevant)]})
    return {"rows": rows, "seconds": time.monotonic() - t0}


def totals(res: dict) -> dict:
    rows = res["rows"]
    facts = sum(r["facts"] for r in rows)
    return {"ask_recall": sum(r["ask_facts"] for r in rows) / facts,
            "ask_precision": sum(r["ask_relevant"] for r in rows) / max(1, sum(r["ask_sentences"] for r in rows)),
            "research_recall": sum(r["research_facts"] for r in rows) / facts,
            "claim_precision": sum(r["relevant_claims"] for r in rows) / max(1, sum(r["claims"] for r in rows)),
            "openers": sum(r["openers"] for r in rows), "duplicates": sum(r["duplicates"] for r in rows),
            "claims": sum(r["claims"] for r in rows), "questions": len(rows)}


def baseline(ref: str) -> dict | None:
    """The same measurement on commit `ref` (its own worktree; this script and the labels copied in)."""
    base = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", ref], check=True, capture_output=True,
                          text=True).stdout.strip()
    wt = Path(f"/tmp/bayes-answer-quality-{base}")
    if not wt.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(wt), base], check=True,
                       capture_output=True)
        (wt / ".venv").symlink_to(ROOT / ".venv")
    for rel in ("benchmarks/answer_quality.py", "tests/support/answer_labels.py"):
        (wt / rel).write_text((ROOT / rel).read_text())
    res = subprocess.run([sys.executable, str(wt / "benchmarks" / "answer_quality.py"), "--json"], cwd=wt,
                         capture_output=True, text=True)
    if res.returncode != 0:
        print("baseline failed:", res.stderr[-2000:])
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


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
    for label, key, fmt in (("Ask recall of answer-bearing facts (target >= 0.7)", "ask_recall", "{:.2f}"),
                            ("Ask sentences addressing the question", "ask_precision", "{:.2f}"),
                            ("Research recall of answer-bearing facts", "research_recall", "{:.2f}"),
                            ("claim precision vs labels (target >= 0.8)", "claim_precision", "{:.2f}"),
                            ("claims opening with a context-dependent word", "openers", "{}"),
                            ("near-duplicate claims", "duplicates", "{}"),
                            ("claims", "claims", "{}")):
        ratio = (o[key] / b[key] if b[key] else float("inf")) if b else None
        print(f"{label:<52}" + (f"{fmt.format(b[key]):>10}" if b else "") + f"{fmt.format(o[key]):>10}"
              + (f"{ratio:>10.2f}" if b else ""))
    print(f"\nseconds: ours {ours['seconds']:.0f}" + (f", base {base['seconds']:.0f}" if base else ""))
    if args.detail:
        for r in ours["rows"]:
            print(f"\n## {r['question']}  ask {r['ask_facts']}/{r['facts']}  research {r['research_facts']}/"
                  f"{r['facts']}  claims {r['relevant_claims']}/{r['claims']}")
            print("  answer:", r["ask_answer"][:700])
            print("  themes:", r["themes"])
            for t in r["off_topic"]:
                print("  off-topic:", t)


if __name__ == "__main__":
    main()
