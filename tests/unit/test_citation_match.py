"""Matching a parsed reference to a library paper: DOI, exact title + year, fuzzy title."""

from __future__ import annotations

from bayes_app.library.citation_match import Paper, PaperIndex, normalize_doi, normalize_title, reference_key

LIB = PaperIndex(
    [
        Paper("a", "Attention Is All You Need", 2017, "10.5555/3295222.3295349"),
        Paper("b", "Deep Residual Learning for Image Recognition", 2016),
        Paper("c", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", 2019),
        Paper("d", "Introduction", 2020),
        Paper("e", "Deep Residual Learning for Image Classification", 2016),
    ]
)


def test_doi_forms_normalise_to_one():
    assert normalize_doi("https://doi.org/10.1000/ABC.1.") == "10.1000/abc.1"
    assert normalize_doi("doi: 10.1000/abc.1") == "10.1000/abc.1"
    assert normalize_doi("http://dx.doi.org/10.1000/abc.1") == "10.1000/abc.1"
    assert normalize_doi("not a doi") is None
    assert normalize_doi(None) is None


def test_title_normalisation_drops_case_accents_punctuation_and_pdf_hyphen_marks():
    assert (
        normalize_title("BERT: Pre-training of  Deep\u00adBidirectional Transformers")
        == "bert pre training of deepbidirectional transformers"
    )
    assert normalize_title("Élan vital — a Study") == "elan vital a study"


def test_doi_wins_even_with_another_title():
    m = LIB.match("Some garbled title", 2017, "https://doi.org/10.5555/3295222.3295349")
    assert (m.document_id, m.how) == ("a", "doi")


def test_exact_title_with_a_year_off_by_one_matches_but_not_two_years_off():
    assert LIB.match("Deep residual learning for image recognition.", 2015).how == "title"
    assert LIB.match("Deep residual learning for image recognition", 2013) is None


def test_fuzzy_title_with_a_typo_matches_the_closest_paper():
    m = LIB.match("BERT: Pre-traning of Deep Bidirectional Transformer for Language Understandng", 2019)
    assert m is not None
    assert (m.document_id, m.how) == ("c", "fuzzy")
    assert 90 <= m.score < 100
    # one word apart in a short title is another paper: recognition vs classification
    m = LIB.match("Deep Residual Learning for Image Recognitoin", 2016)
    assert m.document_id == "b"


def test_unrelated_or_short_titles_do_not_match():
    assert LIB.match("Attention mechanisms in graph neural networks", 2019) is None
    assert LIB.match("Introduction", None) is None  # too short to trust without a year
    assert LIB.match("Introduction", 2020).document_id == "d"


def test_a_paper_never_cites_itself():
    assert LIB.match("Attention Is All You Need", 2017, exclude="a") is None


def test_reference_key_prefers_doi_and_skips_short_titles():
    assert reference_key("X Y Z", "10.1/AB") == "doi:10.1/ab"
    assert reference_key("Graph Methods for Literature Discovery", None) == "t:graph methods for literature discovery"
    assert reference_key("Deep Learning", None) == "t:deep learning"
    assert reference_key("Introduction", None) is None
    assert reference_key("On the", None) is None


def test_titles_that_differ_in_a_number_are_different_papers():
    idx = PaperIndex([Paper("p1", "Language Models are Few-Shot Learners: Part 1", 2020)])
    assert idx.match("Language Models are Few-Shot Learners: Part 2", 2020) is None
    assert idx.match("Language Models are Few-Shot Lerners: Part 1", 2020).document_id == "p1"
