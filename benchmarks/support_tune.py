"""Fit and measure the offline support scorer and contradiction detector on SciFact train.

    .venv/bin/python benchmarks/support_tune.py [--data DIR] [--fit]

Prints, for the `tune` and `held` splits (benchmarks/scifact_sets.py), the old scorer (git
main's rules: term coverage, negation flip) next to the current one:

- support A: ROC-AUC of evidence abstracts vs the top BM25 non-evidence abstract;
- support B: ROC-AUC of SUPPORT vs CONTRADICT evidence sentences;
- contradiction detector: false-positive rate on SUPPORT and same-topic neutral pairs, recall
  on CONTRADICT pairs.

--fit fits the logistic weights on `tune` (numpy gradient descent, L2) and prints them in the
form of `bayes_app.maps.support.WEIGHTS`; the held split is never used for fitting.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scifact_sets import ROOT, find_data, load_rows, roc_auc

sys.path.insert(0, str(ROOT))
from bayes_app.maps import support
from bayes_app.maps.sentences import split_sentences

S_KEYS = [k for k in support.SUPPORT_WEIGHTS if k != "bias"]
C_KEYS = [k for k in support.CONTRADICTION_WEIGHTS if k != "bias"]


class CachedEmbed:
    """The app's embedder, each distinct text embedded once (batched up front)."""

    def __init__(self) -> None:
        from bayes_app.search.embeddings import get_embedder

        self.model = get_embedder()
        self.cache: dict[str, np.ndarray] = {}

    def warm(self, texts: set[str]) -> None:
        todo = sorted(t for t in texts if t not in self.cache)
        if todo:
            self.cache.update(zip(todo, self.model.embed_passages(todo)))

    def __call__(self, texts) -> np.ndarray:
        self.warm(set(texts))
        return np.stack([self.cache[t] for t in texts])


def needed_texts(rows) -> set[str]:
    out: set[str] = set()
    for r in rows:
        out.update([r.claim, support.negate(r.claim), support.negate_statement(r.claim), r.neutral, *r.evidence])
        for q in (r.evidence_abstract, r.negative_abstract, " ".join(r.evidence), r.neutral):
            out.update(s for s in split_sentences(" ".join(q.split())) if len(s.split()) >= 3)
            out.add(" ".join(q.split()))
    return out


def feature_rows(pairs, embed) -> list[dict[str, float]]:
    return [
        support._with_interactions(support.features(" ".join(c.split()), " ".join(q.split()), embed)) for c, q in pairs
    ]


def matrix(rows: list[dict[str, float]], keys: list[str]) -> np.ndarray:
    return np.array([[r[k] for k in keys] for r in rows])


def fit_logistic(
    X: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 20_000, lr: float = 0.5
) -> tuple[np.ndarray, float]:
    """Weights and bias on the raw features (fitted on standardised ones)."""
    mu, sd = X.mean(0), X.std(0) + 1e-9
    Zb = np.c_[(X - mu) / sd, np.ones(len(X))]
    w = np.zeros(Zb.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-Zb @ w))
        w -= lr * (Zb.T @ (p - y) / len(y) + l2 * np.r_[w[:-1], 0] / len(y))
    W = w[:-1] / sd
    return W, float(w[-1] - (W * mu).sum())


def old_support(claim: str, quote: str) -> float:
    """git main's scorer: content-term coverage, minus 0.3 on a negation flip."""
    from bayes_app.search.sparse import tokens

    w, q = set(tokens(claim)), set(tokens(quote))
    if not w or not q:
        return 0.0
    ww, qw = set(support._words(claim)), set(support._words(quote))
    s = len(w & q) / len(w) - (0.3 if bool(ww & support.NEGATIONS) != bool(qw & support.NEGATIONS) else 0)
    return max(0.0, min(1.0, s))


def old_disagree(a: str, b: str) -> bool:
    """git main's detector: shared terms plus a negation XOR, an antonym or a contrast cue."""
    from bayes_app.search.sparse import tokens

    ta, tb = set(tokens(a)), set(tokens(b))
    shared = ta & tb
    if not ta or not tb or len(shared) < 2 or len(shared) / min(len(ta), len(tb)) < 0.25:
        return False
    wa, wb = set(support._words(a)), set(support._words(b))
    if bool(wa & support.NEGATIONS) != bool(wb & support.NEGATIONS):
        return True
    return any((x in wa and y in wb) or (y in wa and x in wb) for x, y in support._OPPOSITES)


