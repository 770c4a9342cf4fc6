"""The offline table extractor reads values off a paper's own sentences, each resting on one
verbatim sentence, and says not found rather than guess."""

from __future__ import annotations

import pytest

from bayes_app.tables.columns import Column, TableError, check_column, check_columns
from bayes_app.tables.evidence import page_sentences, sentences_from_pages
from bayes_app.tables.export import to_csv
from bayes_app.tables.extract import NOT_FOUND, candidates, counts_in, extract, question_terms

PARTICIPANTS = Column("n", "How many participants were studied?", "number")
RCT = Column("rct", "Is this a randomized controlled trial?", "yes_no")
FINDING = Column("finding", "What is the main finding?", "text")

TRIAL = (
    "Obesity is a growing problem in adolescents. We conducted a double-blind, placebo-controlled "
    "randomised trial at four centres. A total of 1,248 adolescents were enrolled and 612 were assigned "
    "to the intervention. The mean age was 14 years. In conclusion, the school programme reduced body "
    "mass index by 0.8 units compared with usual care."
)
COHORT = (
    "Little is known about sleep and memory in older adults. In this prospective cohort study we followed "
    "3,402 community-dwelling adults aged 65 years or older for ten years. Shorter sleep was associated "
    "with faster cognitive decline. These findings suggest that sleep duration is a marker of cognitive risk."
)
NON_RANDOM = (
    "This non-randomized controlled trial compared two wound dressings in 84 patients with burns. "
    "Healing was faster with the silver dressing."
)


def paper(text: str, page: int = 1):
    return page_sentences(page, text, [])


def test_counts_next_to_unit_words():
    units = {"particip", "patient", "adolesc", "adult"}
    assert counts_in("A total of 1,248 adolescents were enrolled", units) == [1248]
    assert counts_in("we infused 12 haploidentical stem cell transplant patients", units) == [12]
    assert counts_in("The mean age was 14 years among patients", units) == []
    assert counts_in("Twelve patients (n = 12) were treated in 2019", units) == [12]
    assert counts_in("Patients were grouped by dose (n = 57).", units) == [57]
    assert counts_in("p < 0.05 for 3 outcomes", units) == []


@pytest.mark.parametrize(
    ("text", "value", "quoted"),
    [
        (TRIAL, 1248, "A total of 1,248 adolescents were enrolled"),
        (COHORT, 3402, "3,402 community-dwelling adults"),
        (NON_RANDOM, 84, "84 patients"),
    ],
)
def test_number_is_read_off_the_sentence_that_states_it(text, value, quoted):
    got = extract(PARTICIPANTS, paper(text))
    assert got.value == value
    assert got.sentence is not None
    assert quoted in got.sentence.text
    assert str(value) in got.sentence.text.replace(",", "")


def test_yes_no_from_the_evidence_sentence():
    trial = extract(RCT, paper(TRIAL))
    assert trial.value == "yes"
    assert "randomised trial" in trial.sentence.text
    cohort = extract(RCT, paper(COHORT))
    assert cohort.value == "no"
    assert "cohort study" in cohort.sentence.text  # the reason is quoted
    assert extract(RCT, paper(NON_RANDOM)).value == "no"  # negated


def test_text_answer_prefers_the_finding_over_the_background():
    got = extract(FINDING, paper(COHORT))
    assert got.sentence is not None
    assert not got.sentence.text.startswith("Little is known")
    assert got.value in {got.sentence.text}


def test_choice_and_not_found():
    design = Column("design", "What is the study design?", "choice", ("cohort", "case-control", "randomized trial"))
    assert extract(design, paper(COHORT)).value == "cohort"
    assert extract(design, paper(TRIAL)).value == "randomized trial"
    assert (
        extract(PARTICIPANTS, paper("The proof uses a compactness argument. It holds in every dimension.")).status
        == NOT_FOUND
    )
    assert extract(PARTICIPANTS, []).status == NOT_FOUND


def test_quotes_are_verbatim_with_page_and_range():
    page_text = "Methods\n" + TRIAL.replace("A total of", "A total\nof")
    sentences = sentences_from_pages([(3, page_text, [])])
    got = extract(PARTICIPANTS, sentences)
    s = got.sentence
    assert s is not None
    assert s.page == 3
    assert " ".join(page_text[s.char_start : s.char_end].split()) == s.text


def test_only_quotable_roles_and_prose_in_front_matter_are_read():
    text = "Title of the paper here.\nWe enrolled 40 patients in the trial.\nFig. 2 shows the 40 patients of the trial."
    spans = [[0, 24, "front_matter", ""], [25, 62, "body", ""], [63, len(text), "figure", ""]]
    assert [s.text for s in page_sentences(1, text, spans)] == ["We enrolled 40 patients in the trial."]
    abstract = (
        "A. Author, B. Author\n\nAbstract\nWe enrolled forty patients with burns in a randomized trial at two centres."
    )
    spans = [[0, len(abstract), "front_matter", ""]]  # an abstract the structure analysis took for front matter
    assert [s.text for s in page_sentences(1, abstract, spans)] == [abstract.split("\n")[-1]]


def test_candidates_put_the_offline_pick_first():
    shown = candidates(PARTICIPANTS, paper(TRIAL), k=3)
    assert "1,248" in shown[0].text
    assert len(shown) <= 3


def test_question_terms_drop_asking_words():
    assert question_terms("How many participants were studied?") == ["particip"]
    # the last asking word too (its list once ended in a stray quote, so "followed" stayed)
    assert question_terms("How long were patients followed?") == ["long", "patient"]


def test_columns_are_checked():
    with pytest.raises(TableError, match="unknown type"):
        check_column("x", "What?", "date", None)
    with pytest.raises(TableError, match="at least two options"):
        check_column("d", "Design?", "choice", ["cohort"])
    with pytest.raises(TableError, match="repeated: a"):
        check_columns([check_column("a", "Q?", "text", None), check_column("a", "R?", "text", None)])
    with pytest.raises(TableError, match="at least one column"):
        check_columns([])
    with pytest.raises(TableError, match="lower-case"):
        check_column("Bad Key", "Q?", "text", None)


def test_csv_export_neutralises_formulas():
    rows = [
        {
            "title": "=HYPERLINK(1)",
            "document_id": "d1",
            "cells": {"finding": {"value": "+1", "quote": "q", "page": 2, "status": "found"}},
        }
    ]
    text = to_csv([FINDING], rows)
    assert "'=HYPERLINK(1)" in text
    assert "'+1" in text
    assert ",2,q,found" in text
