"""relevance_ranker: the learned sentence relevance model beside today's rankers, on data it was not tuned on.

    .venv/bin/python benchmarks/relevance_ranker.py [--data DIR]

Sets (built by scripts/train_relevance.py's code, same candidates as in training):

- SciFact held: the ~30 % of SciFact train claims that `benchmarks/scifact_sets.split_of` puts
  in `held` (never used for training); candidates = the sentences of the evidence abstracts
  and of BM25's best other abstracts; answering = the annotated rationale sentences.
- Own labels, leave one paper out: the hand-labelled questions on one bundled paper, ranked by a
  model trained on SciFact tune and the other paper's questions only (retrained here with the
  script's code); answering = sentences stating a labelled fact (gain 2), a sentence only in a
  labelled region gains 1 in nDCG.

Rankers: "ask (before)" = the offline Ask score before this change (0.7 · (0.75 · cosine +
0.25 · term coverage) + 0.3 · the passage's, raised by the better neighbour); "focus (before)" =
`llm.choose.focus_relevance` (offline claims before this change); "learned" =
`llm.relevance.score` (its off-subject sentences at 0, as the app scores them). MRR of the first
answering sentence, nDCG@5/@10, share of questions whose first sentence answers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


def metrics(scores: np.ndarray, gains: list[int]) -> dict[str, float]:
    g = np.array(gains, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    ranked = g[order]
    hit = np.nonzero(ranked >= 2)[0]
    out = {"MRR": 1.0 / (hit[0] + 1) if len(hit) else 0.0, "first answers": float(ranked[0] >= 2)}
    ideal = np.sort(g)[::-1]
    for k in (5, 10):
        disc = 1 / np.log2(np.arange(2, k + 2))
        dcg = float(((2 ** ranked[:k] - 1) * disc[: len(ranked[:k])]).sum())
        idcg = float(((2 ** ideal[:k] - 1) * disc[: len(ideal[:k])]).sum())
        out[f"nDCG@{k}"] = dcg / idcg if idcg else 0.0
    return out


def _logistic(x, mean, scale, coef, intercept) -> np.ndarray:
    return 1 / (1 + np.exp(-(((x - mean) / scale) @ coef + intercept)))


def before_ask(g, embed) -> np.ndarray:
    from bayes_app.llm import choose

    s, _ = choose.relevance(g.question, g.sentences, embed)
    uniq = list(dict.fromkeys(g.passages))
    ps, _ = choose.relevance(g.question, uniq, embed)
    prior = dict(zip(uniq, ps))
    s = (1 - choose.PASSAGE_WEIGHT) * s + choose.PASSAGE_WEIGHT * np.array([prior[p] for p in g.passages])
    key = {p: i for i, p in enumerate(uniq)}
    return choose.with_neighbours(s, [(pos, key[p]) for pos, p in zip(g.positions, g.passages)])


def before_focus(g, embed) -> np.ndarray:
    from bayes_app.llm import choose

    return choose.focus_relevance(g.question, g.sentences, embed, g.passages)


def main() -> None:
    import train_relevance as tr

    from bayes_app.llm import relevance

    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=tr.DEFAULT_DATA)
    ap.add_argument("--held", type=int, default=0, help="only the first N held claims (0: all)")
    args = ap.parse_args()
    embed = tr.Embedder()
    sci, own = tr.training_groups(args.data, embed)
    held = [g for g in sci if g.split == "held"][: args.held or None]
    tune = [g for g in sci if g.split == "tune"]
    tune_x = tr.matrix(tune, embed)
    sets: dict[str, list[tuple[object, np.ndarray]]] = {"SciFact held": []}
    for g, x in zip(held, tr.matrix(held, embed)):
        sets["SciFact held"].append((g, relevance.without_off_subject(x, relevance.probabilities(x))))
    own_x = tr.matrix(own, embed)
    for paper in sorted({g.source for g in own}):
        others = [(g, x) for g, x in zip(own, own_x) if g.source != paper]
        w = tr.fit(tune + [g for g, _ in others], tune_x + [x for _, x in others])
        mean, scale, coef = (np.array(w[k]) for k in ("mean", "scale", "coef"))
        name = f"own labels, {paper} held out"
        sets[name] = [
            (g, relevance.without_off_subject(x, _logistic(x, mean, scale, coef, w["intercept"])))
            for g, x in zip(own, own_x)
            if g.source == paper
        ]
    embed.save()
    keys = ("MRR", "nDCG@5", "nDCG@10", "first answers")
    for name, rows in sets.items():
        print(f"\n{name}: {len(rows)} questions, {sum(len(g.sentences) for g, _ in rows)} candidate sentences")
        print(f"{'ranker':<16}" + "".join(f"{k:>14}" for k in keys))
        for ranker, fn in (
            ("ask (before)", lambda g, _p: before_ask(g, embed)),
            ("focus (before)", lambda g, _p: before_focus(g, embed)),
            ("learned", lambda _g, p: p),
        ):
            ms = [metrics(np.asarray(fn(g, p)), g.gains) for g, p in rows]
            print(f"{ranker:<16}" + "".join(f"{np.mean([m[k] for m in ms]):>14.3f}" for k in keys))


if __name__ == "__main__":
    main()
