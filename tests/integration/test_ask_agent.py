"""The Ask agent through the running app (web + worker + index + Redis) against the scripted
OpenAI-compatible server: tools, two phases, citations before text, conversations, memory,
edit-and-rewind, pinning, cancel during a tool call, deletion mid-run, isolation."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

import httpx
import pytest

from bayes_app.credits import ledger
from bayes_app.db import session_scope
from bayes_app.models import MICRO, User
from tests.support.fake_openai import Script

PAPERS = Path(__file__).resolve().parents[1] / "fixtures" / "papers"


@pytest.fixture(scope="module")
def api_base(app_stack) -> str:
    return app_stack.url + "/api/v1"


def _user(api_base: str, make_user, app_db_url: str, credits: float = 5) -> httpx.Client:
    email, password = make_user()
    with session_scope(app_db_url) as db:
        user = db.query(User).filter(User.email == email).one()
        ledger.grant(db, user, int(credits * MICRO), f"grant:{user.id}", "test")
    token = httpx.post(f"{api_base}/auth/token", json={"email": email, "password": password}).json()["token"]
    return httpx.Client(base_url=api_base, timeout=60, headers={"Authorization": f"Bearer {token}"})


@pytest.fixture(scope="module")
def library(api_base, app_db_url):
    """One user with two indexed papers (module-wide: ingestion takes a while)."""
    email = f"lib{uuid.uuid4().hex[:8]}@example.com"
    password = "pw-" + uuid.uuid4().hex
    from bayes_app.accounts import service

    with session_scope(app_db_url) as db:
        user = service.register(db, email, password)
        db.flush()
        ledger.grant(db, user, 50 * MICRO, f"grant:{user.id}", "test")
    token = httpx.post(f"{api_base}/auth/token", json={"email": email, "password": password}).json()["token"]
    c = httpx.Client(base_url=api_base, timeout=60, headers={"Authorization": f"Bearer {token}"})
    docs = {}
    for name in ("pasa.pdf", "explanations-molecular-prediction-models.pdf"):
        res = c.post("/documents", files={"file": (name, (PAPERS / name).read_bytes(), "application/pdf")})
        assert res.status_code in (200, 201, 202), res.text
        docs[name] = res.json()["id"]
    deadline = time.monotonic() + 300
    for doc_id in docs.values():
        while c.get(f"/documents/{doc_id}").json()["status"] != "indexed":
            assert time.monotonic() < deadline, "ingestion did not finish"
            time.sleep(0.3)
    yield c, docs
    c.close()


def ask(c: httpx.Client, prompt: str, **extra) -> dict:
    res = c.post("/runs", json={"kind": "ask", "prompt": prompt, **extra})
    assert res.status_code == 202, res.text
    return res.json()


def follow(c: httpx.Client, run_id: str) -> list[dict]:
    with c.stream("GET", f"/runs/{run_id}/events?format=ndjson", timeout=60) as stream:
        return [json.loads(x) for x in stream.iter_lines() if x]


def requests_with(fake, marker: str) -> list[dict]:
    return [r["body"] for r in fake.chat_requests() if marker in json.dumps(r["body"])]


def test_tools_thinking_citations_then_answer_and_the_conversation_persists(library, fake_llm):
    c, docs = library
    m = f"T{uuid.uuid4().hex[:8]}"
    fake_llm.script(
        Script.thinking(m, "The user asks about PASA; search first."),
        Script.tool_call("search_knowledge_base", {"query": "PASA agent paper search"}, match=m),
        Script.tool_call("calculator", {"expression": "2**10 + sqrt(16)"}, match=m),
        Script(text="PASA is an LLM agent for paper search [1]. The number is 1028.", match=m),
    )
    run = ask(c, f"What is PASA? {m}")
    lines = follow(c, run["id"])
    types = [x["type"] for x in lines]
    assert types[0] == "status", lines[-3:]
    assert types[-1] == "done", lines[-3:]
    assert lines[-1]["data"]["status"] == "SUCCEEDED", lines[-3:]
    assert types.index("thinking") < types.index("metadata") < types.index("text")
    thinking = "".join(x["data"].get("delta", "") for x in lines if x["type"] == "thinking")
    assert thinking == "The user asks about PASA; search first."
    tools = [
        (x["data"]["name"], x["data"]["status"], x["data"].get("auto", False)) for x in lines if x["type"] == "tool"
    ]
    assert tools == [
        ("search_knowledge_base", "running", True),
        ("search_knowledge_base", "done", True),
        ("search_knowledge_base", "running", False),
        ("search_knowledge_base", "done", False),
        ("calculator", "running", False),
        ("calculator", "done", False),
    ]
    cites = [x for x in lines if x["type"] == "metadata"][-1]["data"]["citations"]
    assert 7 <= len(cites) <= 14  # the question's passages, then the model's own search
    assert {x["document_id"] for x in cites} <= set(docs.values())
    assert all(x["page"] >= 1 and x["text"] and x["n"] == i for i, x in enumerate(cites, 1))
    answer = "".join(x["data"]["delta"] for x in lines if x["type"] == "text")
    assert answer == "PASA is an LLM agent for paper search [1]. The number is 1028."
    memory = next(x["data"] for x in lines if x["type"] == "memory")
    assert memory["budget_chars"] == 48_000
    assert memory["kept"] == 0
    assert memory["line"] == ""
    assert next(x["data"] for x in lines if x["type"] == "grounding") == {
        "grounding": "cited",
        "label": "",
        "cited": [1],
    }
    # the model saw the question's passages first, then the tool results: numbered passages,
    # then the exact arithmetic
    bodies = requests_with(fake_llm, m)
    assert len(bodies) == 4  # thinking + three agent rounds
    assert "Passages from the library for the user's question:\n[1] (" in bodies[1]["messages"][0]["content"]
    assert "tools" not in bodies[0]
    assert [t["function"]["name"] for t in bodies[1]["tools"]] == [
        "search_knowledge_base",
        "list_documents",
        "analyze_document",
        "compare_documents",
        "calculator",
        "current_time",
    ]
    tool_results = [msg["content"] for msg in bodies[3]["messages"] if msg["role"] == "tool"]
    assert re.match(r"\[\d+\] \(", tool_results[0])
    assert json.loads(tool_results[1])["result"] == 1028.0
    # persisted: question + answer with its citations, thinking, status and cost
    conv = c.get(f"/conversations/{run['conversation_id']}").json()
    q, a = conv["messages"]
    assert (q["role"], q["content"]) == ("user", f"What is PASA? {m}")
    assert a["content"] == answer
    assert a["thinking"] == thinking
    assert a["status"] == "complete"
    assert (a["grounding"], a["grounding_label"]) == ("cited", "")
    assert [x["chunk_id"] for x in a["citations"]] == [x["chunk_id"] for x in cites]
    run_view = c.get(f"/runs/{run['id']}").json()
    assert a["charged_credits"] == run_view["charged_credits"] > 0
    assert run_view["usage"]["events"] == 4
    assert any(x["id"] == run["conversation_id"] for x in c.get("/conversations").json()["conversations"])


def test_follow_up_carries_memory_and_editing_rewinds(library, fake_llm):
    c, _docs = library
    m = f"F{uuid.uuid4().hex[:8]}"
    fake_llm.script(Script.thinking(m), Script(text="First answer [1].", match=m))
    first = ask(c, f"First question: what does the PaSa Crawler do? {m}")
    assert follow(c, first["id"])[-1]["data"]["status"] == "SUCCEEDED"
    m2 = f"G{uuid.uuid4().hex[:8]}"
    fake_llm.script(Script.thinking(m2), Script(text="Second answer.", match=m2))
    second = ask(c, f"Follow-up {m2}", conversation_id=first["conversation_id"])
    lines = follow(c, second["id"])
    memory = next(x["data"] for x in lines if x["type"] == "memory")
    assert memory["kept"] == 1
    assert memory["dropped"] == 0
    agent_call = requests_with(fake_llm, m2)[-1]
    roles = [(msg["role"], msg.get("content")) for msg in agent_call["messages"]]
    assert ("user", f"First question: what does the PaSa Crawler do? {m}") in roles
    assert (
        "assistant",
        "First answer [1].",
    ) in roles
    # a second question while one is running is refused; editing the first rewinds
    conv = c.get(f"/conversations/{first['conversation_id']}").json()
    assert [x["role"] for x in conv["messages"]] == ["user", "assistant", "user", "assistant"]
    m3 = f"H{uuid.uuid4().hex[:8]}"
    fake_llm.script(Script.thinking(m3), Script(text="Edited answer [1].", match=m3))
    edited = ask(
        c,
        f"Edited first question: what does the PaSa Selector do? {m3}",
        conversation_id=first["conversation_id"],
        edit_message_id=conv["messages"][0]["id"],
    )
    lines = follow(c, edited["id"])
    assert next(x["data"] for x in lines if x["type"] == "memory")["kept"] == 0
    agent_call = requests_with(fake_llm, m3)[-1]
    assert not any(m in json.dumps(msg) for msg in agent_call["messages"])  # history rewound
    conv = c.get(f"/conversations/{first['conversation_id']}").json()
    assert [x["content"] for x in conv["messages"]] == [
        f"Edited first question: what does the PaSa Selector do? {m3}",
        "Edited answer [1].",
    ]
    # the two earlier exchanges were put aside: switching shows them again (and back)
    assert conv["other_version"] == 2
    cid = first["conversation_id"]
    back = c.post(f"/conversations/{cid}/switch-version").json()
    assert [x["content"] for x in back["messages"]][::2] == [
        f"First question: what does the PaSa Crawler do? {m}",
        f"Follow-up {m2}",
    ]
    assert back["other_version"] == 1
    # a follow-up now carries the restored exchanges as memory, not the edited one
    m4 = f"J{uuid.uuid4().hex[:8]}"
    fake_llm.script(Script.thinking(m4), Script(text="Third answer.", match=m4))
    third = ask(c, f"Another follow-up {m4}", conversation_id=cid)
    assert next(x["data"] for x in follow(c, third["id"]) if x["type"] == "memory")["kept"] == 2
    sent = json.dumps(requests_with(fake_llm, m4)[-1]["messages"])
    assert m in sent
    assert m2 in sent
    assert m3 not in sent
    again = c.post(f"/conversations/{cid}/switch-version").json()
    assert [x["content"] for x in again["messages"]][0].startswith("Edited first question")
    assert again["other_version"] == 3  # the restored version grew by the third exchange
    assert c.post(f"/conversations/{cid}/switch-version").json()["other_version"] == 1


def test_pinned_chat_forces_search_in_its_scope(library, fake_llm):
    c, docs = library
    pinned = docs["pasa.pdf"]
    m = f"P{uuid.uuid4().hex[:8]}"
    # The question is plainly about the pinned paper (a vague one such as "What about
    # discovery?" sat on the relevance floor, so the random marker decided whether the
    # presearch found anything). The model's own query is one both papers answer (the review's
    # deep-learning passages too): only PaSa's are cited.
    fake_llm.script(
        Script.thinking(m),
        Script.tool_call("search_knowledge_base", {"query": "large language models for scientific discovery"}, match=m),
        Script(text="Only PASA here [1].", match=m),
    )
    run = ask(c, f"How is the PaSa Crawler trained? {m}", scope={"document_ids": [pinned]})
    lines = follow(c, run["id"])
    assert lines[-1]["data"]["status"] == "SUCCEEDED"
    metadata = [x["data"]["citations"] for x in lines if x["type"] == "metadata"]
    cites = metadata[-1]
    # the question's passages and the model's own search both stay inside the pinned paper
    assert len(cites) > len(metadata[0])
    assert {x["document_id"] for x in cites} == {pinned}
    first_round = requests_with(fake_llm, m)[1]
    assert first_round["tool_choice"] == "auto"  # the search already happened, in scope
    system = first_round["messages"][0]["content"]
    assert "pinned to part of the library" in system
    assert "Passages from the library" in system
    assert c.get(f"/conversations/{run['conversation_id']}").json()["scope"] == {
        "document_ids": [pinned],
        "collection_ids": [],
    }
    # someone else's (or a made-up) document cannot be pinned
    bad = c.post("/runs", json={"kind": "ask", "prompt": "x", "scope": {"document_ids": ["nope"]}})
    assert bad.status_code == 404


def test_search_with_no_strong_match_tells_the_agent_there_is_nothing(library, fake_llm):
    """Noise that only scores under the relevance floor is neither shown to the model as
    passages nor cited: the tool result says the library has nothing on it."""
    c, _ = library
    m = f"W{uuid.uuid4().hex[:8]}"
    fake_llm.script(
        Script.thinking(m),
        Script.tool_call("search_knowledge_base", {"query": "qwxzzv blorf"}, match=m),
        Script(text="Your library has nothing on that.", match=m),
    )
    run = ask(c, f"Tell me about qwxzzv blorf {m}")
    lines = follow(c, run["id"])
    assert lines[-1]["data"]["status"] == "SUCCEEDED"
    metadata = [x for x in lines if x["type"] == "metadata"]
    assert not metadata or metadata[-1]["data"]["citations"] == []
    answer_round = requests_with(fake_llm, m)[-1]
    tool_results = [msg["content"] for msg in answer_round["messages"] if msg["role"] == "tool"]
    assert tool_results
    assert tool_results[-1].startswith("No strong matches")
    assert "[1]" not in tool_results[-1]


def test_analyze_and_compare_are_direct_model_calls(library, fake_llm):
    c, docs = library
    m = f"A{uuid.uuid4().hex[:8]}"
    analysis = {
        "topics": ["paper search"],
        "entities": ["PASA"],
        "key_facts": ["PASA searches papers."],
        "summary": "An agent for academic search.",
    }
    fake_llm.script(
        Script.thinking(m),
        Script.tool_call("analyze_document", {"document": docs["pasa.pdf"]}, match=m),
        Script.tool_call(
            "compare_documents",
            {
                "a": "pasa",
                "b": docs["explanations-molecular-prediction-models.pdf"],
                "question": "How do they evaluate?",
            },
            match=m,
        ),
        Script(text="They differ [1].", match=m),
        # the direct calls do not carry the question: they take the unmatched scripts in order
        Script(text=json.dumps(analysis)),
        Script(text="PASA uses benchmarks [1]; the other uses attributions [6]."),
    )
    before = len(fake_llm.chat_requests())
    run = ask(c, f"Analyze and compare {m}")
    lines = follow(c, run["id"])
    assert lines[-1]["data"]["status"] == "SUCCEEDED"
    steps = sorted(u["data"]["step"] for u in lines if u["type"] == "usage")
    assert steps == ["agent", "agent", "agent", "analyze_document", "compare_documents", "thinking"]
    bodies = requests_with(fake_llm, m)
    analyze_call = next(
        r["body"]
        for r in fake_llm.chat_requests()[before:]
        if (r["body"].get("response_format") or {}).get("type") == "json_schema"
    )
    schema = analyze_call["response_format"]["json_schema"]["schema"]
    assert sorted(schema["required"]) == ["entities", "key_facts", "summary", "topics"]
    assert "tools" not in analyze_call
    assert "[1] (" in analyze_call["messages"][1]["content"]
    final_round = bodies[-1]
    tool_results = [msg["content"] for msg in final_round["messages"] if msg["role"] == "tool"]
    assert json.loads(tool_results[0])["entities"] == ["PASA"]
    assert tool_results[1] == "PASA uses benchmarks [1]; the other uses attributions [6]."
    cites = [x for x in lines if x["type"] == "metadata"][-1]["data"]["citations"]
    assert {x["document_id"] for x in cites} == set(docs.values())  # compare cited both
    assert next(x["data"] for x in lines if x["type"] == "grounding")["grounding"] == "cited"


def test_cancel_during_a_tool_call_keeps_what_was_written(library, fake_llm):
    c, docs = library
    m = f"C{uuid.uuid4().hex[:8]}"
    fake_llm.script(
        Script.thinking(m),
        Script.tool_call("analyze_document", {"document": docs["pasa.pdf"]}, match=m),
        Script(text="{}", stall_s=30),  # the analysis call (no question in it) hangs
    )
    before = len(fake_llm.chat_requests())
    run = ask(c, f"Analyze slowly {m}")
    deadline = time.monotonic() + 30
    while not any(r["body"].get("response_format") for r in fake_llm.chat_requests()[before:]):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    t0 = time.monotonic()
    assert c.post(f"/runs/{run['id']}/cancel").status_code == 202
    lines = follow(c, run["id"])
    assert time.monotonic() - t0 < 5
    assert lines[-1]["data"]["status"] == "CANCELLED"
    assert ("analyze_document", "running") in [
        (x["data"]["name"], x["data"]["status"]) for x in lines if x["type"] == "tool"
    ]
    view = c.get(f"/runs/{run['id']}").json()
    assert view["status"] == "CANCELLED"
    assert view["charged_credits"] > 0
    answer = c.get(f"/conversations/{run['conversation_id']}").json()["messages"][1]
    assert answer["status"] == "cancelled"
    assert answer["thinking"] == "Let me look this up in the library."


def test_thinking_failure_never_costs_the_answer(library, fake_llm):
    c, _docs = library
    m = f"E{uuid.uuid4().hex[:8]}"
    fake_llm.script(
        Script.error(400, message="reasoning not supported", match=m), Script(text="Still answered [1].", match=m)
    )
    run = ask(c, f"Think hard: what does the PaSa Selector do? {m}")
    lines = follow(c, run["id"])
    assert lines[-1]["data"]["status"] == "SUCCEEDED"
    assert any(x["type"] == "thinking" and "error" in x["data"] for x in lines)
    assert "".join(x["data"]["delta"] for x in lines if x["type"] == "text") == "Still answered [1]."


def test_deleting_the_conversation_mid_run_cancels_and_settles(library, fake_llm):
    c, _docs = library
    m = f"D{uuid.uuid4().hex[:8]}"
    fake_llm.script(Script.thinking(m), Script(text=" ".join(["word"] * 300), tokens_per_s=30, match=m))
    run = ask(c, f"Long answer {m}")
    deadline = time.monotonic() + 30
    while c.get(f"/runs/{run['id']}").json()["status"] != "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert c.delete(f"/conversations/{run['conversation_id']}").status_code == 204
    lines = follow(c, run["id"])
    assert lines[-1]["data"]["status"] == "CANCELLED"
    view = c.get(f"/runs/{run['id']}").json()
    assert view["outcome_reason"] == "resource_deleted"
    assert view["finalized_at"]
    assert c.get(f"/conversations/{run['conversation_id']}").status_code == 404
    assert c.get("/credits").json()["held"] == 0


def test_another_user_cannot_see_or_continue_a_conversation(library, fake_llm, api_base, make_user, app_db_url):
    c, _docs = library
    m = f"I{uuid.uuid4().hex[:8]}"
    fake_llm.script(Script.thinking(m), Script(text="Private.", match=m))
    run = ask(c, f"Private question {m}")
    follow(c, run["id"])
    other = _user(api_base, make_user, app_db_url)
    conv_id = run["conversation_id"]
    assert other.get(f"/conversations/{conv_id}").status_code == 404
    assert other.patch(f"/conversations/{conv_id}", json={"title": "mine"}).status_code == 404
    assert other.delete(f"/conversations/{conv_id}").status_code == 404
    res = other.post("/runs", json={"kind": "ask", "prompt": "hi", "conversation_id": conv_id})
    assert res.status_code == 404
    assert all(x["id"] != conv_id for x in other.get("/conversations").json()["conversations"])
    assert other.get(f"/runs/{run['id']}").status_code == 404
    assert c.get(f"/conversations/{conv_id}").status_code == 200


# ---- grounding with weak models ---------------------------------------------------------------
def grounding_of(lines: list[dict]) -> dict:
    return next(x["data"] for x in lines if x["type"] == "grounding")


def test_a_model_that_never_calls_tools_still_answers_from_the_library(library, fake_llm):
    """No tool call at all (a chat-only model): the question was searched first, the passages
    were in its instructions, and its [n] cite them."""
    c, docs = library
    m = f"N{uuid.uuid4().hex[:8]}"
    fake_llm.script(
        Script.thinking(m, usage=False), Script(text="PaSa has a Crawler and a Selector [1].", match=m, usage=False)
    )
    run = ask(c, f"Which agents make up PaSa? {m}")
    lines = follow(c, run["id"])
    assert lines[-1]["data"]["status"] == "SUCCEEDED"
    agent_rounds = [b for b in requests_with(fake_llm, m) if "tools" in b]
    assert len(agent_rounds) == 1
    assert agent_rounds[0]["tool_choice"] == "auto"
    system = agent_rounds[0]["messages"][0]["content"]
    cites = [x for x in lines if x["type"] == "metadata"][0]["data"]["citations"]
    # sources (the strong matches: passages under the relevance floor are not given) before any text
    assert 1 <= len(cites) <= 7
    assert all(f"[{x['n']}] (" in system for x in cites)
    # after the passages, their sentences ranked for the question (llm/choose.py), each verbatim
    # from the passage its marker names; the answer-bearing one is among the first
    ranked = re.findall(r"^- (.+) \[(\d+)\]$", system.split("best first", 1)[1], re.M)
    texts = {x["n"]: " ".join(x["text"].split()) for x in cites}
    assert 1 <= len(ranked) <= 8, ranked
    assert all(s in texts[int(n)] for s, n in ranked), ranked
    assert any("two LLM agents" in s for s, _ in ranked[:3]), ranked
    assert [x["type"] for x in lines].index("metadata") < [x["type"] for x in lines].index("text")
    assert grounding_of(lines) == {"grounding": "cited", "label": "", "cited": [1]}
    answer = c.get(f"/conversations/{run['conversation_id']}").json()["messages"][1]
    assert answer["content"] == "PaSa has a Crawler and a Selector [1]."
    assert answer["grounding"] == "cited"
    view = c.get(f"/runs/{run['id']}").json()  # the server streamed no usage: estimated, still charged
    assert view["charged_credits"] > 0


def test_an_answer_citing_nothing_is_labelled_and_gets_the_library_quoted(library, fake_llm):
    c, _docs = library
    m = f"U{uuid.uuid4().hex[:8]}"
    invented = "The Crawler decides based on the number of references (n) and the length of reference text."
    fake_llm.script(Script.thinking(m), Script(text=invented, match=m))
    run = ask(c, f"How does the PaSa Crawler expand citations? {m}")
    lines = follow(c, run["id"])
    assert lines[-1]["data"]["status"] == "SUCCEEDED"
    g = grounding_of(lines)
    assert g["grounding"] == "quoted"
    assert g["label"].startswith("No sources cited")
    text = "".join(x["data"]["delta"] for x in lines if x["type"] == "text")
    assert text.startswith(invented + "\n\n**From the library** (quoted verbatim")
    cites = {x["n"]: x for x in [x for x in lines if x["type"] == "metadata"][-1]["data"]["citations"]}
    from bayes_app.chat.grounding import cited_numbers
    from bayes_app.library.quotes import quote_in_text
    from bayes_app.llm.markup import plain

    appended = text.split("):", 1)[1]
    numbers = cited_numbers(appended, set(cites))
    assert numbers  # every quoted sentence is in the passage it cites
    for sentence, n in re.findall(r"\s*(.+?) \[(\d+)\]", appended):
        assert quote_in_text(cites[int(n)]["text"], plain(sentence)), (sentence, n)
    answer = c.get(f"/conversations/{run['conversation_id']}").json()["messages"][1]
    assert answer["content"] == text
    assert answer["grounding"] == "quoted"
    assert answer["grounding_label"].startswith("No sources cited")


def test_a_question_the_library_cannot_support_says_so(library, fake_llm):
    c, _docs = library
    m = f"V{uuid.uuid4().hex[:8]}"
    fake_llm.script(Script.thinking(m), Script(text="Mercury boils at 356.7 degrees Celsius.", match=m))
    run = ask(c, f"What is the boiling point of mercury? {m}")
    lines = follow(c, run["id"])
    g = grounding_of(lines)
    assert g == {
        "grounding": "unsupported",
        "label": "No sources cited: the library doesn't support an answer",
        "cited": [],
    }
    text = "".join(x["data"]["delta"] for x in lines if x["type"] == "text")
    assert text == (
        "Mercury boils at 356.7 degrees Celsius.\n\nThe library doesn't support an answer to this question. "
        "Try other words, or add papers on the topic."
    )
    answer = c.get(f"/conversations/{run['conversation_id']}").json()["messages"][1]
    assert answer["grounding_label"] == g["label"]
    # a model that says so itself is not repeated
    m2 = f"W{uuid.uuid4().hex[:8]}"
    fake_llm.script(
        Script.thinking(m2), Script(text="The library doesn't support an answer to this question.", match=m2)
    )
    lines = follow(c, ask(c, f"What is the boiling point of mercury? {m2}")["id"])
    assert grounding_of(lines)["grounding"] == "unsupported"
    assert "".join(x["data"]["delta"] for x in lines if x["type"] == "text").count("doesn't support") == 1
