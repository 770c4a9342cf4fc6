"""Dense embedders with the real packaged models: the default (MiniLM) and multilingual E5."""

from __future__ import annotations

import numpy as np
import pytest

from bayes_app.search.embeddings import DEFAULT_MODEL, ENV_VAR, Embedder, get_embedder, resolve_name


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return get_embedder(DEFAULT_MODEL)


@pytest.fixture(scope="module")
def e5() -> Embedder:
    return get_embedder("multilingual-e5-small")


def test_registry_default_env_aliases_and_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default comes from the settings (BAYES_EMBEDDING_MODEL)."""
    from bayes_app import settings

    monkeypatch.delenv(ENV_VAR, raising=False)
    settings.get_settings.cache_clear()
    assert resolve_name() == "all-MiniLM-L6-v2"
    monkeypatch.setenv(ENV_VAR, "E5")
    settings.get_settings.cache_clear()
    try:
        assert resolve_name() == "multilingual-e5-small"
    finally:
        monkeypatch.delenv(ENV_VAR)
        settings.get_settings.cache_clear()
    assert resolve_name("MULTILINGUAL-E5-SMALL") == "multilingual-e5-small"
    with pytest.raises(ValueError, match="unknown embedding model"):
        resolve_name("bge-m3")
    assert get_embedder("minilm") is get_embedder("all-MiniLM-L6-v2")


def test_shapes_dtype_and_unit_norm(minilm: Embedder) -> None:
    texts = ["short", "Enzyme activity rises with temperature up to an optimum. " * 40, ""]
    vecs = minilm.embed_passages(texts)
    assert vecs.shape == (3, minilm.dim) == (3, 384)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    q = minilm.embed_query("enzyme temperature")
    assert q.shape == (384,)
    assert q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-4
    assert minilm.embed_passages([]).shape == (0, 384)


def test_batching_keeps_each_text_in_its_row(minilm: Embedder) -> None:
    # Mixed lengths force sorting into several batches; rows must come back in input order.
    texts = [f"Sentence number {i} is about " + ("proteins " * (i * 7)) + f"topic {i}" for i in range(12)]
    batched = minilm.embed_passages(texts)
    alone = np.stack([minilm.embed_passages([t])[0] for t in texts])
    sims = batched @ alone.T
    assert (sims.argmax(axis=1) == np.arange(len(texts))).all()
    # int8 activations are scaled per batch, so batchmates shift a vector a little.
    assert np.diag(sims).min() > 0.97
    np.testing.assert_array_equal(minilm.embed_query(texts[3]), alone[3])


def test_a_repeated_call_is_answered_from_the_recent_calls(minilm: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same texts in the same order give exactly the vectors computed before, without the
    model; a changed order or one more text is computed again; callers get their own copies."""
    texts = [f"Recent call {i}: kinase activity in sample {i * 13}." for i in range(40)]
    first = minilm.embed_passages(texts)
    computed: list[int] = []
    compute = type(minilm)._compute

    def counting(self, batch, is_query):
        computed.append(len(batch))
        return compute(self, batch, is_query)

    monkeypatch.setattr(type(minilm), "_compute", counting)
    again = minilm.embed_passages(texts)
    np.testing.assert_array_equal(again, first)
    assert computed == []
    again[:] = 0.0  # a caller's array is its own
    np.testing.assert_array_equal(minilm.embed_passages(texts), first)
    minilm.embed_passages(texts[::-1])
    minilm.embed_passages([*texts, "one more"])
    minilm.embed_query(texts[0])  # a query is not the passage of the same text
    assert computed == [40, 41, 1]


def test_recent_calls_are_bounded() -> None:
    from bayes_app.search.embeddings import _Recent

    recent = _Recent()
    big = np.ones((_Recent.MAX_CALL + 1, 4), np.float32)
    recent.put(b"big", big)
    assert recent.get(b"big") is None  # too large to keep
    rows = _Recent.MAX_CALL
    for i in range(_Recent.MAX_ROWS // rows + 1):
        recent.put(bytes([i]), np.full((rows, 4), i, np.float32))
    assert recent.get(bytes([0])) is None  # the least recently used went first
    got = recent.get(bytes([1]))
    assert got is not None
    assert got[0, 0] == 1.0


def test_paraphrase_beats_unrelated(minilm: Embedder) -> None:
    q = minilm.embed_query("What are the side effects of taking aspirin for many years?")
    p = minilm.embed_passages(
        [
            "Long-term aspirin use can cause stomach bleeding and ulcers.",
            "The train to Berlin was two hours late because of a storm.",
            "Photosynthesis converts light energy into chemical energy in plants.",
        ]
    )
    s = p @ q
    assert s[0] > 0.5
    assert s[0] > s[1] + 0.3
    assert s[0] > s[2] + 0.3


# Five topics: an English question, and a German and a French passage saying the same thing.
TOPICS = [
    (
        "How do vaccines prepare the immune system?",
        "Impfstoffe zeigen dem Abwehrsystem einen harmlosen Teil des Erregers, "
        "damit es später schnell Antikörper bildet.",
        "Les vaccins présentent au système immunitaire une partie inoffensive du microbe "
        "pour qu'il produise vite des anticorps.",
    ),
    (
        "What causes the tides in the ocean?",
        "Die Gezeiten entstehen, weil Mond und Sonne das Meerwasser mit ihrer Schwerkraft anziehen.",
        "Les marées sont dues à l'attraction que la Lune et le Soleil exercent sur l'eau des océans.",
    ),
    (
        "Does coffee raise blood pressure?",
        "Koffein lässt den Blutdruck für einige Stunden ansteigen, vor allem bei Menschen, die selten Kaffee trinken.",
        "La caféine fait monter la tension artérielle pendant quelques heures, "
        "surtout chez ceux qui boivent rarement du café.",
    ),
    (
        "How do honeybees tell each other where flowers are?",
        "Honigbienen zeigen ihren Stockgenossinnen mit einem Schwänzeltanz Richtung und Entfernung der Blüten.",
        "Les abeilles indiquent à leurs congénères la direction et la distance des fleurs par une danse frétillante.",
    ),
    (
        "Why is regular exercise good for the heart?",
        "Regelmäßige Bewegung stärkt den Herzmuskel und senkt das Risiko eines Herzinfarkts.",
        "L'activité physique régulière renforce le muscle cardiaque et diminue le risque d'infarctus.",
    ),
]
DISTRACTORS = [
    "Der Zug nach Hamburg fiel wegen eines Streiks aus.",
    "Das Rezept braucht drei Eier und zweihundert Gramm Mehl.",
    "Le musée du Louvre est fermé le mardi.",
    "Le match de football a été reporté à cause de la neige.",
    "The invoice must be paid within thirty days.",
]


def test_multilingual_english_query_finds_german_and_french(e5: Embedder) -> None:
    passages = [p for _, de, fr in TOPICS for p in (de, fr)] + DISTRACTORS
    vecs = e5.embed_passages(passages)
    assert vecs.shape == (len(passages), 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-3)
    for i, (question, _, _) in enumerate(TOPICS):
        s = vecs @ e5.embed_query(question)
        own = s[[2 * i, 2 * i + 1]]  # the German and the French passage of this topic
        others = np.delete(s, [2 * i, 2 * i + 1])
        assert own.min() > others.max(), (question, own, others.max())
