"""map_quality: how trustworthy the claims of a map are — offline and with a scripted model.

    .venv/bin/python benchmarks/map_quality.py [--data ../shared/data/scifact] [--baseline]

Builds maps over the three bundled papers (tests/fixtures/papers) in-process (real index
process, real embeddings, real Redis, SQLite), for a few research questions, with

- the offline provider (extractive research), and
- a scripted model over the real `openai` client: it quotes naively — the first sentence of
  every passage it is sent, whatever the passage is (reference lists, figure text, author
  blocks), twice for the first one (a duplicate) — so what reaches the map shows what the
  pipeline's checks keep out;

then prints per build: the share of claim quotes from body/caption text (hand-labelled regions
of the papers, tests/support/paper_labels.py; and from chunk roles when structure-aware
ingestion provides them), duplicate claims (same content terms ≥ 0.8 Jaccard, or embedding
cosine ≥ 0.9 with the same numbers), empty themes, theme titles that are "X and Y" word pairs,
`contradicts` links; theme names (after the build, Expand, Restructure, and the synthesis's
headings) against their claims — every word in two of them, generic, one-word, dangling or
absent names (tests/support/mapchecks.name_checks); and, on the SciFact train `held` split
(benchmarks/scifact_sets.py), the contradiction false-positive rate and the support ROC-AUC;
and the reference entries parsed per paper at ingestion.

--baseline REF runs the same on another commit (its own worktree under /tmp, this script and
its helpers copied in) and prints it side by side; e.g. `--baseline 265dc26` (before issue 12)
or `--baseline main`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = [
    "How do LLM agents search for academic papers?",
    "How can we explain molecular property prediction models?",
    "What are counterfactual explanations?",
    "How is PaSa trained and evaluated?",
]
PAPERS = ["pasa.pdf", "explanations-molecular-prediction-models.pdf", "duplicate-media.pdf"]


REFERENCES: dict[str, str] = {}  # file -> reference entries parsed at ingestion


def build_all(provider_factory, model: str, embed) -> tuple[list[dict], float]:
    from tests.support import pdfs
    from tests.support.maplab import MapLab
    from tests.support.mapquality import measure_map

    out = []
    t0 = time.monotonic()
    from tests.support.mapchecks import run_checks

    with MapLab([pdfs.FIXTURES / p for p in PAPERS]) as lab:
        for q in QUESTIONS:
            mid = lab.create_map(q)
            lab.run("build_map", mid, provider_factory, prompt=q, model=model)
            out.append(measure_map(lab, mid, embed))
            if model == "offline":  # grouping and synthesis: Expand, Restructure + accept, Synthesize
                out[-1]["runs"] = run_checks(lab, mid, provider_factory)
        REFERENCES.update(reference_entries(lab))
    return out, time.monotonic() - t0


def _rates(rows, detect) -> dict[str, float]:
    sup = [r for r in rows if r.label == "SUPPORT"]
    con = [r for r in rows if r.label == "CONTRADICT"]
    fp = sum(any(detect(r.claim, e) for e in r.evidence) for r in sup) + sum(detect(r.claim, r.neutral) for r in rows)
    tp = sum(any(detect(r.claim, e) for e in r.evidence) for r in con)
    return {"fp_rate": fp / (len(sup) + len(rows)), "recall": tp / max(1, len(con))}


def scifact_figures(data: str | None) -> dict:
    """On the held split. Code without a contradiction score (main) is measured through its
    binary detector, as the issue measured it."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from scifact_sets import find_data, load_rows, roc_auc

    from bayes_app.maps import support

    rows = [r for r in load_rows(find_data(data)) if r.split == "held"]
    if not hasattr(support, "contradiction_score"):
        a = roc_auc(
            [support.score_support(r.claim, r.evidence_abstract).score for r in rows],
            [support.score_support(r.claim, r.negative_abstract).score for r in rows],
        )
        cs = [float(support.disagree(r.claim, " ".join(r.evidence))) for r in rows]
        link = _rates(rows, support.disagree)
    else:
        from support_tune import CachedEmbed, needed_texts

        embed = CachedEmbed()
        embed.warm(needed_texts(rows))
        a = roc_auc(
            [support.score_support(r.claim, r.evidence_abstract, embed).score for r in rows],
            [support.score_support(r.claim, r.negative_abstract, embed).score for r in rows],
        )
        cs = [support.contradiction_score(r.claim, " ".join(r.evidence), embed) for r in rows]
        link = _rates(rows, lambda x, y: support.disagree(x, y, embed))
    b = roc_auc(
        [c for c, r in zip(cs, rows) if r.label == "CONTRADICT"], [c for c, r in zip(cs, rows) if r.label == "SUPPORT"]
    )
    return {"support_auc": a, "contradiction_auc": b, "link_fp": link["fp_rate"], "link_recall": link["recall"]}


