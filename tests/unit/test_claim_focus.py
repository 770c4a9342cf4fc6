"""Claims for what the question asks, not only its subject (issue 25, claim precision): the
subject/focus split among the candidates, local-IDF term coverage, the question type's form prior,
the passage blend; a plan keeps what the learned relevance model takes to answer (issue 37)."""

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
    assert blended[1] > blended[2]
    assert alone[1] == alone[2]


def test_focus_falls_back_to_terms_and_form_without_a_model():
    def broken(_texts):
        raise RuntimeError("no model")

    scores = choose.focus_relevance("How is the Crawler trained?", CRAWLER, broken)
    assert int(np.argmax(scores)) == 3


def _passage(n: int, text: str) -> Passage:
    return Passage(n, f"c{n}", "d1", "Paper", [], 2025, n, text, "body", text)


def test_a_plan_keeps_what_the_relevance_model_takes_to_answer_and_a_few_best(monkeypatch):
    on = [
        "The Crawler is trained with imitation learning on generated trajectories.",
        "The Crawler is then trained with reinforcement learning using session-level PPO.",
        "The Crawler training uses the Selector as an auxiliary reward model.",
    ]
    off = [
        "Google Scholar is a widely used academic search engine for papers.",
        "Academic search engines index millions of papers from many publishers.",
        "Many papers are published every year in computer science venues.",
        "Search engines rank papers by citation counts and by text matches.",
    ]
    question = "How is the Crawler trained?"
    passages = [_passage(i, t) for i, t in enumerate(on + off, 1)]
    monkeypatch.setattr(extractive, "MIN_PLAN_CLAIMS", 2)
    planned = {c.text for _, cs in extractive.plan(question, passages, bag_embed) for c in cs}
    cands = extractive.answering(extractive.rank(extractive.claim_candidates(passages), question, bag_embed))
    t = extractive.PLAN_THRESHOLD
    # every sentence over the plan's threshold and the MIN_PLAN_CLAIMS best
    assert {c.text for c in cands if c.extra["relevance"] >= t} <= planned
    assert len(planned) >= 2
    assert planned & set(on)
    # a library where nothing answers still gets its MIN_PLAN_CLAIMS best
    weak = [_passage(i, t) for i, t in enumerate(off, 1)]
    assert sum(len(cs) for _, cs in extractive.plan(question, weak, bag_embed)) >= 2


def test_each_answering_paper_keeps_its_share_when_several_answer(monkeypatch):
    monkeypatch.setattr(extractive, "MIN_PLAN_CLAIMS", 4)
    monkeypatch.setattr(extractive, "PLAN_THRESHOLD", 1.01)
    monkeypatch.setattr(extractive, "PAPER_CLAIMS", 3)

    def cands(rels: dict[str, list[float]]) -> list[extractive.Candidate]:
        out = []
        for doc, values in rels.items():
            for k, r in enumerate(values):
                p = Passage(k, f"{doc}-{k}", doc, doc, [], 2025, 1, f"{doc} {k}", "body", f"{doc} {k}")
                out.append(extractive.Candidate(p.text, p, extra={"relevance": r, "parts": []}))
        return sorted(out, key=lambda c: -c.extra["relevance"])

    # two papers answer (each has two of the four best): each keeps its three best → six
    two = extractive.answering(cands({"a": [0.99, 0.98, 0.5, 0.4, 0.3], "b": [0.97, 0.96, 0.6, 0.2]}))
    assert sorted(c.text for c in two) == ["a 0", "a 1", "a 2", "b 0", "b 1", "b 2"]
    # one paper answers, another has one stray sentence among the best: only the four best
    one = extractive.answering(cands({"a": [0.99, 0.98, 0.97, 0.5, 0.4], "b": [0.96, 0.2, 0.1]}))
    assert sorted(c.text for c in one) == ["a 0", "a 1", "a 2", "b 0"]


