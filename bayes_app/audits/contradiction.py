"""Does the cited paper report the opposite of the sentence? A citation-level logistic model over
how the claim and its negations sit against the cited paper's passages.

The main signal is polarity: for each passage, how much closer it is (embeddings) to the claim
than to the claim's crude negations (`maps.support.negate`, `negate_statement`); a paper that
reports the opposite sits nearer the negation in the passages most like the claim. Lexical cues
on the three passages most like the claim add to it (`relation`): a polarity clash, a negation on
one side only, opposite direction words (a wider stemmed list too: encourages / slows, impedes /
promotes, crucial …), an effect the other way from what the claim says of the outcome — an effect
ratio (HR, OR, RR with its interval) or an association said in words ("an inverse association",
"a 21% (95% CI …) decreased risk"; the claim's own "a positive correlation" is its stance) —, and
a significant finding where the claim says there is no effect. An effect the other way flags a
citation on its own (`flags`); otherwise the probability must pass the threshold with an
opposite in words.

With the NLI reader installed and on (`bayes_app/audits/nli.py`, the default), its readings of
the three passages most like the claim replace the embeddings and words in the probability
(`NLI_WEIGHTS`, `nli_read`); the words still gate it and an effect the other way still flags on
its own. Without it, the lexical model below decides.

The lexical weights were fitted on SciFact train claims with SUPPORT or CONTRADICT evidence (the `tune`
split of `benchmarks/scifact_sets.split_of`, minus the claims and papers of the benchmark's
drafts) by `benchmarks/audit_contra_fit.py --fpr 0.03`, which prints the figures on the `held`
split: AUC 0.707 (0.670 before the relation features); at 3 % false positives on tune's SUPPORT
rows, 11/55 CONTRADICT rows flagged and 0/107 SUPPORT (at 2 %: 9/55, 0/107; at 5 %: 17/55,
5/107). An effect the other way flags on its own: tune (cross-validated) 19/119 CONTRADICT and
6/217 SUPPORT flagged at 3 %.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from bayes_app.audits.nli import Reader as NliReader
from bayes_app.maps import support

Embed = support.Embed
TOPIC = 0.4  # dense similarity from which a passage is about the claim's subject
SHARPNESS = 20.0  # softmax temperature: the passages most like the claim weigh most
TOP = 3

# fitted by benchmarks/audit_contra_fit.py (the standardisation folded into the weights)
WEIGHTS: dict[str, float] = {
    "bias": -1.9852,
    "any_neg_closer3": 0.1515,
    "bdir_agree3": -0.2553,
    "bdir_opp3": 0.1544,
    "clash_top": 0.4458,
    "dir_opp3": 0.3733,
    "frac_neg_closer": 0.6478,
    "mean_pol3": -2.1253,
    "min_pol3": -3.4223,
    "neg_claim": 0.2928,
    "neg_mis_top": 0.0598,
    "null_vs_effect": 2.3091,
    "ratio_opp": 1.2293,
    "top_pol": -4.3817,
    "top_sim": 1.0969,
    "wclash": 0.2142,
    "wpol": -3.2249,
}
# P(contradicts) from which a citation with a lexical opposite is flagged: 3 % of the tune split's
# SUPPORT citations (cross-validated). The issue allows 3 of 16 correct citations flagged and the
# scorer already flags about 1 of them as unsupported; 2 % and 5 % were measured too
# (docs/notes/audits.md).
THRESHOLD = 0.6708


# With the NLI reader (bayes_app/audits/nli.py, `nli_read`): fitted the same way on its five
# readings alone (`audit_contra_fit.py`; the lexical features still gate it). Held: AUC 0.777
# (gated); at 5 % false positives on tune's SUPPORT rows (cross-validated; the app's point),
# 28/55 CONTRADICT rows flagged and 1/107 SUPPORT (tune CV 56/119, 10/217); at 3 %, 19/55 and
# 0/107. 5 %: the issue allows 3 of 16 correct citations flagged, the scorer flags about 1 in 25
# of them, and at 5 % more the chance a draft of 16 passes 3 is about 1 in 20 (docs/notes/audits.md).
NLI_WEIGHTS: dict[str, float] = {
    "bias": -2.0913,
    "nli_c": 0.1974,
    "nli_c1": 0.2019,
    "nli_cv": 0.1217,
    "nli_neg": -0.4761,
    "nli_rev": 0.2731,
}
NLI_THRESHOLD = 0.4981


def _words(text: str) -> list[str]:
    return [w.lower() for w in support._WORDS.findall(text)]


# ---- the claim–passage relation, read lexically --------------------------------------------------
_RATIO = re.compile(
    r"(?:\b(?:[Hh]azard|[Oo]dds|[Rr]isk|[Rr]ate|[Ii]ncidence rate) ratios?\b|[Rr]elative risks?\b"
    r"|\b(?:a|adj)?(?:HR|OR|RR|IRR)s?\b)"
    r"[^0-9;]{0,40}?(\d+(?:[.·]\d+)?)"
    r"(?:[^0-9;]{0,30}?(\d+(?:[.·]\d+)?)\s*(?:-|–|—|to|,)\s*(\d+(?:[.·]\d+)?))?"
)
_CI_LEVEL = re.compile(r"\b9[059]\s*%")  # "95% CI": not a bound of the interval
# the claim's stance on the (harmful) outcome an effect ratio measures: more of it, less of it
_RISK_UP = re.compile(
    r"\b(increas\w*|higher|more|greater|elevat\w*|wors\w*|harm\w*|damag\w*|positively|risk factor"
    r"|promot\w*|predispos\w*|vulnerab\w*|susceptib\w*)\b",
    re.I,
)
_RISK_DOWN = re.compile(
    r"\b(decreas\w*|lower\w*|less|fewer|reduc\w*|protect\w*|improv\w*|benefi\w*|prevent\w*"
    r"|negatively|inversely|slow\w*|fall\w*|fell|declin\w*)\b",
    re.I,
)
# … or no effect at all
_NULL_CLAIM = re.compile(
    r"\b(no (?:known |significant |clear )?(?:association|relation\w*|effect|difference|link|impact|change|risk)"
    r"|not (?:\w+ ){0,2}(?:associated|related|linked|affect\w*|alter\w*|chang\w*|increase\w*|reduce\w*"
    r"|decrease\w*|improve\w*|represent|a risk)"
    r"|(?:do|does|did)(?: not|n't) (?:\w+ ){0,1}\w+"
    r"|same (?:rate|risk|level\w*)|unaffected|unchanged|unrelated|ineffective|similar|comparable)\b",
    re.I,
)
_SIGNIFICANT = re.compile(
    r"\b(significant(?:ly)?|associated with|predict\w*|correlat\w*)\b|\b[Pp]\s*[<≤]\s*0?[.·]0[0-5]", re.I
)
_NO_EFFECT = re.compile(
    r"\b(no (?:\w+ ){0,2}(?:significant|association|effect|difference|change|impact|evidence)"
    r"|not (?:\w+ ){0,1}(?:significant\w*|associated|differ\w*|affect\w*|alter\w*|chang\w*)"
    r"|did not|does not|was not|were not|similar|comparable|unchanged|unaffected|stable|no longer)\b",
    re.I,
)
# direction words, stemmed: wider than `support.UP` / `DOWN` (encourages, impedes, crucial …)
_UP_STEMS = (
    "increas", "higher", "more", "greater", "elevat", "enhanc", "promot", "induc", "activat", "upregulat",
    "up-regulat", "improv", "rise", "rais", "stimulat", "acceler", "faster", "stronger", "better", "encourag",
    "facilitat", "potentiat", "augment", "boost", "enabl", "requir", "essential", "crucial", "necessar",
    "benefic", "effective", "capable", "positive", "gain", "drive", "trigger", "elicit", "sufficient",
)  # fmt: skip
_DOWN_STEMS = (
    "decreas", "lower", "less", "fewer", "reduc", "inhibit", "suppress", "repress", "impair", "downregulat",
    "down-regulat", "loss", "wors", "diminish", "attenu", "slow", "smaller", "shorter", "weaker", "prevent",
    "block", "abrogat", "abolish", "ineffective", "harm", "imped", "incapabl", "negative", "invers",
    "dispensabl", "unnecessar", "insufficien", "fall", "fell", "declin", "delay", "damag", "hinder",
    "disrupt", "deplet",
)  # fmt: skip


def _num(s: str) -> float:
    return float(s.replace("·", "."))


def ratio_signs(text: str) -> list[int]:
    """The direction of each effect ratio (HR, OR, RR …) the text reports: +1 above 1, -1 below,
    0 when its confidence interval spans 1 (without an interval: the point estimate, ±10 %)."""
    out = []
    for m in _RATIO.finditer(_CI_LEVEL.sub(" ", text)):
        v = _num(m.group(1))
        if not 0 < v < 50:
            continue
        if m.group(2) and m.group(3):
            lo, hi = sorted((_num(m.group(2)), _num(m.group(3))))
            if lo <= v <= hi:
                out.append(1 if lo > 1 else -1 if hi < 1 else 0)
                continue
        out.append(1 if v >= 1.1 else -1 if v <= 0.9 else 0)
    return out


# an association's sign said in words: "a positive correlation", "inversely associated", "a 21%
# (95% CI 3%-36%) decreased risk", "a 2-fold higher risk"; "no inverse association" says none
_ASSOCIATION = re.compile(
    r"\b(?:(no|not)\s+(?:\w+\s+){0,2})?(positive|negative|inverse)(?:ly)?\s+(?:\w+\s+)?"
    r"(?:correlat|associat|relat|link)\w*",
    re.I,
)
_RISK_CHANGE = re.compile(
    r"\d+(?:[.·]\d+)?\s*(?:%|-?\s*fold)\s*(?:\([^()]{0,60}\)\s*)?"
    r"(lower|decreased|reduced|reduction in(?: the)?|higher|increased|elevated|greater|excess)\s+"
    r"(?:\w+\s+)?(?:risk|odds|incidence|hazard|rate|likelihood)\b",
    re.I,
)
_UP_WORD = re.compile(r"^(?:positive|higher|increased|elevated|greater|excess)", re.I)


def association_signs(text: str) -> list[int]:
    """The direction of each association the text states in words (+1 / -1), beside its ratios."""
    out = []
    for m in _ASSOCIATION.finditer(text):
        if not m.group(1):
            out.append(1 if m.group(2).lower() == "positive" else -1)
    for m in _RISK_CHANGE.finditer(text):
        out.append(1 if _UP_WORD.match(m.group(1)) else -1)
    return out


def effect_signs(text: str) -> list[int]:
    """Every effect the text reports: its ratios (0 when the interval spans 1), then its
    associations said in words."""
    return [*ratio_signs(text), *association_signs(text)]


def claim_stance(claim: str) -> int | None:
    """The claim on an outcome: +1 more of it, -1 less, 0 no effect, None when it says neither
    (more survival is less of what a ratio measures)."""
    if _NULL_CLAIM.search(claim):
        return 0
    said = association_signs(claim)
    if said and len(set(said)) == 1:  # "a positive correlation between hip fractures and statin use"
        return said[0]
    up, down = len(_RISK_UP.findall(claim)), len(_RISK_DOWN.findall(claim))
    if up == down:
        return None
    s = 1 if up > down else -1
    return -s if "survival" in claim.lower() else s


def broad_direction(text: str) -> int:
    """+1 / -1 when the text's direction words (`_UP_STEMS`, `_DOWN_STEMS`) lean one way, flipped
    by a negation; 0 when they balance."""
    ws = _words(text)
    up = sum(w.startswith(_UP_STEMS) for w in ws)
    down = sum(w.startswith(_DOWN_STEMS) for w in ws)
    sign = (up > down) - (up < down)
    return -sign if support._negated(ws) else sign


def relation(claim: str, tops: Sequence[str]) -> dict[str, float]:
    """Lexical features of the claim against the passages most like it (`tops`, best first)."""
    stance = claim_stance(claim)
    signs = [s for t in tops for s in effect_signs(t)]
    sig = [s for s in signs if s != 0]
    # an effect ratio the other way (or spanning 1 for a claimed effect, or significant for a claimed null)
    ratio_opp = stance is not None and (
        (stance != 0 and any(s == -stance for s in sig) and stance not in sig)
        or (stance != 0 and bool(signs) and not sig)
        or (stance == 0 and bool(sig))
    )
    # the claim says no effect, one of the two passages most like it reports one
    null_vs_effect = stance == 0 and any(_SIGNIFICANT.search(t) and not _NO_EFFECT.search(t) for t in tops[:2])
    d = broad_direction(claim)
    return {
        "ratio_opp": float(ratio_opp),
        "null_vs_effect": float(null_vs_effect),
        "bdir_opp3": float(any(broad_direction(t) * d < 0 for t in tops)),
        "bdir_agree3": float(any(broad_direction(t) * d > 0 for t in tops)),
    }


def features(claim: str, passages: Sequence[str], embed: Embed, reader: NliReader | None = None) -> dict[str, float]:
    """The model's inputs for the claim against all the cited paper's passages ({} without any);
    with an NLI reader, its readings of the three passages most like the claim too (`nli_read`)."""
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
        **relation(claim, [texts[i] for i in top]),
        **(nli_read(claim, [texts[i] for i in top], reader) if reader is not None else {}),
    }


def nli_read(claim: str, tops: Sequence[str], reader: NliReader) -> dict[str, float]:
    """The NLI reader's contradiction logits over the passages most like the claim (best first):
    passage → claim, passage → the claim's crude negation, and claim → passage (one batch)."""
    neg = support.negate(claim)
    pairs = [(t, claim) for t in tops] + [(t, neg) for t in tops] + [(claim, t) for t in tops]
    logits = reader.contradiction(pairs)
    n = len(tops)
    c, against_neg, rev = logits[:n], logits[n : 2 * n], logits[2 * n :]
    return {
        "nli_c": float(c.max()),
        "nli_c1": float(c[0]),
        "nli_neg": float(against_neg.max()),
        "nli_rev": float(rev.max()),
        "nli_cv": float((c + rev).max()),
    }