def reference_entries(lab) -> dict[str, str]:
    """Entries of each paper's reference list parsed at ingestion (with year and title)."""
    try:
        from bayes_app.models import DocumentReference
    except ImportError:
        return dict.fromkeys(PAPERS, "n/a")  # code without structure-aware ingestion
    from sqlmodel import select

    from bayes_app.models import Document

    out = {}
    with lab.sessions() as db:
        for d in db.exec(select(Document)):
            refs = db.exec(select(DocumentReference).where(DocumentReference.document_id == d.id)).all()
            full = sum(bool(r.year and r.title) for r in refs)
            out[d.filename] = f"{len(refs)} ({full} with year and title)"
    return out


RUN_ROWS = [  # (label, key, how the maps combine, format)
    ("repeated theme names (any step)", "repeated_names", sum, "{}"),
    ("theme under a node of its own name", "nested_same_name", sum, "{}"),
    ("empty themes after any run or accept", "empty_themes", sum, "{}"),
    ("Restructure: empty themes after accept", "restructure_empty", sum, "{}"),
    ("Restructure: repeated names after accept", "restructure_repeated", sum, "{}"),
    ("Restructure: claims lost or duplicated", "restructure_claims_lost", lambda v: sum(abs(x) for x in v), "{}"),
    ("Restructure: largest group share (max)", "largest_share", max, "{:.0%}"),
    ("Restructure: groups proposed (mean)", "groups", lambda v: sum(v) / len(v), "{:.1f}"),
    ("synthesis words (max)", "synthesis_words", max, "{}"),
    ("synthesis words, markers counted (max)", "synthesis_words_strict", max, "{}"),
    ("synthesis markers not on the sentence's quote", "synthesis_off_quote", sum, "{}"),
    ("synthesis markers not on its citations", "synthesis_bad_markers", sum, "{}"),
    ("export: markers that follow no statement", "orphan_markers", sum, "{}"),
    ("export: double-escaped brackets", "double_escaped", sum, "{}"),
    ("export: repeated reference entries", "repeated_references", sum, "{}"),
    ("export: synthesis shown (times, max)", "synthesis_shown", max, "{}"),
]


NAME_STEPS = ("build", "expand", "restructure", "synthesis")  # where theme names (or headings) are made
NAME_ROWS = [  # (label, key of tests/support/mapchecks.name_checks)
    ("every word in >= 2 of its claims", "held"),
    ("generic (Other findings, one common word)", "generic"),
    ("one word", "one_word"),
    ("dangling word at either end", "dangling"),
    ("phrase absent from its claims", "absent"),
]


def summarise_runs(maps: list[dict]) -> dict:
    out: dict = {}
    for _label, key, combine, _fmt in RUN_ROWS:
        vals = [m["runs"][key] for m in maps if key in m.get("runs", {})]
        out[key] = combine(vals) if vals else None
    for step in NAME_STEPS:
        got = [m["runs"][f"names_{step}"] for m in maps if f"names_{step}" in m.get("runs", {})]
        out[f"names_{step}"] = {
            k: (sum((g[k] for g in got), []) if k == "examples" else sum(g[k] for g in got))
            for k in (got[0] if got else {})
        }
    return out


def summarise(name: str, maps: list[dict]) -> dict:
    quotes = sum(m["quotes"] for m in maps)
    return {
        "build": name,
        "claims": sum(m["claims"] for m in maps),
        "runs": summarise_runs(maps),
        "body_share": 1 - sum(m["non_body"] for m in maps) / max(1, quotes),
        "duplicates": sum(m["duplicates"] for m in maps),
        "empty_themes": sum(m["empty_themes"] for m in maps),
        "pair_titles": sum(m["pair_titles"] for m in maps),
        "contradicts": sum(m["contradicts"] for m in maps),
    }


def run(data: str | None, scifact: bool = True) -> dict:
    try:  # run kinds are registered explicitly since issue 13 (older commits, for --baseline, have no registry)
        from bayes_app import registry

        registry.register()
    except ImportError:
        pass
    from bayes_app.llm.offline import OfflineProvider
    from bayes_app.llm.openai_provider import OpenAIProvider
    from bayes_app.search.embeddings import get_embedder
    from tests.support.fake_openai import FakeOpenAI
    from tests.support.maplab import MODEL
    from tests.support.mapquality import naive_model

    model = get_embedder()

    def embed(texts):
        return model.embed_passages(list(texts))

    offline, t_off = build_all(OfflineProvider, "offline", embed)
    with FakeOpenAI(responder=naive_model) as fake:
        scripted, t_scr = build_all(lambda: OpenAIProvider(fake.base_url, "test-key"), MODEL, embed)
    return {
        "offline": summarise("offline", offline),
        "scripted": summarise("scripted model", scripted),
        "detail": {"offline": offline, "scripted": scripted},
        "seconds": {"offline": t_off, "scripted": t_scr},
        "scifact": scifact_figures(data) if scifact else None,
        "references": dict(REFERENCES),
    }


