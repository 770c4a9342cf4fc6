"""The audit's citation-level contradiction model (audits/contradiction.py) on the real embedding
model: a sentence citing a paper that reports the opposite is judged `contradicted` on a
verbatim passage; the same paper cited for what it says is not."""

from __future__ import annotations

import pytest

from bayes_app.audits import check, contradiction, readers
from bayes_app.audits.judge import CachedEmbed
from bayes_app.audits.memory import MemoryLibrary, MemoryPaper
from bayes_app.audits.resolve import LibraryPaper, Resolver
from bayes_app.audits.sentences import build

PAPER = [
    "Daily aspirin decreased the risk of stomach bleeding in adults over five years of follow-up.",
    "We enrolled 2,400 adults aged 50 to 70 years in a randomized placebo-controlled trial.",
    "Adverse events were recorded at each visit by trained nurses.",
    "Aspirin users had fewer hospital admissions for gastrointestinal bleeding than the placebo group.",
]
TITLE = "Aspirin and gastrointestinal bleeding in older adults: a randomized trial"
REFERENCES = f"\n\n## References\n\n1. Smith, J. & Lee, K. (2019). {TITLE}. Journal of Findings, 3, 1–9.\n"


@pytest.fixture(scope="module")
def embed():
    return CachedEmbed()


def _verdict(sentence: str, embed) -> tuple[str, str]:
    library = MemoryLibrary(
        [MemoryPaper(LibraryPaper("d1", TITLE, 2019, None, ["Smith", "Lee"]), [" ".join(PAPER)])], embed
    )
    draft = build(readers.read("draft.md", (f"# Draft\n\n{sentence} [1].{REFERENCES}").encode()))
    result, _ = check.check_sentence(draft.sentences[0], draft, Resolver(library.papers()), library, embed)
    c = result.citations[0]
    assert c.document_id == "d1"
    assert c.evidence is not None
    assert c.evidence.quote in " ".join(PAPER)
    return c.verdict, c.evidence.quote


def test_the_model_reads_every_feature_it_has_weights_for(embed):
    f = contradiction.features("Daily aspirin reduces the risk of stomach bleeding in adults.", PAPER, embed)
    assert set(f) == set(contradiction.WEIGHTS) - {"bias"}
    assert contradiction.features("Any claim.", [], embed) == {}
    assert contradiction.contradicts({}) is None


def test_a_citation_of_a_paper_reporting_the_opposite_is_contradicted(embed):
    verdict, quote = _verdict("Daily aspirin does not reduce the risk of stomach bleeding in adults", embed)
    assert verdict == "contradicted"
    assert quote == PAPER[0]  # the passage that says the opposite
    f = contradiction.features("Daily aspirin does not reduce the risk of stomach bleeding in adults.", PAPER, embed)
    assert contradiction.probability(f) >= contradiction.THRESHOLD + 0.15  # a margin noise cannot cross


def test_the_same_paper_cited_for_what_it_says_is_not(embed):
    verdict, _ = _verdict("Daily aspirin reduces the risk of stomach bleeding in adults", embed)
    assert verdict in ("supported", "partial")
    f = contradiction.features("Daily aspirin reduces the risk of stomach bleeding in adults.", PAPER, embed)
    assert contradiction.probability(f) <= contradiction.THRESHOLD - 0.15
    assert not contradiction.lexical_opposite(f)


def test_without_an_opposite_in_words_the_model_alone_does_not_flag():
    f = {k: 0.0 for k in contradiction.WEIGHTS if k != "bias"} | {"wpol": -1.0, "top_pol": -1.0}
    assert contradiction.probability(f) > contradiction.THRESHOLD
    assert contradiction.contradicts(f) is None
    assert contradiction.contradicts(f | {"dir_opp3": 1.0}) is not None


