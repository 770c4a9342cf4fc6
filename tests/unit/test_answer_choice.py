"""Choosing sentences for a question (issue 25): relevance before passage order, one fact once,
context-dependent openers, cut sentences, list prefixes, footnote digits, hyphens, cited sources."""

from __future__ import annotations

import numpy as np

from bayes_app.chat.grounding import mark_cited
from bayes_app.library.hyphens import join_broken_words, keeps_hyphen
from bayes_app.llm import choose
from bayes_app.llm.offline import Passage, select_sentence_ids, select_sentences
from bayes_app.maps.runs import outcome_line


def bag_embed(texts):
    """A deterministic stand-in for the embedder: normalised bags of lower-case words."""
    vocab: dict[str, int] = {}
    rows = []
    for t in texts:
        row: dict[int, float] = {}
        for w in t.lower().replace(".", " ").replace(",", " ").split():
            j = vocab.setdefault(w, len(vocab))
            row[j] = row.get(j, 0) + 1.0
        rows.append(row)
    m = np.zeros((len(texts), max(1, len(vocab))), dtype=np.float32)
    for i, row in enumerate(rows):
        for j, v in row.items():
            m[i, j] = v
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


TRAINING = [
    Passage(
        1,
        "PaSa outperforms Google Scholar on recall. Google Scholar reaches a recall of 0.11 on the test set. "
        "The Crawler reward uses a coefficient of 1.5.",
    ),
    Passage(
        2,
        "The training process for the Crawler comprises two stages. In the first stage, we perform "
        "imitation learning on generated trajectories. In the second stage, reinforcement learning is "
        "applied with PPO.",
    ),
]


def test_sentences_are_chosen_for_the_question_not_by_passage_order():
    picked = select_sentences("How is the Crawler trained? What are the training stages?", TRAINING, limit=3)
    texts = [s for s, _ in picked]
    assert texts[0] == "The training process for the Crawler comprises two stages."
    assert any("imitation learning" in t for t in texts)
    assert any("reinforcement learning" in t for t in texts)
    assert not any("Google Scholar" in t for t in texts)  # passage 1 came first, but says nothing on training


def test_mmr_says_one_fact_once():
    texts = [
        "PaSa improves recall by 37.78% over Google with GPT-4o.",
        "PaSa improves recall by 37.78% over Google with GPT-4o on RealScholarQuery.",
        "Google Scholar reaches a recall of 0.28 on RealScholarQuery.",
    ]
    scores, vecs = choose.relevance("How does PaSa compare with Google?", texts, bag_embed)
    picked = choose.mmr(scores, vecs, 2)
    assert len(picked) == 2
    assert {0, 1} - set(picked)  # never both near-identical sentences
    assert 2 in picked


def test_relevance_falls_back_to_terms_without_a_model():
    def broken(_texts):
        raise RuntimeError("no model")

    scores, vecs = choose.relevance("crawler training", ["The crawler training has two stages.", "Unrelated."], broken)
    assert vecs is None
    assert scores[0] > scores[1]


def test_context_dependent_openers():
    for s in (
        "This challenge motivates us to develop PaSa.",
        "It can perform multiple searches.",
        "Subsequently, we used multiple methods to retrieve papers.",
        "Ultimately, we collected 50 queries.",
        "Among these efforts, AGILE allows joint optimization.",
        "These are known as surrogate models.",
        "2) Such models are rare.",
    ):
        assert choose.leans_on_previous(s), s
    for s in (
        "This paper introduces PaSa, a paper search agent.",
        "The Crawler collects papers.",
        "Itemised lists are common.",
        "Thesis defences are public.",
    ):
        assert not choose.leans_on_previous(s), s


def test_a_dependent_sentence_is_quoted_with_the_one_before_or_skipped():
    p = [
        Passage(
            1,
            "One approach fits an interpretable model to the black box near one example. These are known "
            "as surrogate models. Generally, one model per explanation is trained.",
        ),
        Passage(2, "These are also referred to as white-box models in the surrogate literature."),
    ]
    picked = select_sentences("What are surrogate models?", p, limit=3)
    texts = [s for s, _ in picked]
    assert (
        "One approach fits an interpretable model to the black box near one example. These are known as "
        "surrogate models."
    ) in texts
    assert not any(t.startswith("These are also referred") for t in texts)  # nothing before it: skipped
    assert "These are known as surrogate models." not in texts  # never alone


