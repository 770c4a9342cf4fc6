"""The names a search matches literally (search/relevance.names_in, named_match)."""

from bayes_app.search.relevance import named_match, names_in


def test_names_are_acronyms_genes_and_mixed_case_product_names():
    assert names_in("Mutant mice lacking SVCT2 have reduced ascorbic acid levels.") == {"SVCT2"}
    assert names_in("The DESMOND program has no impact.") == {"DESMOND"}
    assert names_in("CD44v6 is not associated with cancer stem cells.") == {"CD44v6"}
    assert names_in("How is PaSa trained?") == {"PaSa"}
    assert names_in("Which methods explain the Crawler?") == set()
    assert names_in("What is the capital of France?") == set()


def test_a_name_matches_as_a_word_of_its_own():
    assert named_match({"SVCT2"}, "in SVCT2-deficient mice")
    assert named_match({"DESMOND"}, "The DESMOND programme")
    assert not named_match({"TMEM27"}, "TMEM270 is expressed")
    assert not named_match({"DESMOND"}, "Desmond Tutu")
    assert not named_match(set(), "anything")
