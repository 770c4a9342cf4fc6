"""Provenance by selection (numbered sentences → verbatim quotes), the offline provider's
answers by id, structured-output levels, and the grounding of Ask answers."""

from __future__ import annotations

import asyncio
import json

import pytest

from bayes_app.agents.llm_json import echoes
from bayes_app.agents.researcher import SYSTEM, claims_schema, parse_claims
from bayes_app.agents.retrieval import Passage as AgentPassage
from bayes_app.chat import grounding as g
from bayes_app.llm import structured
from bayes_app.llm.offline import OfflineProvider
from bayes_app.llm.sentences import format_numbered, parse_id, parse_numbered, select, sentences_of
from bayes_app.llm.types import ChatRequest, ProviderError

P1 = (
    "PaSa is an LLM agent for paper search. The Crawler collects papers by search, e.g. with "
    "Google, and by expanding citations. It stops after a budget."
)
P2 = "The Selector reads each paper and decides whether it satisfies the query. Recall improves."


def by_passage() -> dict:
    return {1: sentences_of(1, P1), 2: sentences_of(2, P2)}


def test_sentences_are_numbered_verbatim_and_parse_back():
    s1 = sentences_of(1, P1)
    assert [s.id for s in s1] == ["1.1", "1.2", "1.3"]
    assert s1[1].text == "The Crawler collects papers by search, e.g. with Google, and by expanding citations."
    text = format_numbered([(1, "PaSa, p. 1", P1), (2, "PaSa, p. 2", P2)])
    assert text.startswith("Passage 1 (PaSa, p. 1)\n[1.1] PaSa is an LLM agent")
    assert [(s.id, s.text) for s in parse_numbered(text)] == [
        (s.id, s.text) for ss in by_passage().values() for s in ss
    ]
    long = "; ".join(f"clause number {i} of a run-on table row" for i in range(40)) + "."
    parts = sentences_of(3, long)
    assert len(parts) > 1
    assert all(len(p.text) <= 600 for p in parts)
    assert " ".join(p.text for p in parts) == long


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2.3", (2, 3)),
        ("[2.3]", (2, 3)),
        (2.3, (2, 3)),
        ("2:3", (2, 3)),
        (" 10.12 ", (10, 12)),
        ("2", None),
        ("two.three", None),
        (None, None),
        (True, None),
        ("2.3.4", None),
    ],
)
def test_ids_as_models_write_them(raw, expected):
    assert parse_id(raw) == expected


def test_selection_takes_the_quote_from_the_ids():
    bp = by_passage()
    # consecutive ids join; the run covering the wording wins over the first-named one
    sel = select(["1.1", "2.1", "2.2"], bp, "The Selector decides whether a paper satisfies the query.")
    assert (sel.passage, sel.ids, sel.problem) == (2, ("2.1", "2.2"), None)
    assert sel.quote == "The Selector reads each paper and decides whether it satisfies the query. Recall improves."
    assert select(["1.3", "1.2"], bp).quote == " ".join(s.text for s in bp[1][1:3])
    # junk and out-of-range ids select nothing; no ids at all is its own problem
    assert select(["9.1", "1.9", "x", 0.0], bp).problem == "unknown_sentence"
    assert select([], bp).problem == select(None, bp).problem == "no_sentences"
    assert select(["9.9", "1.1"], bp).quote == bp[1][0].text  # junk dropped, the valid id kept


def test_claims_parse_with_reasons_for_weak_model_output():
    passages = [
        AgentPassage(1, "c1", "d", "PaSa", [], 2025, 1, P1),
        AgentPassage(2, "c2", "d", "PaSa", [], 2025, 2, P2),
    ]
    data = {
        "claims": [
            {"text": "The Crawler expands citations.", "sentences": ["1.2"]},
            {"text": "2.1", "sentences": ["2.1"]},  # an id as the wording
            {"text": "the claim", "sentences": ["1.1"]},  # echoes the instructions
            {"text": "Bananas are yellow fruit.", "sentences": ["2.1"]},  # nothing of its quote
            {"text": "Recall improves a lot.", "sentences": ["7.7"]},  # junk ids
            {"text": "PaSa always wins.", "quote": "PaSa wins everything.", "passage": 1},  # a copied quote
        ]
    }
    claims = parse_claims(data, passages, "How PaSa works")
    assert [(c.quote[:20], c.problem) for c in claims] == [
        ("The Crawler collects", None),
        ("The Selector reads e", "no_wording"),
        ("PaSa is an LLM agent", "echoed_instructions"),
        ("The Selector reads e", "wording_not_in_quote"),
        ("", "unknown_sentence"),
        ("PaSa wins everything", None),
    ]  # the critic checks the copied quote
    assert claims[0].passage is passages[0]
    assert claims[0].raw_passage == ["1.2"]
    assert echoes("the claim", SYSTEM)
    assert not echoes("PaSa uses two agents", SYSTEM)
    echo = parse_claims(
        {"claims": [{"text": "How PaSa works!", "sentences": ["1.1"]}]},
        passages,
        "How PaSa works",
        instructions=f"{SYSTEM}\nHow PaSa works",
    )
    assert echo[0].problem == "echoed_instructions"  # the aspect given back as a claim
    assert parse_claims({"claims": "nope"}, passages, "x") == []
    assert parse_claims(None, passages, "x") == []