def test_sentences_cut_by_a_passage_edge_are_skipped():
    p = [
        Passage(
            1,
            "tual explanations are sparse and actionable for chemists. Counterfactuals explain a "
            "prediction by the smallest change. Counterfactual explanation remains unexplored compared "
            "to other",
        )
    ]
    texts = [s for s, _ in select_sentences("What are counterfactual explanations?", p, limit=3)]
    assert texts == ["Counterfactuals explain a prediction by the smallest change."]


def test_wording_drops_list_prefixes_and_glued_footnote_marks():
    assert (
        choose.wording("2) long trajectories: the trajectory may involve hundreds of papers.")
        == "Long trajectories: the trajectory may involve hundreds of papers."
    )
    assert (
        choose.wording("We submit the query to ChatGPT9 , powered by GPT-4o.")
        == "We submit the query to ChatGPT, powered by GPT-4o."
    )
    assert choose.wording("(b) The Selector reads papers.") == "The Selector reads papers."
    # numbers that belong to the text stay
    assert choose.wording("PaSa-7b reaches 0.61 recall on 50 queries.") == "PaSa-7b reaches 0.61 recall on 50 queries."


def test_line_broken_words_keep_their_own_hyphen():
    assert join_broken_words("a token\ufffe\nlevel Markov process") == "a token-level Markov process"
    assert join_broken_words("reading pa\ufffe\npers and op\ufffe timize") == "reading papers and optimize"
    assert join_broken_words("PaSa\ufffe\n7b and Grad\ufffe\nCAM") == "PaSa-7b and Grad-CAM"
    # the document's own spelling decides first
    assert not keeps_hyphen("Auto", "Scholar", "AutoScholar is a dataset")
    assert keeps_hyphen("multi", "modal", "a multi-modal model")
    assert not keeps_hyphen("counterfac", "11")  # a footnote mark after a broken word


def test_an_inflected_word_missing_from_the_tokenizer_is_joined_but_a_compound_keeps_its_hyphen():
    # "sur" and "passes" are both tokenizer words and "surpasses" is not: wordfreq knows it
    assert join_broken_words("PaSa-7B sur\ufffe\npasses the baseline") == "PaSa-7B surpasses the baseline"
    assert join_broken_words("counter\ufffe\nfactual and out\ufffe\nperforms") == "counterfactual and outperforms"
    # run-together forms that informal text has ("longterm", "opensource") stay compounds
    assert join_broken_words("long\ufffe\nterm memory, open\ufffe\nsource code") == "long-term memory, open-source code"


def test_sources_tell_cited_from_retrieved_and_point_at_the_cited_sentence():
    cits = [
        {"n": 1, "text": "PaSa has two agents. The Crawler collects pa\ufffe pers by search. It stops."},
        {"n": 2, "text": "The Selector reads each paper."},
        {"n": 3, "text": "An unrelated passage."},
    ]
    out = mark_cited("The Crawler gathers papers using search [1]. Selection works by reading [2].", cits)
    assert [c["cited"] for c in out] == [True, True, False]
    assert out[0]["sentence"] == "The Crawler collects papers by search."
    assert out[1]["sentence"] == "The Selector reads each paper."
    assert out[2]["sentence"] == ""


def test_failed_runs_read_in_plain_words():
    assert outcome_line("FAILED", "library_empty") == "Your library is empty — add papers on the Library page first."
    assert "no_passages" not in outcome_line("FAILED", "no_passages")
    assert outcome_line("SUCCEEDED", None) == "SUCCEEDED"
    assert outcome_line("CANCELLED", "user") == "CANCELLED (user)"