def contradiction_rates(rows, detect) -> dict[str, float]:
    sup = [r for r in rows if r.label == "SUPPORT"]
    con = [r for r in rows if r.label == "CONTRADICT"]
    fp_sup = sum(any(detect(r.claim, e) for e in r.evidence) for r in sup)
    fp_neu = sum(detect(r.claim, r.neutral) for r in rows)
    tp = sum(any(detect(r.claim, e) for e in r.evidence) for r in con)
    negatives = len(sup) + len(rows)
    return {
        "fp_rate": (fp_sup + fp_neu) / negatives,
        "fp_support": fp_sup / max(1, len(sup)),
        "fp_neutral": fp_neu / max(1, len(rows)),
        "recall": tp / max(1, len(con)),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data")
    ap.add_argument("--fit", action="store_true")
    args = ap.parse_args()
    rows = load_rows(find_data(args.data))
    embed = CachedEmbed()
    embed.warm(needed_texts(rows))
    split = {s: [r for r in rows if r.split == s] for s in ("tune", "held")}
    feats = {
        s: {
            "ev": feature_rows([(r.claim, r.evidence_abstract) for r in rs], embed),
            "neg": feature_rows([(r.claim, r.negative_abstract) for r in rs], embed),
            "sent": feature_rows([(r.claim, " ".join(r.evidence)) for r in rs], embed),
            "support": np.array([r.label == "SUPPORT" for r in rs]),
        }
        for s, rs in split.items()
    }
    sw, cw = dict(support.SUPPORT_WEIGHTS), dict(support.CONTRADICTION_WEIGHTS)
    if args.fit:
        t = feats["tune"]
        X = np.r_[matrix(t["ev"], S_KEYS), matrix(t["neg"], S_KEYS)]
        y = np.r_[np.ones(len(t["ev"])), np.zeros(len(t["neg"]))]
        W, b = fit_logistic(X, y)
        sw = {"bias": round(b, 3), **{k: round(float(v), 3) for k, v in zip(S_KEYS, W)}}
        W, b = fit_logistic(matrix(t["sent"], C_KEYS), (~t["support"]).astype(float))
        cw = {"bias": round(b, 3), **{k: round(float(v), 3) for k, v in zip(C_KEYS, W)}}
        print("SUPPORT_WEIGHTS =", sw)
        print("CONTRADICTION_WEIGHTS =", cw)

    def score(rows: list[dict[str, float]], weights: dict[str, float]) -> np.ndarray:
        return np.array([support._logistic(r, weights) for r in rows])

    print(f"{'split':<6} {'measure':<52} {'old':>7} {'new':>7}")
    for s, rs in split.items():
        f = feats[s]
        sup = f["support"]
        old_a = roc_auc(
            [old_support(r.claim, r.evidence_abstract) for r in rs],
            [old_support(r.claim, r.negative_abstract) for r in rs],
        )
        new_a = roc_auc(list(score(f["ev"], sw)), list(score(f["neg"], sw)))
        old_b = roc_auc(
            [float(old_disagree(r.claim, " ".join(r.evidence))) for r in rs if r.label == "CONTRADICT"],
            [float(old_disagree(r.claim, " ".join(r.evidence))) for r in rs if r.label == "SUPPORT"],
        )
        c = score(f["sent"], cw)
        new_b = roc_auc(list(c[~sup]), list(c[sup]))
        app_a = roc_auc([support.base_score(r) for r in f["ev"]], [support.base_score(r) for r in f["neg"]])
        print(f"{s:<6} {'support prob.: evidence vs top BM25 non-evid. (AUC)':<52} {old_a:7.3f} {new_a:7.3f}")
        print(f"{s:<6} {'support score (app): same pairs (AUC)':<52} {old_a:7.3f} {app_a:7.3f}")
        print(f"{s:<6} {'disagreement: CONTRADICT vs SUPPORT evidence (AUC)':<52} {old_b:7.3f} {new_b:7.3f}")
        old_c, new_c = (
            contradiction_rates(rs, old_disagree),
            contradiction_rates(rs, lambda a, b: support.disagree(a, b, embed)),
        )
        for k in ("fp_rate", "fp_support", "fp_neutral", "recall"):
            print(f"{s:<6} {'contradiction link ' + k:<52} {old_c[k]:7.3f} {new_c[k]:7.3f}")


if __name__ == "__main__":
    main()
