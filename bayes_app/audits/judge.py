"""The two swap points of the audit: how relevant a passage is to a claim (`relevance`, the
learned relevance model of `llm.relevance`), and how well it supports it (`judge`, the offline
support scorer `maps.support`); a better model replaces either here and nowhere else."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bayes_app.llm import relevance as learned
from bayes_app.maps import support

Embed = Callable[[Sequence[str]], np.ndarray]
CONTRADICTION_MIN = 0.7  # contradiction probability of a same-topic passage with a polarity clash (precision first)
SAME_TOPIC = 0.5  # dense similarity for "the passage is about what the claim is about"
# Verdict bands of the support score for a draft's citation (a paraphrase, not a quote: lower
# than the map's bands). On SciFact train drafts (benchmarks/audit_quality.py) correct citations'
# best passages score 0.17–0.81 and citations of an unrelated paper ≤ 0.08.
SUPPORTED_MIN = 0.5
UNSUPPORTED_BELOW = 0.12


class CachedEmbed:
    """The embedding model with a per-audit cache (a paper's sentences are embedded once).

    Each text is embedded on its own: the int8 model's vector for a text shifts with the batch
    it is in (cosine ~0.993), as much as a claim differs from its negation, so a batch would
    make the contradiction model's polarity features depend on what was embedded together."""

    def __init__(self, embed: Embed | None = None) -> None:
        self._embed = embed or support.default_embed
        self._cache: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        for t in dict.fromkeys(t for t in texts if t not in self._cache):
            self._cache[t] = np.asarray(self._embed([t])[0], dtype=np.float32)
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 1), dtype=np.float32)


def relevance(claim: str, texts: Sequence[str], embed: Embed) -> list[float]:
    """How relevant each passage is to the claim (0..1): the learned relevance model
    (`llm.relevance`, the claim as its question), the passages scored together."""
    if not texts:
        return []
    return [float(p) for p in learned.score(claim, list(texts), embed=embed)]


@dataclass(frozen=True)
class Judgement:
    verdict: str  # supported | partial | unsupported | contradicted
    score: float  # support 0..1 (for "contradicted": the contradiction probability)
    reason: str


def judge(claim: str, quote: str, embed: Embed) -> Judgement:
    """The offline verdict on `quote` as evidence for `claim`."""
    res = support.score_support(claim, quote, embed)
    f = support.features(" ".join(claim.split()), " ".join(quote.split()), embed)
    p = support.contradiction_probability(f)
    if f["dense"] >= SAME_TOPIC and p >= CONTRADICTION_MIN and support.polarity_clash(claim, quote):
        return Judgement("contradicted", round(p, 3), "The passage is about the same thing but says the opposite.")
    label = (
        "supported" if res.score >= SUPPORTED_MIN else "partial" if res.score >= UNSUPPORTED_BELOW else "unsupported"
    )
    if label == "supported" and str(res.label) == "partial":
        label = "partial"  # the claim overstates the passage
    reason = {
        "supported": "The passage says what the sentence claims.",
        "partial": "The passage supports part of the claim, or states it more cautiously.",
        "unsupported": "The cited paper's closest passage does not say this.",
    }.get(label, "")
    return Judgement(label, res.score, reason)
