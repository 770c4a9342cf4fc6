"""The learned sentence relevance model (issue 37): committed weights that match the features,
probabilities an answering sentence wins, a term-only fallback without an embedding model, and
the offline answer that shows the winners as the library's own sentences grouped by paper."""

from __future__ import annotations

import json
import zlib

import numpy as np

from bayes_app.llm import relevance
from bayes_app.llm.offline import Passage, select_sentences
from bayes_app.llm.offline_answer import OFFLINE_LEAD, extractive_answer, reader_text


def bag_embed(texts):
    m = np.zeros((len(texts), 512), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.lower().replace(".", " ").replace(",", " ").replace("?", " ").split():
            m[i, zlib.crc32(w.encode()) % 512] += 1.0
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


SENTENCES = [
    "The Crawler recall rises with the number of expand actions on the benchmark.",
    "The Crawler is trained with imitation learning and then with reinforcement learning.",
    "Google Scholar is a widely used academic search engine for papers.",
]


def test_the_committed_weights_match_the_features_and_are_small():
    data = json.loads(relevance.WEIGHTS.read_text())
    assert tuple(data["features"]) == relevance.FEATURES
    assert len(data["coef"]) == len(data["mean"]) == len(data["scale"]) == len(relevance.FEATURES)
    assert 0.0 < relevance.threshold() < 1.0
    assert relevance.WEIGHTS.stat().st_size < 20_000


def test_features_have_one_row_per_sentence_and_one_column_per_feature():
    x = relevance.features("How is the Crawler trained?", SENTENCES, embed=bag_embed)
    assert x.shape == (3, len(relevance.FEATURES))
    assert np.isfinite(x).all()
    assert relevance.features("q", [], embed=bag_embed).shape == (0, len(relevance.FEATURES))


def test_the_answering_sentence_scores_highest():
    p = relevance.score("How is the Crawler trained?", SENTENCES, embed=bag_embed)
    assert ((p > 0) & (p < 1)).all()
    assert int(np.argmax(p)) == 1
    assert int(np.argmin(p)) == 2  # off the subject altogether
    dropped = relevance.score("How is the Crawler trained?", SENTENCES, embed=bag_embed, drop_off_subject=True)
    assert np.allclose(dropped[:2], p[:2])
    assert dropped[2] == 0.0  # none of its terms, a low cosine


def test_a_sentence_about_something_else_scores_zero_however_good_its_passage():
    # both in one passage: the model lifts every sentence of the best passage
    crawler, weather = SENTENCES[1], "Weather stations in the valley record rainfall every morning."
    passage = f"{crawler} {weather}"
    kw = {"embed": bag_embed, "drop_off_subject": True}
    p = relevance.score("How is the Crawler trained?", [crawler, weather], [passage] * 2, [0, 1], **kw)
    assert p[0] > 0.5
    assert p[1] == 0.0
    # a question sharing no term with any candidate (another language): nothing is set aside
    p = relevance.score("Wie wird er trainiert?", [crawler, weather], **kw)
    assert (p > 0).all()


def test_without_an_embedding_model_the_terms_still_rank():
    def broken(_texts):
        raise RuntimeError("no model")

    p = relevance.score("How is the Crawler trained?", SENTENCES, embed=broken)
    assert int(np.argmax(p)) == 1


def test_a_number_counts_when_the_question_asks_how_much():
    x = relevance.features(
        "What recall does PaSa achieve?",
        ["PaSa achieves a recall of 0.79 on the benchmark.", "PaSa achieves a high recall on the benchmark."],
        embed=bag_embed,
    )
    col = relevance.FEATURES.index("number_for_amount")
    assert list(x[:, col]) == [1.0, 0.0]


def test_a_structured_abstract_s_labels_say_which_sentences_set_up_and_which_report():
    passage = (
        "OBJECTIVE To measure whether X lasts. DESIGN, SETTING, AND PARTICIPANTS A cohort of 3000 adults. "
        "We followed them for 3 years. RESULTS At 12 weeks, 53% quit. Most did not relapse. "
        "CONCLUSIONS AND RELEVANCE Combined use increased abstinence."
    )
    assert relevance.section_of("We followed them for 3 years.", passage) == "setup"
    assert relevance.section_of("RESULTS At 12 weeks, 53% quit.", passage) == "findings"
    assert relevance.section_of("Most did not relapse.", passage) == "findings"
    assert relevance.section_of("Our Results show X.", "Our Results show X.") is None  # only the capitals
    x = relevance.features(
        "Does X last?", ["We followed them for 3 years.", "Most did not relapse."], [passage] * 2, embed=bag_embed
    )
    setup, findings = relevance.FEATURES.index("section_setup"), relevance.FEATURES.index("section_findings")
    assert list(x[:, setup]) == [1.0, 0.0]
    assert list(x[:, findings]) == [0.0, 1.0]


def test_passage_keys_join_the_sentences_of_one_passage():
    assert relevance.passage_keys([1, 1, 2], ["A.", "B.", "C."]) == ["A. B.", "A. B.", "C."]


PASSAGES = [
    Passage(
        1,
        "The training process for the Crawler comprises two stages. In the first stage, we generate "
        "trajectories and perform imitation learning. In the second stage, reinforcement learning is applied [12, 14].",
        "PaSa",
        5,
    ),
    Passage(2, "Google Scholar is a widely used academic search engine for papers.", "Other paper", 2),
    Passage(3, "The Crawler is trained in two stages, as in AGILE (Hitchcock 2024).", "PaSa", 3),
]


def test_the_offline_answer_shows_the_library_s_sentences_grouped_by_paper_in_reading_order():
    picked = select_sentences("How is the PaSa Crawler trained?", PASSAGES, 5)
    text = extractive_answer(picked, PASSAGES)
    lines = text.splitlines()
    assert lines[0] == OFFLINE_LEAD
    assert "**PaSa**" in lines
    bullets = [x for x in lines if x.startswith("- ")]
    # one bullet per passage, each with its page and its citation marker; p. 3 before p. 5
    pasa = [b for b in bullets if b.endswith(("[1]", "[3]"))]
    assert [b[:6] for b in pasa] == ["- p. 3", "- p. 5"]
    # the paper's own markers are not quoted; adjacent sentences run on without an ellipsis
    assert "[12, 14]" not in text
    assert "stages. In the first stage" in text


def test_each_paper_s_best_sentence_leads_then_the_rest_in_reading_order():
    first, second, third = (
        "The training process for the Crawler comprises two stages.",
        "In the first stage, we generate trajectories and perform imitation learning.",
        "In the second stage, reinforcement learning is applied [12, 14].",
    )
    # picked best first: the passage's second sentence is the best, its first one the weakest
    picked = [
        (second, 1),
        (third, 1),
        ("The Crawler is trained in two stages, as in AGILE (Hitchcock 2024).", 3),
        (first, 1),
    ]
    bullets = [x for x in extractive_answer(picked, PASSAGES).splitlines() if x.startswith("- ")]
    # the best sentence opens the paper's first bullet, with the one after it (adjacent: one run)
    assert bullets[0] == f"- p. 5: {second} In the second stage, reinforcement learning is applied. [1]"
    # then the rest in reading order: p. 3, then the sentence before the best on p. 5
    assert bullets[1].startswith("- p. 3: The Crawler is trained in two stages")
    assert bullets[2] == "- p. 5: The training process for the Crawler comprises two stages. [1]"
    assert len(bullets) == 3


def test_a_statement_to_check_gets_the_wider_answer():
    from bayes_app.llm import choose

    assert (
        choose.answer_length("Dexamethasone increases the risk of postoperative bleeding.")
        == choose.WIDE_ANSWER_SENTENCES
    )
    assert choose.answer_length("Is dexamethasone safe?") == choose.ANSWER_SENTENCES
    assert choose.answer_length("Describe SHAP") == choose.ANSWER_SENTENCES


def test_a_statement_to_check_keeps_sentences_further_below_the_best(monkeypatch):
    """A statement's evidence runs over sentences that each say part of it: the floor under the
    best sentence is lower than a question's (a sentence at 0.3 × the best is shown)."""
    import asyncio

    from bayes_app.llm import choose, offline
    from bayes_app.llm.types import ChatRequest

    assert choose.checks_statement("Dexamethasone increases the risk of postoperative bleeding.")
    assert not choose.checks_statement("Does dexamethasone increase the risk of bleeding?")
    assert not choose.checks_statement("Describe SHAP")
    scores = np.array([1.0, 0.3, 0.1])
    quotes = ["The best sentence.", "A sentence at a third of it.", "A far one."]
    assert offline._picked(scores, None, quotes, 5, offline.ANSWER_RATIO) == [0]
    assert offline._picked(scores, None, quotes, 5, offline.STATEMENT_RATIO) == [0, 1]

    seen = []

    def spy(_question, _passages, _limit=3, ratio=offline.ANSWER_RATIO):
        seen.append(ratio)
        return []

    monkeypatch.setattr(offline, "select_sentences", spy)
    system = "Passages:\n[1] (Paper, p. 1) Dexamethasone raised bleeding."
    for question in ("Dexamethasone increases bleeding.", "Does dexamethasone increase bleeding?"):
        request = ChatRequest(
            model="offline", messages=[{"role": "system", "content": system}, {"role": "user", "content": question}]
        )
        asyncio.run(offline.OfflineProvider().complete(request))
    assert seen == [offline.STATEMENT_RATIO, offline.ANSWER_RATIO]


def test_reader_text_drops_markers_and_list_prefixes():
    assert reader_text("2) The model opens these black boxes [1, 3].") == "The model opens these black boxes."


def test_reader_text_drops_a_structured_abstract_s_label_run_into_the_sentence():
    assert reader_text("RESULTS At 12 weeks, 53% quit.") == "At 12 weeks, 53% quit."
    assert reader_text("DESIGN, SETTING, AND PARTICIPANTS Observational cohort study.") == "Observational cohort study."
    assert reader_text("Abstract BACKGROUND Information is scarce.") == "Information is scarce."
    assert reader_text("RESULTS are shown in Table 2.") == "RESULTS are shown in Table 2."  # a word, not a label
    assert reader_text("HIV infection rises.") == "HIV infection rises."


def test_a_sentence_naming_what_only_the_one_before_says_is_quoted_with_it():
    from bayes_app.llm import choose

    assert choose.refers_back("PaSa addresses this drawback by training an agent.")
    assert not choose.refers_back("This paper presents PaSa, a paper search agent.")
    assert choose.needs_previous("It is trained with PPO.")
