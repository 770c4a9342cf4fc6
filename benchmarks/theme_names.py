"""theme_names: how well themes are named from their claims — ours beside another commit's.

    .venv/bin/python benchmarks/theme_names.py [--baseline main] [--detail]

In-process and quick (no database, index or workers): the claim-shaped sentences of the three
bundled papers (pypdfium2's text, `maps.sentences.candidate_sentences` + `claim_problem`), for
each research question the 30 closest to it by the app's embedder, then

- Restructure's grouping and naming (`agents.themes.group`: also splits and living-map
  proposals), and
- a research plan's namer (`agents.extractive.theme_title`) over the same groups,

each name checked against its own claims by `tests/support/mapchecks.name_checks` (independent
of the namer): every word in ≥ 2 of the claims (in the one, for a single claim), a phrase of
them, nothing dangling at either end ("Understand why", "Predictions due"), one-word and generic
names. `--baseline REF` runs the same script on commit REF (benchmarks/baseline_run.py).
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
PER_QUESTION = 30
ROWS = [
    ("names", "names"),
    ("every word in >= 2 of its claims", "held"),
    ("generic (Other findings, one common word)", "generic"),
    ("one word", "one_word"),
    ("dangling word at either end", "dangling"),
    ("phrase absent from its claims", "absent"),
]


def sentences() -> list[str]:
    import pypdfium2

    from bayes_app.maps import sentences as sent

    out: list[str] = []
    for name in PAPERS:
        pdf = pypdfium2.PdfDocument(str(ROOT / "tests" / "fixtures" / "papers" / name))
        for page in pdf:
            raw = page.get_textpage().get_text_range()
            if sent.looks_like_reference_list(raw):
                continue
            out += [s for s in sent.candidate_sentences(raw) if sent.claim_problem(s) is None]
    return list(dict.fromkeys(out))


def run() -> dict:
    import numpy as np

    from bayes_app.agents import extractive, themes
    from bayes_app.search.embeddings import get_embedder
    from tests.support.mapchecks import name_checks

    model = get_embedder()
    cache: dict[str, np.ndarray] = {}

    def embed(texts):
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            cache.update(zip(missing, model.embed_passages(missing)))
        return np.stack([cache[t] for t in texts])

    pool = sentences()
    pv = embed(pool)
    t0 = time.monotonic()
    group_named, plan_named = [], []
    for q in QUESTIONS:
        qv = np.asarray(model.embed_query(q))
        texts = [pool[i] for i in np.argsort(-(pv @ qv))[:PER_QUESTION]]
        groups = themes.group(texts, embed)
        group_named += [(title, [texts[i] for i in idx]) for title, idx in groups]
        taken: list = []
        for _, idx in groups:
            mine = [texts[i] for i in idx]
            title, tv = extractive.theme_title(mine, embed(mine).mean(0), taken, embed)
            taken.append((title, tv))
            plan_named.append((title, mine))
    return {
        "restructure": name_checks(group_named),
        "plan": name_checks(plan_named),
        "seconds": time.monotonic() - t0,
        "sentences": len(pool),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", metavar="REF", help="also measure this commit (e.g. main)")
    ap.add_argument("--json", action="store_true", help="print one JSON line (used for the baseline)")
    ap.add_argument("--detail", action="store_true", help="list the names that fail a check")
    args = ap.parse_args()
    ours = run()
    if args.json:
        print(json.dumps(ours))
        return
    base = None
    if args.baseline:
        from benchmarks.baseline_run import measure_at

        base = measure_at(args.baseline, "benchmarks/theme_names.py", [], ["tests/support/mapchecks.py"])
    print(
        f"{ours['sentences']} claim sentences of {len(PAPERS)} bundled papers, {PER_QUESTION} per question, "
        f"{len(QUESTIONS)} questions\n"
    )
    heads = (["base", "ours"] if base else ["ours"]) * 2
    print(f"{'':<44}" + "".join(f"{h:>12}" for h in heads))
    print(
        f"{'':<44}"
        + f"{'Restructure (themes.group)':>{12 * len(heads) // 2}}"
        + f"{'plan namer':>{12 * len(heads) // 2}}"
    )
    for label, key in ROWS:
        cells = []
        for part in ("restructure", "plan"):
            for r in [base, ours] if base else [ours]:
                cells.append(str(r[part][key]) if r else "n/a")
        print(f"{label:<44}" + "".join(f"{c:>12}" for c in cells))
    print("\nnaming seconds:", round(ours["seconds"], 1), "(base:", round(base["seconds"], 1) if base else "-", ")")
    if args.detail:
        for part in ("restructure", "plan"):
            for name, r in (("base", base), ("ours", ours)):
                if r:
                    print(f"{part} {name} failing:", r[part]["examples"])


if __name__ == "__main__":
    main()