def baseline(data: str | None, ref: str, scifact: bool = True) -> dict | None:
    """The same measurement on commit `ref` (its own worktree, this script and its helpers copied in)."""
    from benchmarks.baseline_run import measure_at

    args = (["--data", data] if data else []) + ([] if scifact else ["--no-scifact"])
    copy = [
        "benchmarks/scifact_sets.py",
        "benchmarks/support_tune.py",
        "tests/support/maplab.py",
        "tests/support/paper_labels.py",
        "tests/support/fake_openai.py",
        "tests/support/mapquality.py",
        "tests/support/mapchecks.py",
    ]
    return measure_at(ref, "benchmarks/map_quality.py", args, copy)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="SciFact dir (claims_train.csv, corpus.jsonl)")
    ap.add_argument("--baseline", metavar="REF", help="also measure this commit (e.g. main, 265dc26)")
    ap.add_argument("--json", action="store_true", help="print one JSON line (used for the baseline)")
    ap.add_argument("--detail", action="store_true")
    ap.add_argument("--no-scifact", action="store_true", help="skip the SciFact figures (faster)")
    args = ap.parse_args()
    ours = run(args.data, not args.no_scifact)
    if args.json:
        print(json.dumps(ours, default=str))
        return
    base = baseline(args.data, args.baseline, not args.no_scifact) if args.baseline else None
    _print_builds(ours, base)
    _print_runs(ours, base, args.detail)
    _print_scifact(ours, base, args.baseline)
    if args.detail:
        for build in ("offline", "scripted"):
            for q, m in zip(QUESTIONS, ours["detail"][build]):
                print(build, q, m["titles"], m["bad_examples"])


def _print_builds(ours: dict, base: dict | None) -> None:
    """The maps' shape, offline and scripted (and the baseline's)."""
    rows = [
        ("share of claim quotes from body/caption text", "body_share", "{:.1%}"),
        ("duplicate claims", "duplicates", "{}"),
        ("empty themes", "empty_themes", "{}"),
        ('"X and Y" theme titles', "pair_titles", "{}"),
        ("contradicts links", "contradicts", "{}"),
        ("claims", "claims", "{}"),
    ]
    print(f"maps over {len(PAPERS)} bundled papers, {len(QUESTIONS)} questions each build\n")
    head = f"{'measure':<48}" + "".join(
        f"{h:>17}"
        for h in (["offline (base)", "offline", "scripted (base)", "scripted"] if base else ["offline", "scripted"])
    )
    print(head)
    for label, key, fmt in rows:
        vals = []
        for build in ("offline", "scripted"):
            if base:
                vals.append(fmt.format(base[build][key]))
            vals.append(fmt.format(ours[build][key]))
        print(f"{label:<48}" + "".join(f"{v:>17}" for v in vals))


def _print_runs(ours: dict, base: dict | None, detail: bool) -> None:
    """The runs on the offline maps, and their theme names."""
    print("\noffline maps, then Expand (first theme), Restructure + accept, Synthesize on each\n")
    print(f"{'measure':<48}" + ("".join(f"{h:>17}" for h in ["base", "ours"]) if base else f"{'ours':>17}"))
    for label, key, _combine, fmt in RUN_ROWS:
        vals = ([(base["offline"].get("runs") or {}).get(key)] if base else []) + [ours["offline"]["runs"].get(key)]
        print(f"{label:<48}" + "".join(f"{'n/a' if v is None else fmt.format(v):>17}" for v in vals))
    print("\ntheme names (synthesis: its headings) against their claims: names with the property / names\n")
    print(f"{'measure':<48}" + ("".join(f"{h:>17}" for h in ["base", "ours"]) if base else f"{'ours':>17}"))
    for step in NAME_STEPS:
        for label, key in NAME_ROWS:
            vals = ([(base["offline"].get("runs") or {}).get(f"names_{step}")] if base else []) + [
                ours["offline"]["runs"].get(f"names_{step}")
            ]
            cells = [f"{v[key]}/{v['names']}" if v else "n/a" for v in vals]
            print(f"{step + ': ' + label:<48}" + "".join(f"{c:>17}" for c in cells))
    if detail:
        for step in NAME_STEPS:
            print(
                step, "names that fail a check:", (ours["offline"]["runs"].get(f"names_{step}") or {}).get("examples")
            )


def _print_scifact(ours: dict, base: dict | None, baseline_ref: str | None) -> None:
    """The SciFact figures, the reference entries parsed per paper, the build times."""
    print()
    s, b = ours["scifact"], (base or {}).get("scifact")
    for label, key in (
        ("support ROC-AUC (evidence vs top BM25 non-evidence)", "support_auc"),
        ("disagreement ROC-AUC (CONTRADICT vs SUPPORT)", "contradiction_auc"),
        ("contradicts-link false-positive rate", "link_fp"),
        ("contradicts-link recall", "link_recall"),
    ):
        if s:
            print(f"{label:<52}" + (f"{b[key]:>10.3f}" if b else "") + f"{s[key]:>10.3f}")
    print(f"\nSciFact: train claims, held split (benchmarks/scifact_sets.py); base = {baseline_ref or '-'}")
    print("reference entries parsed per paper:")
    for p in PAPERS:
        print(
            f"  {p:<46}"
            + (f"{(base or {}).get('references', {}).get(p, 'n/a'):>12}" if base else "")
            + f"{ours['references'].get(p, 'n/a'):>30}"
        )
    print("build seconds:", {k: round(v, 1) for k, v in ours["seconds"].items()})


if __name__ == "__main__":
    main()
