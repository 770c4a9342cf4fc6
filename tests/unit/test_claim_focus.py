"""Claims for what the question asks, not only its subject (issue 25, claim precision): the
subject/focus split among the candidates, local-IDF term coverage, the question type's form prior,
the passage blend, and a plan that leaves out claims far below the best."""

from __future__ import annotations

import zlib

import numpy as np

from bayes_app.agents import extractive
from bayes_app.agents.retrieval import Passage
from bayes_app.llm import choose


def bag_embed(texts):
    """A deterministic stand-in for the embedder with a fixed vocabulary (words hashed into 512
    dimensions), so texts embedded in separate calls compare."""
    m = np.zeros((len(texts), 512), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().replace(".", " ").replace(",", " ").replace("?", " ").split():
            m[i, zlib.crc32(w.encode()) % 512] += 1.0
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


# "Crawler" runs through every sentence (the subject); "trained" only through the answer (the focus)
CRAWLER = [
    "As the reward increases, the Crawler recall and the Crawler actions increase.",
    "The Crawler reward uses a coefficient for the Crawler expand action.",
    "Crawler recall drops without the Crawler expand action on the Crawler benchmark.",
    "The Crawler is trained with imitation learning and then reinforcement learning.",
    "The Crawler reads the query and searches for papers with the Crawler tools.",
]


def test_subject_words_are_those_running_through_the_candidates():
    assert choose.subject_words("How is the Crawler trained?", CRAWLER) == ["Crawler"]
    assert choose.subject_words("How is the Crawler trained?", []) == []


def test_rare_question_terms_weigh_more():
    cov = choose.rare_term_coverage("How is the Crawler trained?", CRAWLER)
    assert cov[3] == 1.0  # both terms
    assert cov[0] < 0.5 < cov[3]  # the subject alone counts for little: it is everywhere
    # question words ("how", "is") are no terms
    assert not choose.rare_term_coverage("How is it?", CRAWLER).any()


def test_the_focus_beats_the_subject_where_plain_relevance_does_not():
    question = "How is the Crawler trained?"
    plain, _ = choose.relevance(question, CRAWLER, bag_embed)
    focus = choose.focus_relevance(question, CRAWLER, bag_embed)
    assert int(np.argmax(focus)) == 3
    others = [0, 1, 2, 4]
    assert focus[3] - max(focus[others]) > plain[3] - max(plain[others])


def test_question_type_prefers_the_sentence_form_that_answers_it():
    results = "PaSa reaches a recall of 0.61, 37% higher than Google."
    plain = "PaSa is compared with Google and Google Scholar."
    prior = choose.form_prior("How does PaSa perform compared with Google?", [results, plain])
    assert prior[0] > prior[1]
    definition = "A surrogate model is a simple model fitted to the black box near an instance."
    mention = "Surrogate models were used in our experiments on solubility."
    prior = choose.form_prior("What are surrogate models?", [definition, mention])
    assert prior[0] > prior[1]
    steps = "In the first stage, we trained the Crawler on generated trajectories."
    prior = choose.form_prior("How is the Crawler trained?", [steps, "The Crawler reads papers."])
    assert prior[0] > prior[1]
    assert not choose.form_prior("Why do agents help?", [results, definition, steps]).any()


def test_a_sentence_beside_the_best_answer_gains_from_its_passage():
    sentences = [
        "The Crawler is trained in two stages.",
        "Imitation learning comes before it.",
        "Imitation learning was older.",
    ]
    alone = choose.focus_relevance("How is the Crawler trained?", sentences, bag_embed)
    blended = choose.focus_relevance("How is the Crawler trained?", sentences, bag_embed, ["p1", "p1", "p2"])
    assert blended[1] > blended[2] and alone[1] == alone[2]


def test_focus_falls_back_to_terms_and_form_without_a_model():
    def broken(_texts):
        raise RuntimeError("no model")

    scores = choose.focus_relevance("How is the Crawler trained?", CRAWLER, broken)
    assert int(np.argmax(scores)) == 3


def _passage(n: int, text: str) -> Passage:
    return Passage(n, f"c{n}", "d1", "Paper", [], 2025, n, text, "body", text)


def test_a_plan_leaves_out_claims_far_below_the_best_but_keeps_a_few(monkeypatch):
    monkeypatch.setattr(extractive, "MIN_PLAN_CLAIMS", 3)
    on = [
        "The Crawler is trained with imitation learning on generated trajectories.",
        "The Crawler is then trained with reinforcement learning using session-level PPO.",
        "The Crawler training uses the Selector as an auxiliary reward model.",
        "The Crawler training samples sessions to save time during training.",
    ]
    off = [
        "Google Scholar is a widely used academic search engine for papers.",
        "Academic search engines index millions of papers from many publishers.",
        "Many papers are published every year in computer science venues.",
        "Search engines rank papers by citation counts and by text matches.",
    ]
    question = "How is the Crawler trained?"
    passages = [_passage(i, t) for i, t in enumerate(on + off, 1)]
    themes = extractive.plan(question, passages, bag_embed)
    planned = [c for _, cs in themes for c in cs]
    assert {c.text for c in planned} == set(on[:3])  # the weakest (0.3 below the best) is left out
    assert len(themes) == extractive.MIN_ASPECTS  # the largest theme split: three themes of three claims
    best = max(c.extra["relevance"] for c in planned)
    assert all(c.extra["relevance"] >= best - extractive.PLAN_MARGIN for c in planned[:1])
    # a library where nothing stands out still gets MIN_PLAN_CLAIMS claims
    weak = [_passage(i, t) for i, t in enumerate(off, 1)]
    assert sum(len(cs) for _, cs in extractive.plan(question, weak, bag_embed)) >= extractive.MIN_PLAN_CLAIMS


def test_a_model_researcher_sees_the_sentences_ranked_by_the_same_focus():
    from bayes_app.agents import researcher
    from bayes_app.llm.sentences import sentences_of

    by_passage = {1: sentences_of(1, " ".join(CRAWLER[:3])), 2: sentences_of(2, " ".join(CRAWLER[3:]))}
    ranked = researcher.ranked_ids("How is the Crawler trained?", by_passage, bag_embed)
    assert ranked[0] == "2.1" and sorted(ranked) == ["1.1", "1.2", "1.3", "2.1", "2.2"]
    assert researcher.ranked_ids("How is the Crawler trained?", by_passage, bag_embed, limit=2) == ranked[:2]
    text, _ = researcher.numbered([_passage(1, "The Crawler is trained in two stages.")])
    msg = researcher.model_message("How is the Crawler trained?", "Training", text, ["1.1"])
    assert msg.index("[1.1] The Crawler") < msg.index(f"{researcher.RANKED_NOTE} 1.1") < msg.index("Claims about:")
    assert researcher.RANKED_NOTE not in researcher.model_message("q", "a", text, [])


def test_a_plan_left_with_one_theme_splits_it_in_two():
    texts = [
        "The Crawler is trained with imitation learning.",
        "The Crawler is trained with imitation learning first.",
        "Reinforcement learning with PPO follows for the Crawler.",
        "Reinforcement learning with PPO follows for the Crawler later.",
    ]
    cands = [extractive.Candidate(t, _passage(i, t)) for i, t in enumerate(texts, 1)]
    for c, v in zip(cands, bag_embed(texts)):
        c.vec = v
    groups = extractive._split_in_two(cands)
    assert sorted(sorted(c.text for c in g) for g in groups) == [sorted(texts[2:]), sorted(texts[:2])]


def test_a_theme_is_named_after_a_phrase_of_its_first_claim():
    texts = ["Imitation learning trains the Crawler first.", "Session-level PPO follows imitation learning."]
    vecs = bag_embed(texts)
    title, _ = extractive.theme_title(texts, vecs.mean(0), [], bag_embed, anchor=texts[1])
    assert title.lower() in texts[1].lower()
    title, _ = extractive.theme_title(texts, vecs.mean(0), [], bag_embed, anchor=texts[0])
    assert title.lower() in texts[0].lower()


def test_past_the_few_best_a_planned_claim_must_state_what_the_question_asks(monkeypatch):
    monkeypatch.setattr(extractive, "PLAN_MARGIN", 1.0)  # only the focus cut at work
    on = [
        "The Crawler faces challenges such as sparse rewards, addressed by a session-level reward.",
        "Long trajectories are another challenge the Crawler faces, addressed by session sampling.",
    ]
    off = [
        "In the second stage, reinforcement learning of the Crawler is applied.",
        "The training of the Crawler comprises two stages of learning.",
        "The Crawler is trained with imitation learning and reinforcement learning.",
        "The Crawler searches and expands papers with reinforcement learning.",
        "The Crawler learning uses the Selector as an auxiliary reward model.",
        "Reinforcement learning updates the Crawler policy with PPO.",
        "The Crawler stops when its learning budget of actions is spent.",
    ]
    question = "What challenges does reinforcement learning of the Crawler face and how are they addressed?"
    focus = choose.focus_terms(question, on + off)
    assert focus == {"challeng", "face", "address"}  # "Crawler", "reinforcement", "learning": the subject
    passages = [_passage(i, t) for i, t in enumerate(on + off, 1)]

    def planned() -> list[tuple[float, str]]:
        themes = extractive.plan(question, passages, bag_embed)
        return sorted(((c.extra["relevance"], c.text) for _, cs in themes for c in cs), reverse=True)

    monkeypatch.setattr(extractive, "FOCUS_FREE_CLAIMS", 100)
    before = planned()
    assert any(not choose.carries_focus(t, focus) for _, t in before[3:])  # subject-only claims past the best
    monkeypatch.setattr(extractive, "FOCUS_FREE_CLAIMS", 3)
    after = planned()
    assert len(after) >= 3 and {t for _, t in after} >= {t for _, t in before if t in on}
    assert all(choose.carries_focus(t, focus) for _, t in after[3:]) and len(after) < len(before)


def test_a_theme_name_is_a_noun_phrase_or_a_name_never_a_generic_word():
    texts = [
        "Models are often opaque to chemists.",
        "Deep learning models are opaque black boxes for chemists.",
        "Opaque deep learning models hide their reasoning from chemists.",
    ]
    vecs = bag_embed(texts)
    title, _ = extractive.theme_title(texts, vecs.mean(0), [], bag_embed)
    assert 2 <= len(title.split()) <= 4 and title.lower() in " ".join(texts).lower()
    # only generic single words and the question's own subject: a phrase with an -ing word names it
    two = ["The training process for the Crawler comprises two stages.", "The training process involves two stages."]
    title, _ = extractive.theme_title(two, bag_embed(two).mean(0), [], bag_embed, {"crawler", "trained"})
    assert title == "Training process"