def lexical_opposite(f: dict[str, float]) -> bool:
    """The passages show the opposite in words too: a polarity clash in the passage most like the
    claim (or in those weighing most), an opposite direction word in one of the top three, an
    effect ratio the other way, or a reported effect where the claim says there is none."""
    if not f:
        return False
    return (
        f["clash_top"] > 0
        or f["wclash"] > 0.3
        or f["dir_opp3"] > 0
        or f["bdir_opp3"] > 0
        or f["ratio_opp"] > 0
        or f["null_vs_effect"] > 0
    )


def flags(p: float, f: dict[str, float]) -> bool:
    """Is a citation with probability `p` and features `f` contradicted? Over the threshold with an
    opposite in words — or an effect the passages report the other way (`ratio_opp`) on its own:
    on SciFact train's `tune` split that feature fired on 11 CONTRADICT rows and 1 SUPPORT row
    (of 217), too rarely for the logistic weights to carry it over the threshold alone."""
    threshold = NLI_THRESHOLD if "nli_c" in f else THRESHOLD
    return bool(f) and ((p >= threshold and lexical_opposite(f)) or f["ratio_opp"] > 0)


def contradicts(f: dict[str, float]) -> float | None:
    """P(contradicts) when the citation is flagged as contradicted, else None."""
    p = probability(f)
    return p if flags(p, f) else None