def test_a_multi_part_question_gets_claims_for_each_part(monkeypatch):
    assert extractive.question_parts("What is AutoScholarQuery and how was it built?") == [
        "What is AutoScholarQuery",
        "how was it built?",
    ]
    assert extractive.question_parts("How is the Crawler trained? What reward does it get?") == [
        "How is the Crawler trained?",
        "What reward does it get?",
    ]
    assert extractive.question_parts("What are counterfactual explanations?") == []
    monkeypatch.setattr(extractive, "MIN_PLAN_CLAIMS", 1)
    monkeypatch.setattr(extractive, "PART_CLAIMS", 1)
    monkeypatch.setattr(extractive, "PLAN_THRESHOLD", 1.01)  # only the best and each part's best
    texts = [
        "The Crawler is trained with imitation learning and then with reinforcement learning.",
        "The reward of the Crawler is the number of relevant papers it finds in a session.",
        "Google Scholar is a widely used academic search engine for papers.",
    ]
    passages = [_passage(i, t) for i, t in enumerate(texts, 1)]
    question = "How is the Crawler trained? What reward does the Crawler get?"
    planned = {c.text for _, cs in extractive.plan(question, passages, bag_embed) for c in cs}
    assert planned == set(texts[:2])


def test_a_model_researcher_sees_the_sentences_ranked_by_the_same_focus():
    from bayes_app.agents import researcher
    from bayes_app.llm.sentences import sentences_of

    by_passage = {1: sentences_of(1, " ".join(CRAWLER[:3])), 2: sentences_of(2, " ".join(CRAWLER[3:]))}
    ranked = researcher.ranked_ids("How is the Crawler trained?", by_passage, bag_embed)
    assert ranked[0] == "2.1"
    assert sorted(ranked) == ["1.1", "1.2", "1.3", "2.1", "2.2"]
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


def test_a_theme_is_named_after_a_phrase_its_claims_share():
    texts = ["Imitation learning trains the Crawler first.", "Session-level PPO follows imitation learning."]
    vecs = bag_embed(texts)
    title, _ = extractive.theme_title(texts, vecs.mean(0), [], bag_embed)
    assert title.lower() in texts[1].lower()
    assert title.lower() in texts[0].lower()


def test_a_theme_name_is_a_noun_phrase_or_a_name_never_a_generic_word():
    texts = [
        "Models are often opaque to chemists.",
        "Deep learning models are opaque black boxes for chemists.",
        "Opaque deep learning models hide their reasoning from chemists.",
    ]
    vecs = bag_embed(texts)
    title, _ = extractive.theme_title(texts, vecs.mean(0), [], bag_embed)
    assert 2 <= len(title.split()) <= 4
    assert title.lower() in " ".join(texts).lower()
    # only generic single words and the question's own subject: a phrase with an -ing word names it
    two = ["The training process for the Crawler comprises two stages.", "The training process involves two stages."]
    title, _ = extractive.theme_title(two, bag_embed(two).mean(0), [], bag_embed, {"crawler", "trained"})
    assert title == "Training process"


def test_a_planned_sentence_outside_every_theme_joins_the_closest_with_room():
    e1, e2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    m = np.stack([e1, e1, e2, e2, 0.9 * e1 + 0.1 * e2, 0.2 * e1 + 0.8 * e2])
    rel = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    chosen = [[0, 1], [2, 3]]
    extractive._join_leftovers(chosen, m, rel, room=3, max_groups=2)
    assert chosen == [[0, 1, 4], [2, 3, 5]]
    full = [[0, 1], [2, 3]]
    extractive._join_leftovers(full, m, rel, room=2, max_groups=2)
    assert full == [[0, 1], [2, 3]]  # no room: a theme never grows past its claims
    own = [[0, 1], [2, 3]]
    extractive._join_leftovers(own, m, rel, room=2, max_groups=4)
    assert own == [[0, 1], [2, 3], [4], [5]]  # … but a planned sentence may be a theme of its own
    single = [[0], [2, 3]]
    extractive._join_leftovers(single, m, rel, room=3, max_groups=2)
    # a one-claim theme takes no other (its name is its claim's), nor does a theme far in meaning
    assert single == [[0], [2, 3, 5]]


def test_a_claim_holding_another_whole_repeats_it():
    """A sentence, and the same sentence quoted with the next one that leans on it, are one claim
    (a map had both, one under the other, in held-out research)."""
    s1 = (
        "We show here that paracrine and autocrine Wnt signals are essential self-renewal factors for ESCs, "
        "and are required to inhibit their differentiation into EpiSCs."
    )
    both = s1 + " Moreover, we find that Wnt proteins in combination with the cytokine LIF support ESC self-renewal."
    other = "Wnt signals are dispensable for the self-renewal of human embryonic stem cells in culture."
    assert extractive.duplicate_of([both, other], [s1], embed=bag_embed) == [0, None]
    assert extractive.duplicate_of([s1], [both], embed=bag_embed) == [0]
    # a short phrase inside a longer claim is no repeat of it
    assert not extractive.same_claim("Wnt signals matter.", s1, 0.2)