def test_claims_schema_limits_ids_and_counts():
    schema = claims_schema(["1.1", "1.2"])
    claims = schema["properties"]["claims"]
    assert (claims["minItems"], claims["maxItems"]) == (2, 6)
    sentences = claims["items"]["properties"]["sentences"]
    assert sentences["items"]["enum"] == ["1.1", "1.2"]
    assert (sentences["minItems"], sentences["maxItems"]) == (1, 3)
    assert claims["items"]["additionalProperties"] is False
    assert claims["items"]["required"] == ["text", "sentences"]


def test_offline_provider_answers_numbered_passages_with_ids():
    text = format_numbered([(1, "PaSa, p. 1", P1), (2, "PaSa, p. 2", P2)])
    req = ChatRequest(
        model="offline",
        response_format={"type": "json_schema", "json_schema": {}},
        messages=[
            {"role": "system", "content": "x"},
            {"role": "user", "content": f"ASPECT: crawler citations\n\n{text}\n\nClaims about: crawler"},
        ],
    )
    out = json.loads(asyncio.run(OfflineProvider().complete(req)).text)
    first = out["claims"][0]
    assert first["sentences"] == ["1.2"]
    assert first["text"] == sentences_of(1, P1)[1].text


def test_structured_levels_are_learnt_only_when_a_lower_one_works():
    structured.forget()

    class Endpoint:
        endpoint = "http://127.0.0.1:1/v1"

    ep = Endpoint()
    assert structured.level_for(ep, "m") == "json_schema"
    assert structured.next_level("json_schema") == "json_object_schema"
    assert structured.next_level("prompt") is None
    assert structured.level_for(ep, "m") == "json_schema"  # a refusal alone is not remembered
    structured.worked(ep, "m", "json_object_schema")
    assert structured.level_for(ep, "m") == "json_object_schema"
    assert structured.level_for(ep, "other") == "json_schema"
    structured.worked(ep, "m", "json_schema")  # never back up within a process
    assert structured.level_for(ep, "m") == "json_object_schema"
    schema = {"type": "object"}
    assert structured.response_format("json_object_schema", "x", schema) == {"type": "json_object", "schema": schema}
    assert structured.response_format("prompt", "x", schema) is None
    assert structured.is_refusal(ProviderError("bad_request", "HTTP 422: bad", False, status=422))
    assert structured.is_refusal(
        ProviderError("unavailable", "HTTP 500: 1 validation error: response_format", True, status=500)
    )
    assert not structured.is_refusal(ProviderError("unavailable", "HTTP 500: boom", True, status=500))
    assert not structured.is_refusal(ProviderError("bad_request", "x", False, status=400, partial=True))
    structured.forget()


CITATIONS = [{"n": 1, "title": "PaSa", "page": 1, "text": P1}, {"n": 2, "title": "PaSa", "page": 2, "text": P2}]


def test_grounding_of_answers():
    assert g.cited_numbers("A [1], b [2, 9] and [1][3].", {1, 2, 3}) == [1, 2, 3]
    assert g.ground("It collects papers [2].", "What does the Selector do?", CITATIONS).state == g.CITED
    quoted = g.ground("It is magic.", "How does the Crawler expand citations?", CITATIONS)
    assert quoted.state == g.QUOTED
    assert quoted.label.startswith("No sources cited")
    assert quoted.addition == (
        f"{g.QUOTED_HEAD} The Crawler collects papers by search, e.g. with Google, and by expanding citations. [1]"
    )
    unsupported = g.ground("Mercury boils at 357 C.", "What is the boiling point of mercury?", CITATIONS)
    assert (unsupported.state, unsupported.addition) == (g.UNSUPPORTED, g.UNSUPPORTED_TEXT)
    said = g.ground("The library doesn't support an answer to this question.", "Boiling point of mercury?", CITATIONS)
    assert (said.state, said.addition) == (g.UNSUPPORTED, "")
    assert g.ground("391", "What is 17*23?", CITATIONS, used_other_tools=True).state == g.UNCITED
    assert g.ground("Hello!", "Hi, thanks!", CITATIONS).state == g.UNCITED
    assert g.ground("x", "What is PaSa?", []).state == g.UNSUPPORTED  # an empty library
    assert g.LABELS[g.UNCITED] == "No sources cited"
    assert g.LABELS[g.CITED] == ""