@pytest.mark.parametrize(
    ("text", "signs"),
    [
        ("The hazard ratio was 0.57 (95% CI 0.44-0.74) for total mortality.", [-1]),
        ("Users had a higher risk (OR 1.8, 95% CI 1.2 to 2.6).", [1]),
        ("Cancer mortality: HR 0.76 (0.54-1.06).", [0]),  # the interval spans 1: no direction
        ("A relative risk of 2.1 was found.", [1]),  # no interval: the point estimate
        ("The rate was 0.95 in both groups, and no ratio was reported.", []),
    ],
)
def test_effect_ratios_are_read_with_their_interval(text, signs):
    assert contradiction.ratio_signs(text) == signs


def test_the_claims_stance_on_its_outcome():
    assert contradiction.claim_stance("Exercise increases cancer mortality among adults.") == 1
    assert contradiction.claim_stance("Statins reduce the risk of hip fracture.") == -1
    assert contradiction.claim_stance("Partnership status is not associated with progression to AIDS.") == 0
    assert contradiction.claim_stance("Treatment improves survival.") == 1  # less of what a ratio measures
    assert contradiction.claim_stance("JMJD6 is a lysyl hydroxylase.") is None


def test_relation_features_read_the_opposite_and_the_agreement():
    hr_down = "Compared with inactive adults, the hazard ratio for cancer mortality was 0.71 (95% CI 0.60-0.84)."
    opposite = contradiction.relation("Exercise increases cancer mortality.", [hr_down])
    assert opposite["ratio_opp"] == 1.0
    assert contradiction.relation("Exercise reduces cancer mortality.", [hr_down])["ratio_opp"] == 0.0
    null = contradiction.relation(
        "Statin use is not associated with hip fractures.",
        ["Statin use was significantly associated with a reduced risk of hip fracture (p < 0.01)."],
    )
    assert null["null_vs_effect"] == 1.0
    words = contradiction.relation(
        "Natriuretic peptides promote diabetes.", ["Natriuretic peptides impede the onset of diabetes."]
    )
    assert (words["bdir_opp3"], words["bdir_agree3"]) == (1.0, 0.0)
    same = contradiction.relation("Natriuretic peptides promote diabetes.", ["BNP promotes insulin resistance."])
    assert (same["bdir_opp3"], same["bdir_agree3"]) == (0.0, 1.0)
    assert contradiction.lexical_opposite({**dict.fromkeys(contradiction.WEIGHTS, 0.0), **opposite})


@pytest.mark.parametrize(
    ("text", "signs"),
    [
        ("There is a positive correlation between hip fractures and statin use.", [1]),
        ("Evidence suggests an inverse association between BNP levels and risk of type 2 diabetes.", [-1]),
        ("Intake was inversely associated with mortality.", [-1]),
        ("We observed a 21% (95% CI 3%-36%) decreased risk of incident T2D per SD.", [-1]),
        ("Carriers had a 2-fold higher risk of dementia.", [1]),
        ("There was no inverse association between coffee and stroke.", []),  # says there is none
        ("Positive controls were run in parallel.", []),
    ],
)
def test_associations_said_in_words_have_a_direction(text, signs):
    assert contradiction.association_signs(text) == signs


def test_an_association_in_the_claim_is_its_stance():
    assert contradiction.claim_stance("There is a positive correlation between hip fractures and statin use.") == 1
    assert contradiction.claim_stance("Vitamin D levels are inversely correlated with fracture rates.") == -1
    hip = contradiction.relation(
        "There is a positive correlation between hip fractures and statin use.",
        ["Statin use was associated with a 50% reduced risk of hip fracture."],
    )
    assert hip["ratio_opp"] == 1.0


def test_an_effect_the_other_way_flags_under_the_threshold_and_is_the_evidence(embed):
    f = {k: 0.0 for k in contradiction.WEIGHTS if k != "bias"}
    assert contradiction.probability(f) < contradiction.THRESHOLD
    assert contradiction.contradicts(f) is None
    assert contradiction.contradicts(f | {"ratio_opp": 1.0}) is not None
    passages = [
        "Statin users were older and more often women than non-users.",
        "Statin use was associated with a 50% reduced risk of hip fracture.",
        "Hip fractures were identified from hospital records.",
    ]
    claim = "There is a positive correlation between hip fractures and statin use."
    assert contradiction.most_contradicting(claim, passages, embed) == 1