def probability(f: dict[str, float]) -> float:
    """P(the cited paper contradicts the claim) from `features` (0 without passages): the NLI
    model when the features hold the reader's, else the lexical one."""
    if not f:
        return 0.0
    weights = NLI_WEIGHTS if "nli_c" in f else WEIGHTS
    z = weights["bias"] + sum(w * f[k] for k, w in weights.items() if k != "bias")
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def most_contradicting(claim: str, passages: Sequence[str], embed: Embed, reader: NliReader | None = None) -> int:
    """The passage a contradiction verdict rests on: one reporting an effect the other way first,
    then the one the NLI reader reads as most contradicting (both directions summed); without a
    reader, one with a polarity clash, then the one nearest the claim's negation relative to the
    claim. SciFact train's CONTRADICT claims whose annotated sentence is among the three passages:
    the reader's pick is that sentence in 29/43 (held) and 53/91 (tune), the embeddings' in 17 and 36."""
    claim = " ".join(claim.split())
    texts = [" ".join(p.split()) for p in passages]
    stance = claim_stance(claim)
    if reader is not None:
        n = len(texts)
        logits = reader.contradiction([(t, claim) for t in texts] + [(claim, t) for t in texts])
        read = logits[:n] + logits[n:]
        return min(range(n), key=lambda i: (-float(_effect_against(stance, texts[i])), -float(read[i])))
    vc = embed([claim, support.negate(claim), support.negate_statement(claim)])
    vs = embed(texts)
    pol = vs @ vc[0] - np.maximum(vs @ vc[1], vs @ vc[2])
    keys = [
        (-float(_effect_against(stance, t)), -float(support.polarity_clash(claim, t)), float(p))
        for t, p in zip(texts, pol)
    ]
    return min(range(len(texts)), key=lambda i: keys[i])


def _effect_against(stance: int | None, text: str) -> bool:
    """The text reports an effect the other way from the claim's stance (or one where it says none)."""
    if stance is None:
        return False
    signs = [s for s in effect_signs(text) if s != 0]
    return any(s == -stance for s in signs) if stance != 0 else bool(signs)
