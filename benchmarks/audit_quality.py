"""audit_quality: does checking a draft find the citations that are wrong? SciFact train claims.

    .venv/bin/python benchmarks/audit_quality.py [--data DIR] [--seed 41] [--formats md,tex,docx] [--json]

A library of 50 SciFact abstracts (one page each) and a draft of 45 sentences built from SciFact
**train** claims (tests/support/audit_drafts.py; never the validation claims): 16 cited
correctly, 10 cited to the wrong paper, 8 cited to a paper that contradicts them (CONTRADICT
labels), 6 uncited, 5 citing papers the library lacks — as Markdown, LaTeX + .bib and DOCX
with Zotero fields. Each draft is read, its citations resolved and every sentence checked
offline (`audits.check.check_sentence`, the scorer behind `audits.judge`; the library in
memory, search by the same relevance as the database library re-ranks the index's hits).

Printed per format: ours; `before`, the same without the citation-level contradiction model
(audits/contradiction.py, fitted by benchmarks/audit_contra_fit.py on claims these drafts do not
use); and a baseline that judges by term coverage alone (a citation is flagged when under half
of the claim's content terms are in the cited paper's closest passage):
resolution (references resolved to the right paper; missing papers said `not_in_library`),
flag precision / recall (flagged = unsupported or contradicted; positives = wrong and
contradicting citations), correct citations flagged, contradiction recall, uncited claims with
their evidence paper among the top 3 suggestions, evidence quotes verbatim, and time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tests.support import audit_drafts


def library_of(papers, embed):
    from bayes_app.audits.memory import MemoryLibrary, MemoryPaper
    from bayes_app.audits.resolve import LibraryPaper

    return MemoryLibrary(
        [
            MemoryPaper(LibraryPaper(p.id, p.title, p.year, p.doi, list(p.authors), p.zotero_key), [p.abstract])
            for p in papers
        ],
        embed,
    )


def coverage_judge(claim: str, quote: str, _embed) -> object:
    """The baseline: term coverage alone."""
    from bayes_app.audits.judge import Judgement
    from bayes_app.search.sparse import tokens

    terms = set(tokens(claim))
    cov = len(terms & set(tokens(quote))) / len(terms) if terms else 0.0
    return Judgement("supported" if cov >= 0.5 else "unsupported", cov, "")


def run_format(fmt: str, papers, items, embed, judge_fn=None, contradiction_model: bool = True) -> dict:
    from bayes_app.audits.resolve import Resolver
    from bayes_app.audits.sentences import build

    draft = build(_read_draft(fmt, items))
    library = library_of(papers, embed)
    resolver = Resolver(library.papers())
    results, seconds = _check_all(draft, resolver, library, embed, judge_fn, contradiction_model)
    c = _counts(results, items, papers)
    n = {k: sum(i.kind == k for i in items) for k in audit_drafts.KINDS}
    return {
        "format": fmt,
        "sentences": len(results),
        "matched": c["matched"],
        "resolution": c["resolved"] / max(1, c["in_library"]),
        "missing_said": f"{c['missing_ok']}/{c['missing']}",
        "precision": c["tp"] / max(1, c["tp"] + c["fp"]),
        "recall": c["tp"] / max(1, c["tp"] + c["fn"]),
        "correct_flagged": f"{c['fp']}/{n['correct']}",
        "wrong_flagged": f"{c['tp'] - c['contra_flagged']}/{n['wrong']}",
        "contradiction_recall": f"{c['contra_flagged']}/{n['contradicted']}",
        "contradicted_verdicts": f"{c['contra_verdict']}/{n['contradicted']}",
        "uncited_top3": f"{c['uncited_hit']}/{n['uncited']}",
        "quotes_verbatim": f"{c['quotes_ok']}/{c['quotes']}",
        "seconds": round(seconds, 1),
    }


def _read_draft(fmt: str, items):
    from bayes_app.audits import readers

    if fmt == "md":
        return readers.read("draft.md", audit_drafts.markdown(items).encode())
    if fmt == "tex":
        tex, bib = audit_drafts.latex(items)
        return readers.read("draft.tex", tex.encode(), bib.encode())
    return readers.read("draft.docx", audit_drafts.docx(items))


def _check_all(draft, resolver, library, embed, judge_fn, contradiction_model: bool) -> tuple[list, float]:
    """(each sentence's result, seconds taken), with `judge_fn` for the judge and the
    contradiction model off when asked."""
    from bayes_app.audits import check, contradiction

    saved, saved_flags = check.judge, contradiction.flags
    if judge_fn is not None:
        check.judge = judge_fn
    if judge_fn is not None or not contradiction_model:
        contradiction.flags = lambda _p, _f: False  # the model is off
    t0 = time.perf_counter()
    try:
        results = [check.check_sentence(s, draft, resolver, library, embed)[0] for s in draft.sentences]
    finally:
        check.judge, contradiction.flags = saved, saved_flags
    return results, time.perf_counter() - t0


def _counts(results, items, papers) -> dict[str, int]:
    """What the check found against what each item is (the draft keeps the items' order, one sentence each)."""
    by_claim = {audit_drafts._sentence(i.claim)[:40]: i for i in items}
    c = dict.fromkeys(
        (
            "resolved",
            "in_library",
            "missing_ok",
            "missing",
            "tp",
            "fp",
            "fn",
            "contra_flagged",
            "contra_verdict",
            "uncited_hit",
            "quotes",
            "quotes_ok",
            "matched",
        ),
        0,
    )
    texts = {p.id: p.abstract for p in papers}
    for r in results:
        item = by_claim.get(r.text[:40])
        if item is not None:
            _count(c, r, item, texts)
    return c


def _count(c: dict[str, int], r, item, texts: dict[str, str]) -> None:
    from bayes_app.audits.result import FLAGGED

    c["matched"] += 1
    for cit in r.citations:
        if cit.evidence is not None:
            c["quotes"] += 1
            c["quotes_ok"] += cit.evidence.quote in texts.get(cit.evidence.document_id, "")
    if item.kind == "uncited":
        c["uncited_hit"] += any(s.document_id == item.evidence.id for s in r.suggestions[:3])
        return
    cit = r.citations[0] if r.citations else None
    if item.kind == "missing":
        c["missing"] += 1
        c["missing_ok"] += cit is not None and cit.verdict == "not_in_library"
        return
    c["in_library"] += 1
    c["resolved"] += cit is not None and cit.document_id == item.cited.id
    flagged = cit is not None and cit.verdict in FLAGGED
    positive = item.kind in ("wrong", "contradicted")
    c["tp"] += flagged and positive
    c["fp"] += flagged and not positive
    c["fn"] += (not flagged) and positive
    if item.kind == "contradicted":
        c["contra_flagged"] += flagged
        c["contra_verdict"] += cit is not None and cit.verdict == "contradicted"


def held_drafts(data: Path, n: int, first: int = 1) -> None:
    """Drafts from claims of SciFact train's `held` split only: claims the contradiction model was
    never fitted on and no rule was read from. Counts summed over the drafts (overlapping samples
    of the split's claims), ours beside the model off."""
    from scifact_sets import split_of

    from bayes_app.audits.judge import CachedEmbed

    embed = CachedEmbed()
    keys = ("correct_flagged", "wrong_flagged", "contradiction_recall", "uncited_top3", "quotes_verbatim")
    total: dict[str, dict[str, list[int]]] = {"ours": {}, "before": {}}
    for seed in range(first, first + n):
        papers, items = audit_drafts.scifact_set(data, seed, keep=lambda claim_id: split_of(claim_id) == "held")
        for name, on in (("ours", True), ("before", False)):
            got = run_format("md", papers, items, embed, contradiction_model=on)
            for k in keys:
                a, b = (int(x) for x in got[k].split("/"))
                acc = total[name].setdefault(k, [0, 0])
                acc[0] += a
                acc[1] += b
            print(f"seed {seed} {name}: " + ", ".join(f"{k} {got[k]}" for k in keys), flush=True)
    print(f"\nSciFact train `held` claims only, {n} Markdown drafts summed")
    print(f"{'':<26}{'ours':>12}{'before':>12}")
    for k in keys:
        a, b = (f"{total[c][k][0]}/{total[c][k][1]}" for c in ("ours", "before"))
        print(f"  {k:<24}{a:>12}{b:>12}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=audit_drafts.DATA)
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--formats", default="md,tex,docx")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--held-drafts",
        type=int,
        default=0,
        metavar="N",
        help="instead: N Markdown drafts (seeds 1..N) of `held`-split claims only, summed",
    )
    ap.add_argument("--first-seed", type=int, default=1, help="with --held-drafts: the first seed")
    args = ap.parse_args()
    from bayes_app.audits.judge import CachedEmbed

    if args.held_drafts:
        held_drafts(args.data, args.held_drafts, args.first_seed)
        return

    papers, items = audit_drafts.scifact_set(args.data, args.seed)
    out = {}
    for fmt in args.formats.split(","):
        ours = run_format(fmt, papers, items, CachedEmbed())  # a fresh cache: the time includes embedding
        warm = CachedEmbed()  # the comparisons share one cache (their times include less embedding)
        before = run_format(fmt, papers, items, warm, contradiction_model=False)
        base = run_format(fmt, papers, items, warm, coverage_judge)
        out[fmt] = {"ours": ours, "before": before, "baseline": base}
    if args.json:
        print(json.dumps(out))
        return
    print(f"SciFact train drafts: {len(items)} sentences, library of {len(papers)} abstracts (seed {args.seed})")
    keys = [k for k in next(iter(out.values()))["ours"] if k != "format"]
    for fmt, pair in out.items():
        print(f"\n[{fmt}]{'':<24}{'ours':>12}{'before':>12}{'coverage baseline':>20}")
        for k in keys:
            cells = [pair[c][k] for c in ("ours", "before", "baseline")]
            a, b, c = (f"{v:.2f}" if isinstance(v, float) else str(v) for v in cells)
            print(f"  {k:<26}{a:>12}{b:>12}{c:>20}")


if __name__ == "__main__":
    main()
