"""Answers and maps that answer the question (issue 25), offline, over the bundled papers and the
hand-labelled questions of tests/support/answer_labels.py: Ask and Research reach the
answer-bearing facts, claims address the question, no claim opens with a word pointing outside
itself, no near-duplicate claims. Real ingestion, embeddings, index process, Redis, SQLite; map
runs executed by the executor. The same measurement as benchmarks/answer_quality.py."""

from __future__ import annotations

import pytest

from bayes_app.library.pdf import iter_pages
from bayes_app.search.embeddings import get_embedder
from tests.support import pdfs
from tests.support.answer_labels import QUESTIONS, measure_question
from tests.support.maplab import MapLab

# Regression floors, far enough under what this code measures that machine-to-machine ties in
# embedding scores cannot cross them (issue 37: floors set at the measured value turned CI red).
# Measured on a fresh clone here (2026-11-29): Ask 0.63, claim precision 0.71 (docs/answer-quality.md
# reported 0.72 / 0.80 on another machine); the figures themselves live in
# benchmarks/answer_quality.py.
ASK_RECALL = 0.5
RESEARCH_RECALL = 0.4
CLAIM_PRECISION = 0.6
MIN_CLAIMS = 3  # fewer, better claims: still a map, never one or two claims for a question


@pytest.fixture(scope="module")
def rows():
    model = get_embedder()

    def embed(texts):
        return model.embed_passages(list(texts))

    papers = {q.paper for q in QUESTIONS}
    pages = {p: {i: t.text for i, t in enumerate(iter_pages(str(pdfs.FIXTURES / p)), 1)} for p in papers}
    with MapLab([pdfs.PASA, pdfs.REVIEW, pdfs.MEDIA]) as lab:
        yield [measure_question(lab, q, pages[q.paper], embed) for q in QUESTIONS]


def test_labels_cover_at_least_ten_questions():
    assert len(QUESTIONS) >= 10 and all(len(q.facts) >= 3 for q in QUESTIONS)


def test_ask_and_research_reach_the_answer_bearing_facts(rows):
    facts = sum(r["facts"] for r in rows)
    ask = sum(r["ask_facts"] for r in rows) / facts
    research = sum(r["research_facts"] for r in rows) / facts
    assert ask >= ASK_RECALL, [(r["question"], r["ask_answer"][:300]) for r in rows if r["ask_facts"] < r["facts"]]
    assert research >= RESEARCH_RECALL


def test_claims_address_the_question_stand_alone_and_are_said_once(rows):
    claims = sum(r["claims"] for r in rows)
    precision = sum(r["relevant_claims"] for r in rows) / claims
    assert precision >= CLAIM_PRECISION, [t for r in rows for t in r["off_topic"]][:20]
    assert all(r["claims"] >= MIN_CLAIMS for r in rows), [(r["question"], r["claims"]) for r in rows]
    assert sum(r["openers"] for r in rows) == 0, [t for r in rows for t, _ in r["claim_rows"]]
    assert sum(r["duplicates"] for r in rows) == 0
