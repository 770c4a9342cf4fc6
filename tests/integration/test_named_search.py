"""A query naming something the dense model barely knows (a programme, a gene: "DESMOND",
"SVCT2") finds the passage that states the name as a strong match, not as one of the "closest
passages" under the relevance floor; a query with no such name and nothing near stays weak."""

from __future__ import annotations

import textwrap

import pytest

from bayes_app.db import session_scope
from tests.support.ingest_env import ingest, ingest_env
from tests.support.tiny_pdf import text_pdf

DESMOND = (
    "A structured group education programme for people with newly diagnosed type 2 diabetes was "
    "evaluated in a cluster randomised controlled trial in 13 primary care trusts. The DESMOND "
    "programme showed no difference in biomedical or lifestyle outcomes at three years."
)
TITLED = (
    "The group education sessions ran for six hours in the community and were delivered by two "
    "trained healthcare professional educators; the comparison group received usual care."
)
OTHER = "Tuberculosis incidence was higher in densely populated urban districts than in rural ones."


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    with ingest_env(tmp_path_factory.mktemp("named"), "named@example.com") as env:
        docs = {}
        papers = (
            ("desmond", "Paper desmond", DESMOND),
            ("titled", "Three year follow-up of the DESMOND programme", TITLED),  # the name only in the title
            ("other", "Paper other", OTHER),
        )
        for key, title, text in papers:
            doc_id, res = ingest(env, text_pdf(title, textwrap.wrap(text, 85)), f"{key}.pdf")
            assert res.status == "indexed", res
            docs[key] = doc_id
        yield env | {"docs": docs}


def _hits(library, query):
    from bayes_app.search import hybrid

    with session_scope(library["db_url"]) as s:
        return hybrid.search(s, library["index"], library["embedder"], library["owner"], query, k=5)


def test_a_passage_stating_the_name_asked_about_is_a_strong_match(library):
    hits = _hits(library, "The DESMOND program demonstrates no significant impact on lifestyles outcomes.")
    by_doc = {h.document_id: h for h in hits}
    for key in ("desmond", "titled"):
        hit = by_doc[library["docs"][key]]
        assert hit.relevance < 0.35  # under MiniLM's floor: the dense score alone would call it weak
        assert not hit.weak, key
    assert by_doc[library["docs"]["other"]].weak


def test_a_query_with_no_name_and_nothing_near_stays_weak(library):
    hits = _hits(library, "qwxzzv blorf")
    assert hits
    assert all(h.weak for h in hits)