def test_a_sentence_announcing_a_list_brings_its_items():
    passages = [
        Passage(
            1,
            "Our agent is evaluated on two benchmarks with recall as the metric. The agent runs on "
            "eight GPUs for a week of compute time. The training of the agent involves two stages. First, we "
            "perform imitation learning on expert sessions for one epoch. The learning rate is small here. "
            "In the second stage, we apply reinforcement learning with PPO. The results are shown in Table 3.",
        )
    ]
    picked = [s for s, _ in select_sentences("How is the agent trained?", passages, limit=2)]
    assert "The training of the agent involves two stages." in picked
    i = picked.index("The training of the agent involves two stages.")
    # the items follow in reading order, although they say little about "trained" themselves
    assert picked[i + 1].startswith("First, we perform imitation learning")
    assert picked[i + 2].startswith("In the second stage, we apply reinforcement learning")
    assert len(picked) <= 2 + choose.LIST_EXTRA


def test_list_items_follow_a_chosen_announcement_whatever_the_ranker_says_of_them():
    texts = [
        "The agent runs on eight GPUs.",
        "The training of the agent involves two stages.",
        "First, we perform imitation learning on expert sessions.",
        "The learning rate is small here.",
        "In the second stage, we apply reinforcement learning with PPO.",
    ]
    places = [(i, 0) for i in range(len(texts))]
    # chosen (MMR order): the GPU sentence, then the announcement; the items were not chosen
    out = choose.with_list_items([0, 1], texts, texts, places, 2 + choose.LIST_EXTRA)
    assert out[out.index(1) + 1 :][:2] == [2, 4]  # the items in reading order, the aside skipped
    assert len(out) <= 2 + choose.LIST_EXTRA


def test_list_rules():
    assert choose.announces("The training process for the Crawler comprises two stages.")
    assert choose.announces("We suggest the following attributes can be used to evaluate explanations.")
    assert not choose.announces("The two models agree on most molecules.")
    assert choose.enumerates("In the first stage, we generate trajectories.")
    assert choose.enumerates("Second, the Selector reads each paper.")
    assert choose.enumerates("2) long trajectories: the complete trajectory is long.")
    assert not choose.enumerates("Firstborn calves were weighed.")


def test_answer_length_follows_the_question():
    plain = choose.answer_length("What is SHAP?")
    assert plain == choose.ANSWER_SENTENCES
    for wide in (
        "How is the PaSa Crawler trained?",
        "Which steps does the pipeline take?",
        "What is AutoScholarQuery and how was it built?",
        "What are the two agents and what does each of them do?",
    ):
        assert choose.answer_length(wide) > plain, wide


def test_sentences_far_below_the_best_are_not_quoted():
    passages = [
        Passage(
            1,
            "The Crawler is trained with imitation learning and then with reinforcement learning. "
            "Weather stations in the valley record rainfall every morning. "
            "Museum visitors mostly arrive on weekends during the summer months.",
        )
    ]
    picked = [s for s, _ in select_sentences("How is the Crawler trained?", passages, limit=5)]
    assert picked[0] == "The Crawler is trained with imitation learning and then with reinforcement learning."
    assert len(picked) < 3


def test_the_extractive_fallback_keeps_both_ids_of_a_paired_quote():
    from bayes_app.agents.pipeline import extractive_claims
    from bayes_app.agents.retrieval import Passage as ResearchPassage
    from bayes_app.llm.sentences import sentences_of

    text = (
        "The Crawler is trained in two stages with imitation learning first. "
        "This challenge motivates a session-level PPO for the Crawler training."
    )
    passage = ResearchPassage(1, "c1", "d1", "Paper", [], 2025, 3, text, "body", text)
    picked = select_sentence_ids("Crawler training challenge PPO", sentences_of(1, text), limit=3)
    assert any(isinstance(sid, tuple) for _, sid in picked)  # the dependent sentence comes with the one before
    claims = extractive_claims(picked, {1: passage}, "Training")
    paired = next(c for c in claims if c.quote.startswith("The Crawler is trained") and "This challenge" in c.quote)
    assert paired.raw_passage == ["1.1", "1.2"]
    assert paired.passage is passage
