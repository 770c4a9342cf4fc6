"""BM25-style sparse vectors: stable ids, stopwords, stemming, TF saturation, query shape."""

from __future__ import annotations

import pytest

from bayes_app.search.sparse import (
    AVGDL,
    K1,
    STOPWORDS,
    SparseVec,
    document_vector,
    query_terms,
    query_vector,
    term_id,
    tokens,
)


def test_term_ids_are_stable_32_bit_values() -> None:
    # Pinned: a change would silently orphan every stored sparse vector.
    assert term_id("cat") == 3138554730
    assert term_id("enzym") == 345807936
    assert document_vector("cats").indices == [term_id("cat")]
    ids = [term_id(w) for w in ("protein", "cell", "über", "münchen", "细胞")]
    assert len(set(ids)) == len(ids)
    assert all(0 <= i < 2**32 for i in ids)


def test_stopwords_are_removed() -> None:
    assert tokens("The effect of the drug is not in the data") == ["effect", "drug", "data"]
    assert document_vector("the of and is to") == SparseVec([], [])
    assert query_vector("what is the") == SparseVec([term_id("what")], [1.0])
    assert {"the", "and", "of", "not"} <= STOPWORDS


def test_english_stemming_maps_inflections_to_one_term() -> None:
    assert tokens("running runs") == ["run", "run"]
    assert query_vector("proteins").indices == query_vector("protein").indices
    assert query_vector("Inhibiting inhibition").indices == query_vector("inhibit").indices


def test_unicode_words_survive() -> None:
    toks = tokens("Die Größe der Zellen in München — 细胞")
    assert "größe" in toks
    assert "zellen" in toks
    assert "münchen" in toks
    assert "细胞" in toks


def test_tf_saturates_and_grows_monotonically() -> None:
    filler = " ".join(f"w{i}" for i in range(int(AVGDL)))  # keeps document length ~constant

    def weight(tf: int) -> float:
        vec = document_vector(("enzyme " * tf) + filler)
        return dict(zip(vec.indices, vec.values))[term_id("enzym")]

    w = [weight(tf) for tf in (1, 2, 4, 8, 64)]
    assert w == sorted(w)
    assert w[1] - w[0] > w[2] - w[1] > 0  # diminishing returns
    assert w[-1] < K1 + 1  # the BM25 TF part is bounded by k1 + 1


def test_longer_documents_weigh_a_match_less() -> None:
    short = document_vector("enzyme activity")
    long = document_vector("enzyme activity " + " ".join(f"w{i}" for i in range(300)))
    eid = term_id("enzym")
    assert dict(zip(short.indices, short.values))[eid] > dict(zip(long.indices, long.values))[eid]


def test_vectors_have_sorted_distinct_indices() -> None:
    vec = document_vector("cell cells cell membrane membranes of the cell")
    assert vec.indices == sorted(set(vec.indices))
    assert len(vec.indices) == len(vec.values) == 2
    q = query_vector("cell cells membrane membrane")
    assert q.indices == sorted(set(q.indices))
    assert q.values == [1.0, 1.0]


def test_query_terms_are_the_words_as_written() -> None:
    assert query_terms("The effect of Aspirin on aspirin-treated Zellen in München?") == [
        "effect",
        "Aspirin",
        "treated",
        "Zellen",
        "München",
    ]
    assert query_terms("") == []


@pytest.mark.parametrize("text", ["", "   ", "!!! ---", "the and of"])
def test_empty_inputs_give_empty_vectors(text: str) -> None:
    assert document_vector(text) == SparseVec([], [])
    assert query_vector(text) == SparseVec([], [])
