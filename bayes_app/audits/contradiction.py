"""Does the cited paper report the opposite of the sentence? A citation-level logistic model over
how the claim and its negations sit against the cited paper's passages.

The main signal is polarity: for each passage, how much closer it is (embeddings) to the claim
than to the claim's crude negations (`maps.support.negate`, `negate_statement`); a paper that
reports the opposite sits nearer the negation in the passages most like the claim. Lexical cues
(a polarity clash, a negation on one side only, opposite direction words) add a little.

The weights were fitted on SciFact train claims with SUPPORT or CONTRADICT evidence (the `tune`
split of `benchmarks/scifact_sets.split_of`, minus the claims and papers of the benchmark's
drafts) by `benchmarks/audit_contra_fit.py`, which prints the figures on the `held` split.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from bayes_app.maps import support

Embed = support.Embed
TOPIC = 0.4  # dense similarity from which a passage is about the claim's subject
SHARPNESS = 20.0  # softmax temperature: the passages most like the claim weigh most
TOP = 3

# fitted by benchmarks/audit_contra_fit.py (the standardisation folded into the weights)
WEIGHTS: dict[str, float] = {
    "bias": -2.178,
    "any_neg_closer3": 0.1974,
    "clash_top": 0.2802,
    "dir_opp3": 0.5014,
    "frac_neg_closer": 0.9031,
    "mean_pol3": -3.0177,
    "min_pol3": -4.5278,
    "neg_claim": 0.3428,
    "neg_mis_top": 0.0266,
    "top_pol": -1.4512,
    "top_sim": 1.0761,
    "wclash": 0.409,
    "wpol": -4.2068,
}
# P(contradicts) from which a citation with a lexical opposite is flagged: 2 % of the tune split's
# SUPPORT citations (cross-validated). Precision first: the issue allows 3 of 16 correct
# citations flagged and the scorer already flags about 2 of them as unsupported.
THRESHOLD = 0.6643


def _words(text: str) -> list[str]:
    return [w.lower() for w in support._WORDS.findall(text)]


def features(claim: str, passages: Sequence[str], embed: Embed) -> dict[str, float]:
    """The model's inputs for the claim against all the cited paper's passages ({} without any)."""
    claim = " ".join(claim.split())
    texts = [" ".join(p.split()) for p in passages]
    if not texts:
        return {}
    vc = embed([claim, support.negate(claim), support.negate_statement(claim)])
    vs = embed(texts)
    sim = vs @ vc[0]
    neg = np.maximum(vs @ vc[1], vs @ vc[2])
    pol = sim - neg
    top = np.argsort(-sim)[:TOP]
    w = np.exp(SHARPNESS * (sim - sim.max()))
    w /= w.sum()
    cw = _words(claim)
    claim_negated = support._negated(cw)
    claim_dir = support._direction(set(cw))
    clash = np.array([float(support.polarity_clash(claim, t)) for t in texts])
    t0 = texts[int(top[0])]
    on_topic = sim >= TOPIC
    return {
        "top_pol": float(pol[top[0]]),
        "wpol": float(w @ pol),
        "mean_pol3": float(pol[top].mean()),
        "min_pol3": float(pol[top].min()),
        "frac_neg_closer": float(((neg > sim) & on_topic).sum() / max(1, on_topic.sum())),
        "any_neg_closer3": float((neg[top] > sim[top]).any()),
        "wclash": float(w @ clash),
        "clash_top": float(clash[top[0]]),
        "neg_mis_top": float(support._negated(_words(t0)) != claim_negated),
        "neg_claim": float(claim_negated),
        "dir_opp3": float(any(support._direction(set(_words(texts[i]))) * claim_dir < 0 for i in top)),
        "top_sim": float(sim[top[0]]),
    }


def lexical_opposite(f: dict[str, float]) -> bool:
    """The passages show the opposite in words too: a polarity clash in the passage most like the
    claim (or in those weighing most), or an opposite direction word in one of the top three."""
    return bool(f) and (f["clash_top"] > 0 or f["wclash"] > 0.3 or f["dir_opp3"] > 0)


def contradicts(f: dict[str, float]) -> float | None:
    """P(contradicts) when the citation is flagged as contradicted, else None."""
    p = probability(f)
    return p if p >= THRESHOLD and lexical_opposite(f) else None


def probability(f: dict[str, float]) -> float:
    """P(the cited paper contradicts the claim) from `features` (0 without passages)."""
    if not f:
        return 0.0
    z = WEIGHTS["bias"] + sum(w * f[k] for k, w in WEIGHTS.items() if k != "bias")
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def most_contradicting(claim: str, passages: Sequence[str], embed: Embed) -> int:
    """The passage a contradiction verdict rests on: one with a polarity clash first, then the
    one nearest the claim's negation relative to the claim."""
    claim = " ".join(claim.split())
    texts = [" ".join(p.split()) for p in passages]
    vc = embed([claim, support.negate(claim), support.negate_statement(claim)])
    vs = embed(texts)
    pol = vs @ vc[0] - np.maximum(vs @ vc[1], vs @ vc[2])
    keys = [(-float(support.polarity_clash(claim, t)), float(p)) for t, p in zip(texts, pol)]
    return min(range(len(texts)), key=lambda i: keys[i])
