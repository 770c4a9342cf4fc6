"""Theme names taken from their claims (bayes_app.agents.naming): readable noun phrases of 2-4
words, each word in at least two of the theme's claims, never a phrase its claims do not hold."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayes_app.agents import naming, themes
from bayes_app.search.embeddings import get_embedder

_VECS: dict[str, object] = {}


def _embed(texts):
    import numpy as np

    missing = [t for t in dict.fromkeys(texts) if t not in _VECS]
    if missing:
        _VECS.update(zip(missing, get_embedder().embed_passages(missing)))
    return np.stack([_VECS[t] for t in texts])


def _in_claims(word: str, claims: list[str]) -> int:
    """Claims holding `word` as a whole word (an independent check, not the namer's own)."""
    return sum(bool(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", c, re.I)) for c in claims)


# each names a group of claims in which the name's words recur, yet none is a readable name
BAD = {
    "Understand why": [
        "Chemists need to understand why model predictions differ between molecules.",
        "Explanations help users understand why model predictions are made.",
        "Understand why the Crawler expands a citation before trusting it.",
    ],
    "Predictions due": [
        "Predictions due to spurious correlations mislead chemists.",
        "Predictions due to dataset bias are hard to detect.",
        "Counterfactual explanations expose predictions due to artefacts.",
    ],
    "Quantitative metrics tell": [
        "Quantitative metrics tell which explanation is faithful.",
        "Quantitative metrics tell little about usefulness to chemists.",
        "Quantitative metrics tell us how sparse an explanation is.",
    ],
    "Now predict molecular properties": [
        "Graph neural networks now predict molecular properties accurately.",
        "Deep models now predict molecular properties from SMILES strings.",
        "Few methods now predict molecular properties with explanations.",
    ],
}


@pytest.mark.parametrize("bad", list(BAD))
def test_bad_names_never_come_out(bad):
    claims = BAD[bad]
    phrases = {p.lower() for c in claims for p in naming.noun_phrases(c)}
    assert bad.lower() not in phrases
    title = naming.name(claims, _embed(claims), embed=_embed)
    assert not naming.same_name(title, bad), title
    # one noun when the claims share no longer phrase ("Predictions" here)
    assert naming.shared(title, claims), title
    assert 1 <= len(title.split()) <= naming.MAX_WORDS, title
    assert title.lower() in " ".join(c.lower() for c in claims)  # a phrase of its claims, as written


SEARCH_AGENTS = [
    "PaSa is an LLM-powered paper search agent that autonomously invokes search tools.",
    "The paper search agent reads papers and expands citation networks.",
    "Unlike Google Scholar, the paper search agent handles fine-grained academic queries.",
    "Environmental persistence of chemicals was one of the sample queries in the benchmark.",
]


def test_a_phrase_in_one_claim_only_does_not_name_the_theme():
    title = naming.name(SEARCH_AGENTS, _embed(SEARCH_AGENTS), embed=_embed)
    assert not naming.same_name(title, "Environmental persistence")
    assert all(_in_claims(w, SEARCH_AGENTS) >= 2 for w in title.split()), title
    assert "search agent" in title.lower()


def test_the_name_is_what_the_theme_shares_and_the_rest_of_the_map_does_not():
    theme = [
        "The Crawler is trained with reinforcement learning on AutoScholarQuery.",
        "Reinforcement learning rewards the Crawler for each relevant paper it finds.",
        "The Crawler explores citation networks with a search tool.",
    ]
    rest = [
        "The Selector scores each paper against the query.",
        "The Crawler and the Selector together form PaSa.",
        "The Selector is trained on synthetic data.",
        "The Crawler calls the Selector for every paper it reads.",
    ]
    title = naming.name(theme, _embed(theme), embed=_embed, others=rest)
    assert naming.same_name(title, "Reinforcement learning"), title
    # a name already on the map is not reused, and the next best still holds
    other = naming.name(theme, _embed(theme), ["Reinforcement learning"], _embed, others=rest)
    assert not naming.same_name(other, title), other
    assert naming.shared(other, theme), other


def test_a_single_claim_names_itself_and_no_claims_fall_back():
    one = ["Counterfactual explanations show the minimal change to a molecule that flips the prediction."]
    title = naming.name(one, _embed(one), embed=_embed)
    assert title.lower() in one[0].lower()
    assert 2 <= len(title.split()) <= naming.MAX_WORDS
    assert naming.name([], None, embed=_embed) == naming.FALLBACK


POOL = [
    *SEARCH_AGENTS,
    *(c for cs in BAD.values() for c in cs),
    "The Crawler is trained with reinforcement learning on AutoScholarQuery.",
    "Reinforcement learning rewards the Crawler for each relevant paper it finds.",
    "The Selector scores each paper against the query.",
    "The Selector is trained on synthetic data.",
    "PaSa-7B surpasses the best Google-based baseline by 37.78% in recall@20.",
    "PaSa-7B exceeds PaSa-GPT-4o by 30.36% in recall.",
    "Recall on RealScholarQuery improves over Google Scholar.",
    "Counterfactual explanations show the minimal change to a molecule that flips the prediction.",
    "Counterfactual explanations can be generated for any black-box model.",
    "Feature attribution methods assign an importance score to each atom.",
    "Attribution scores highlight substructures that drive the prediction.",
    "Surrogate models approximate the black-box model locally.",
]
_TAGS_OK_FIRST = re.compile(r"^(?:the|a|an|this|these|those|our|their|its|now|why|how|to)$", re.I)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(POOL), min_size=2, max_size=14, unique=True))
def test_every_group_name_is_held_by_two_of_its_claims(claims):
    for title, idx in themes.group(claims, _embed):
        mine = [claims[i] for i in idx]
        assert mine
        assert title != naming.FALLBACK
        words = title.split()
        assert 1 <= len(words) <= naming.MAX_WORDS, title
        need = 2 if len(mine) >= 2 else 1
        assert all(_in_claims(w, mine) >= need for w in words), (title, mine)
        assert any(title.lower() in " ".join(c.split()).lower() for c in mine), (title, mine)
        assert not _TAGS_OK_FIRST.match(words[0]), title


def test_a_name_holds_only_while_its_phrase_is_written_in_its_claims():
    # what Expand or the critic can leave behind: each word in two claims, the phrase in none
    left = [
        "Counterfactual explanation based model interpretation remains unexplored for molecular design.",
        "CIME, a model explorer, compares explanation methods for molecular property prediction.",
    ]
    assert naming.shared("Molecular Model", left)
    assert not naming.holds("Molecular Model", left)
    assert naming.holds("explanation methods", left + ["Explanation methods differ in cost."])
    assert not naming.holds("explanation methods", left)  # written once, "explanation" in two
