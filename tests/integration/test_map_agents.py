"""The map run kinds in-process (executor + real Redis + SQLite + a real index process + real
embeddings of tests/fixtures/papers/pasa.pdf), against the scripted OpenAI-compatible server
(the real `openai` client) and against the offline provider. The two whole pipelines (scripted
and offline) also run on PostgreSQL; the rest is agent logic above the database
(tests/support/backends.py).

Provenance: a scripted claim whose quote is NOT in its passage is rejected, and every stored
agent citation's quote is in its chunk, on its page, at its offsets. Contradiction: scripted
opposing claims become sibling nodes (one a counterpoint) linked by `contradicts`."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from pathlib import Path

import pytest
import redis
from sqlmodel import Session, select

from bayes_app.agents.pipeline import EXTRACTIVE_NOTE
from bayes_app.agents.researcher import RANKED_NOTE
from bayes_app.credits import ledger, pricing
from bayes_app.db import get_engine
from bayes_app.llm.offline import OfflineProvider
from bayes_app.llm.openai_provider import OpenAIProvider
from bayes_app.maps import export, export_tex, service
from bayes_app.maps.runs import start_map_run
from bayes_app.models import MICRO, Citation, Document, MapNode, Mindmap, NodeRelation, UsageEvent
from bayes_app.runs import control, events, executor
from bayes_app.runs import service as run_service
from tests.support import pdfs
from tests.support.backends import SQLITE_ONLY
from tests.support.fake_openai import FakeOpenAI, Script
from tests.support.maplib import assert_provenance, ingest
from tests.support.procs import index_process

MODEL = "gpt-4o-mini"
Q1 = (
    "the decision token is presented before the rationale, allowing the Selector to act as a single-token "
    "reward model during the Crawler training"
)
Q2A = "PaSa-7B surpasses the best Google-based baseline, Google with GPT-4o, by 37.78% in recall@20"
Q2B = "It also exceeds PaSa-GPT-4o by 30.36% in recall"
SELECTOR_CLAIM = "Putting the decision before the rationale lets the Selector act as a single-token reward model."
FAKE_QUOTE = "PaSa guarantees perfect recall on every academic query ever asked."
Q1_DUP = "Additionally, the token probability of the decision token can be used to rank search results."
FIGURE_QUOTE = "Crawler Paper Queue User Query Selector"  # text inside pasa.pdf's Figure 1
ASPECT_QUERIES = {
    "Decision order": pdfs.PASA_P7_PHRASE,
    "Recall against baselines": "PaSa-7B surpasses the best Google-based baseline recall@20",
    "Unanswered aspect": "zebra migration patterns in the Serengeti",
}
FIGURE_ASPECT = {"Agent architecture": "Crawler Paper Queue User Query Selector Select Drop"}


@pytest.fixture(scope="module")
def index_env(tmp_path_factory):
    """A real index process; this process's settings point at it."""
    with index_process(Path(tmp_path_factory.mktemp("mapidx"))) as tmp:
        yield tmp


@pytest.fixture
def env(db_url, redis_server, index_env):
    r = redis.Redis.from_url(redis_server.url_db(13), decode_responses=True)
    listener = control.AbortListener(lambda: redis.Redis.from_url(redis_server.url_db(13), decode_responses=True))
    listener.start()
    listener.subscribed.wait(5)

    def sessions() -> Session:
        return Session(get_engine(db_url), expire_on_commit=False)

    with sessions() as db:
        pricing.set_price(db, MODEL, 150_000, 75_000, 600_000)
        db.commit()
    uid = _funded_user(sessions)
    ingest(sessions, uid, index_env / "files", [pdfs.PASA])
    yield {"sessions": sessions, "r": r, "listener": listener, "user": uid}
    listener.stop()
    r.flushdb()


def _funded_user(sessions) -> str:
    """A new user with 10 credits; their id."""
    from bayes_app.accounts import service as accounts

    with sessions() as db:
        user = accounts.register(db, f"u{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
        db.commit()
        ledger.grant(db, user, 10 * MICRO, f"grant:{user.id}", "test")
        db.commit()
        return user.id


def run(
    env, kind: str, map_id: str, provider_factory, node_id=None, prompt=None, model=MODEL, outcome: str = "SUCCEEDED"
) -> tuple[str, list]:
    sessions, r = env["sessions"], env["r"]
    with sessions() as db:
        op = start_map_run(db, env["user"], kind, map_id, node_id, prompt, model=model, output_tokens=2000)
    res = asyncio.run(
        executor.execute(op.id, r=r, sessions=sessions, listener=env["listener"], provider_factory=provider_factory)
    )
    assert res.started, res
    assert run_service.settle(sessions, r, op.id) == "finalized"
    evs = events.read_range(r, op.id, None, count=100_000)
    with sessions() as db:
        assert db.get(type(op), op.id).status == res.outcome == outcome, [e.to_json() for e in evs if e.type == "error"]
    return op.id, evs


def claims_json(*claims) -> str:
    return json.dumps({"claims": [{"text": t, "quote": q, "passage": n} for t, q, n in claims]})


def passage_no(env, query: str, quote: str, exclude: set[str]) -> tuple[int, set[str]]:
    """Where the researcher will see the chunk holding `quote` (the same retrieval it runs)."""
    from bayes_app.agents.retrieval import _search
    from bayes_app.library.quotes import quote_in_text

    hits = [
        (h, raw)
        for h, raw, *_ in _search(env["sessions"], env["user"], query, 6 + len(exclude))
        if h.chunk_id not in exclude
    ][:6]
    n = next(i for i, (h, raw) in enumerate(hits, 1) if quote_in_text(raw, quote))
    return n, {h.chunk_id for h, _ in hits}


def test_scripted_build_map_provenance_and_contradiction(env):
    sessions = env["sessions"]
    n1, seen = passage_no(env, ASPECT_QUERIES["Decision order"], Q1, set())
    n2a, seen2 = passage_no(env, ASPECT_QUERIES["Recall against baselines"], Q2A, seen)
    n2b, _ = passage_no(env, ASPECT_QUERIES["Recall against baselines"], Q2B, seen)
    n_fig, _ = passage_no(env, FIGURE_ASPECT["Agent architecture"], FIGURE_QUOTE, seen | seen2)
    plan = {"aspects": [{"title": t, "query": q} for t, q in {**ASPECT_QUERIES, **FIGURE_ASPECT}.items()]}
    with FakeOpenAI() as fake:
        fake.script(*_scripted_build(plan, n1, n2a, n2b, n_fig))
        with sessions() as db:
            m = service.create_map(db, env["user"], "PaSa", "How does PaSa search papers?")
        op_id, evs = run(env, "build_map", m["id"], lambda: OpenAIProvider(fake.base_url, "test-key"))
        chat = fake.chat_requests()

    # the fabricated quote was rejected by the critic, with the reason
    rejected = {x["quote"]: x["reason"] for e in evs if e.type == "agent" for x in e.data.get("rejected", [])}
    assert rejected == {FAKE_QUOTE: "quote_not_in_passage", FIGURE_QUOTE: "not_body_text"}
    merged = [x for e in evs if e.type == "agent" for x in e.data.get("merged", [])]
    with sessions() as db:
        nodes = db.exec(select(MapNode).where(MapNode.map_id == m["id"])).all()
        cits = db.exec(select(Citation).where(Citation.map_id == m["id"])).all()
        extractive = {c.node_id for c in cits if c.agent == "extractive"}
        assert assert_provenance(db, m["id"]) == 4 + sum(c.agent == "extractive" for c in cits)
        assert not any("always finds" in n.title or "paper queue that" in n.title for n in nodes)
        # the repeated claim is one node with both passages cited
        [decision] = [n for n in nodes if n.title.startswith("Putting the decision")]
        assert [x for x in merged if x["into"] not in extractive] == [{"text": decision.title, "into": decision.id}]
        assert {c.quote for c in db.exec(select(Citation).where(Citation.node_id == decision.id))} == {Q1, Q1_DUP}
        # a theme is written with its first claim: the aspect that found nothing has none; the
        # figure-text aspect holds only sentences quoted verbatim from body text, marked as such
        themes = {n.title: n for n in nodes if n.kind == "theme"}
        assert sorted(themes) == ["Agent architecture", "Decision order", "Recall against baselines"]
        fig = [n for n in nodes if n.parent_id == themes["Agent architecture"].id]
        assert fig
        assert {n.id for n in fig} == extractive
        assert all(n.body == EXTRACTIVE_NOTE and "[Search]" not in n.title for n in fig)
        # contradiction: siblings, one of them a counterpoint, linked by `contradicts`
        hi = next(n for n in nodes if n.title.startswith("PaSa-7B achieves higher"))
        lo = next(n for n in nodes if n.title.startswith("PaSa-7B achieves lower"))
        assert hi.parent_id == lo.parent_id
        assert (hi.kind, lo.kind) == ("claim", "counterpoint")
        assert lo.order_index == hi.order_index + 1
        rel = db.exec(select(NodeRelation).where(NodeRelation.map_id == m["id"])).one()
        assert (rel.source_id, rel.target_id, rel.kind) == (lo.id, hi.id, "contradicts")
        assert all(n.run_id == op_id for n in nodes if n.created_by == "agent")
        assert lo.confidence == 0.2  # the critic's support score
    # every committed node was announced on the run's stream, in commit order
    node_events = [e.data for e in evs if e.type == "node" and not e.data.get("updated")]
    assert {e["id"] for e in node_events} == {n.id for n in nodes if n.created_by == "agent"}
    # the aspect without evidence was researched at most 3 times (3 passes), no more
    unanswered = [c for c in chat if "ASPECT: Unanswered aspect" in c["body"]["messages"][-1]["content"]]
    assert len(unanswered) == 3
    _assert_structured_calls(chat)


def _scripted_build(plan: dict, n1: int, n2a: int, n2b: int, n_fig: int) -> list[Script]:
    """The model's replies for the scripted build: the plan, each aspect's claims, the critic's scores."""
    return [
        Script.reply(json.dumps(plan), match="ROLE: planner"),
        Script.reply(
            claims_json(
                (SELECTOR_CLAIM, Q1, n1),
                ("PaSa always finds every paper.", FAKE_QUOTE, n1),
                # the same claim again, citing another sentence: merged into the first node
                (SELECTOR_CLAIM, Q1_DUP, n1),
            ),
            match="ASPECT: Decision order",
        ),
        Script.reply(
            json.dumps({"scores": [{"claim": 1, "support": 0.9, "rewrite": None}], "contradictions": []}),
            match="ROLE: critic",
        ),
        Script.reply(
            claims_json(
                ("PaSa-7B achieves higher recall than Google with GPT-4o.", Q2A, n2a),
                ("PaSa-7B achieves lower recall than Google with GPT-4o.", Q2B, n2b),
            ),
            match="ASPECT: Recall against baselines",
        ),
        Script.reply(
            json.dumps(
                {
                    "scores": [
                        {"claim": 2, "support": 0.95},
                        {"claim": 3, "support": 0.2, "rewrite": "PaSa-7B beats PaSa-GPT-4o on recall."},
                    ],
                    "contradictions": [[2, 3]],
                }
            ),
            match="ROLE: critic",
        ),
        # a claim quoting the text inside a figure: rejected; the aspect falls back to quoted sentences
        Script.reply(
            claims_json(("The Crawler feeds a paper queue that the Selector reads.", FIGURE_QUOTE, n_fig)),
            match="ASPECT: Agent architecture",
        ),
    ]


def _assert_structured_calls(chat: list[dict]) -> None:
    """Structured output: every call carried its JSON schema (the endpoint took json_schema)."""
    assert all(c["body"]["response_format"]["type"] == "json_schema" for c in chat)
    researcher_call = next(c["body"] for c in chat if "ASPECT: Decision order" in c["body"]["messages"][-1]["content"])
    schema = researcher_call["response_format"]["json_schema"]["schema"]
    ids = schema["properties"]["claims"]["items"]["properties"]["sentences"]["items"]["enum"]
    assert "1.1" in ids
    assert all(f"[{i}] " in researcher_call["messages"][-1]["content"] for i in ids)
    # the sentences ranked by the focus score offline claims use, best first (ids shown above)
    ranked = researcher_call["messages"][-1]["content"].split(RANKED_NOTE + " ")[1].split("\n")[0].split(", ")
    assert 1 <= len(ranked) <= 8
    assert set(ranked) <= set(ids)
    assert all("{" not in c["body"]["messages"][0]["content"] for c in chat)  # no example object to echo


def test_offline_map_runs_and_export(env):
    sessions = env["sessions"]
    with sessions() as db:
        # the root holds the question (a prompt that differs becomes a theme of its own: issue 36.3)
        m = service.create_map(db, env["user"], "Paper search agents", "How do LLM agents search for academic papers?")
    mid = m["id"]
    _, evs = run(
        env, "build_map", mid, OfflineProvider, prompt="How do LLM agents search for academic papers?", model="offline"
    )
    with sessions() as db:
        assert db.get(Mindmap, mid).offline
        view = service.map_view(db, env["user"], mid)
        n_cits = assert_provenance(db, mid)
    themes = [n for n in view["nodes"] if n["kind"] == "theme"]
    claims = [n for n in view["nodes"] if n["kind"] in ("claim", "counterpoint")]
    assert 3 <= len(themes) <= 8
    assert len(claims) >= 3
    assert n_cits >= len(claims)
    assert view["nodes"][0]["title"] == "How do LLM agents search for academic papers?"

    # deepen a theme, counter-evidence for a claim, restructure, chapters, synthesize, message
    theme = themes[0]["id"]
    run(env, "deepen", mid, OfflineProvider, node_id=theme, model="offline")
    run(env, "counter", mid, OfflineProvider, node_id=claims[0]["id"], model="offline")
    _, evs = run(env, "restructure", mid, OfflineProvider, model="offline")
    [prop] = [e.data for e in evs if e.type == "proposal"]
    assert prop["kind"] == "restructure"
    assert prop["payload"]["groups"]
    _, evs = run(env, "chapters", mid, OfflineProvider, model="offline")
    [chap] = [e.data for e in evs if e.type == "proposal"]
    with sessions() as db:
        service.accept_proposal(db, env["user"], mid, chap["id"])
        service.reject_proposal(db, env["user"], mid, prop["id"])
        root = service.root_of(db, mid)
        tops = db.exec(select(MapNode).where(MapNode.parent_id == root.id)).all()
        assert tops
        assert all(n.kind == "chapter" for n in tops)
    _, evs = run(env, "synthesize", mid, OfflineProvider, model="offline")
    text = "".join(e.data["delta"] for e in evs if e.type == "text")
    assert "[1]" in text
    _, evs = run(env, "message", mid, OfflineProvider, prompt="add a note Check the PaSa benchmark", model="offline")
    assert [e.data["route"] for e in evs if e.type == "route"] == ["edit"]
    _, evs = run(
        env, "message", mid, OfflineProvider, prompt="What does the map say about the Crawler?", model="offline"
    )
    assert [e.data["route"] for e in evs if e.type == "route"] == ["answer"]
    assert any(e.type == "text" for e in evs)

    with sessions() as db:
        assert assert_provenance(db, mid) >= n_cits
        nodes = db.exec(select(MapNode).where(MapNode.map_id == mid)).all()
        assert any(n.title == "Check the PaSa benchmark" and n.kind == "note" for n in nodes)
        # the saved synthesis carries the passages it cites as its own citations, its markers [k]
        # numbering them (the export renumbers them by paper)
        [synth] = [n for n in nodes if n.title.startswith("Synthesis:")]
        synth_cits = db.exec(select(Citation).where(Citation.node_id == synth.id)).all()
        assert synth_cits
        assert all(c.agent == "synthesize" for c in synth_cits)
        used = {int(k) for m in re.findall(r"(?<!\\)\[(\d+(?:, \d+)*)\]", synth.body) for k in m.split(", ")}
        assert used == set(range(1, len(synth_cits) + 1)), synth.body
        md = export.markdown(db, env["user"], mid)
        bib = export_tex.bibtex(db, env["user"], mid)
        docx = export.docx_bytes(db, env["user"], mid)
    _assert_exports(md, bib, docx)


def _assert_exports(md: str, bib: str, docx: bytes) -> None:
    """The offline map's Markdown (APA references), BibTeX and DOCX exports."""
    assert md.startswith("# How do LLM agents")
    assert "## References" in md
    assert "(2025). PaSa" in md  # APA
    assert "offline mode" in md
    # an arXiv preprint (its first page's stamp): @misc with the eprint id, never a made-up journal
    assert bib.count("@misc{") == 1
    assert "@article" not in bib
    assert "year = {2025}" in bib
    assert "Yichen He" in bib
    assert "eprint = {2501.10120}" in bib
    assert docx[:2] == b"PK"
    import io

    from docx import Document as Docx

    paras = "\n".join(p.text for p in Docx(io.BytesIO(docx)).paragraphs)
    assert "References" in paras
    assert re.search(r"\[1, pp?\. \d+", paras)


@SQLITE_ONLY
def test_model_judged_check_support_is_one_billed_run(env):
    """With a model, check-support is a `check_support` run: the model's judgement is stored on
    the citation (the rewrite keeps acronyms as the model wrote them), one credit row."""
    from bayes_app.library.quotes import quote_in_text
    from bayes_app.maps import citations
    from bayes_app.models import Chunk, LedgerEntry, Run

    sessions = env["sessions"]
    with sessions() as db:
        chunk = next(
            c for c in db.exec(select(Chunk).where(Chunk.owner_id == env["user"])) if quote_in_text(c.text, Q2A)
        )
        m = service.create_map(db, env["user"], "Support", "How good is PaSa?")
        root = service.map_view(db, env["user"], m["id"])["root_id"]
        node = service.add_child(db, env["user"], m["id"], root, "PaSa-7B always beats every baseline.", kind="claim")
        citations.attach_citation(db, env["user"], m["id"], node["id"], chunk.id, Q2A)
    rewrite = "PaSa-7B beats Google with GPT-4o by 37.78% in recall@20."
    with FakeOpenAI(
        Script.reply(
            json.dumps({"scores": [{"quote": 1, "support": 0.4, "rewrite": rewrite}]}), match="ROLE: check_support"
        )
    ) as fake:
        op_id, evs = run(
            env, "check_support", m["id"], lambda: OpenAIProvider(fake.base_url, "test-key"), node_id=node["id"]
        )
        [req] = fake.chat_requests()
    assert "Claim: PaSa-7B always beats every baseline." in req["body"]["messages"][-1]["content"]
    assert Q2A in req["body"]["messages"][-1]["content"]
    [checked] = [e.data["checked"] for e in evs if e.type == "agent" and "checked" in e.data]
    assert checked[0]["judged_by"] == "model"
    with sessions() as db:
        [c] = db.exec(select(Citation).where(Citation.node_id == node["id"])).all()
        assert (c.support_score, c.support_label, c.suggested_rewrite, c.agent) == (0.4, "partial", rewrite, "critic")
        op = db.get(Run, op_id)
        assert op.kind == "check_support"
        assert op.title == "Check support · Support"
        assert op.charged_credits > 0
        spent = db.exec(
            select(LedgerEntry).where(LedgerEntry.operation_id == op_id, LedgerEntry.entry_type == "spend")
        ).all()
        assert len(spent) == 1
        assert -spent[0].amount == op.charged_credits


# ---- weak models: provenance by selection, echoes, junk ids, no structured output ----------------
ECHO = json.dumps({"claims": [{"text": "the claim in your words", "quote": "verbatim quote", "passage": 1}]})
IRRELEVANT = {
    "Zebra migration": "zebra migration patterns in the Serengeti",
    "Volcanic soil": "volcanic soil fertility on Mount Etna",
    "Medieval bread": "bread prices in medieval Flanders",
}


def sentence_id(env, query: str, quote: str, exclude: set[str]) -> tuple[str, str, set[str]]:
    """The id the researcher's numbered passages give the sentence holding `quote`, the
    sentence, and the chunks of that passage list."""
    from bayes_app.agents.retrieval import _search, prompt_text
    from bayes_app.library.quotes import quote_in_text
    from bayes_app.llm.sentences import sentences_of

    hits = [
        (h, raw)
        for h, raw, *_ in _search(env["sessions"], env["user"], query, 6 + len(exclude))
        if h.chunk_id not in exclude
    ][:6]
    for i, (_h, raw) in enumerate(hits, 1):
        for sent in sentences_of(i, prompt_text(raw)):
            if quote_in_text(sent.text, quote):
                return sent.id, sent.text, {h.chunk_id for h, _ in hits}
    raise AssertionError(f"{quote!r} is in no sentence of the passages for {query!r}")


@SQLITE_ONLY
def test_weak_model_ids_junk_and_echoes_degrade_to_verified_claims(env):
    """Claims select sentences by id (the quote is the sentence, verbatim); junk ids, wording
    that is no words, and the echoed example of old prompts are rejected with their reason; an
    aspect the model gave nothing usable on gets quoted sentences marked extractive; a theme
    left with nothing is removed; a server streaming no usage is billed by estimate."""
    from bayes_app.agents.pipeline import EXTRACTIVE_NOTE
    from bayes_app.llm import structured

    structured.forget()
    sessions = env["sessions"]
    sid, sentence, seen = sentence_id(env, ASPECT_QUERIES["Decision order"], Q1, set())
    plan = {"aspects": [{"title": t, "query": q} for t, q in ASPECT_QUERIES.items()]}
    a_text = "Putting the decision before the rationale lets the Selector act as a one-token reward model."
    ids_reply = json.dumps(
        {
            "claims": [
                {"text": a_text, "sentences": [sid, "99.1", "x"]},  # one valid id among junk: kept
                {"text": "PaSa guarantees perfect recall.", "sentences": ["42.7", "0.0"]},  # only junk ids
                {"text": "2.1", "sentences": [sid]},  # no wording: an id where the claim should be
            ]
        }
    )
    with FakeOpenAI() as fake:
        fake.script(
            Script.reply(json.dumps(plan), match="ROLE: planner", usage=False),
            Script.reply(ids_reply, match="ASPECT: Decision order", usage=False),
            Script.reply(json.dumps({"scores": [], "contradictions": []}), match="ROLE: critic", usage=False, times=-1),
            Script.reply(ECHO, match="ASPECT: Recall against baselines", usage=False, times=3),
            Script.reply(
                "Sure! Here are the claims you asked for.", match="ASPECT: Unanswered aspect", usage=False, times=3
            ),
        )
        with sessions() as db:
            m = service.create_map(db, env["user"], "PaSa", "How does PaSa search papers?")
        op_id, evs = run(env, "build_map", m["id"], lambda: OpenAIProvider(fake.base_url, "test-key"))
        calls = fake.chat_requests()

    rejected = [x for e in evs if e.type == "agent" for x in e.data.get("rejected", [])]
    reasons = sorted(x["reason"] for x in rejected)
    assert reasons == ["no_wording", "unknown_sentence"] + ["wording_not_in_quote"] * 3, rejected
    done = next(e.data for e in evs if e.type == "agent" and e.data.get("done"))
    assert done["rejected_by_reason"] == {"no_wording": 1, "unknown_sentence": 1, "wording_not_in_quote": 3}
    assert done["claims_extractive"] >= 1
    with sessions() as db:
        nodes = db.exec(select(MapNode).where(MapNode.map_id == m["id"])).all()
        cits = {c.node_id: c for c in db.exec(select(Citation).where(Citation.map_id == m["id"]))}
        assert assert_provenance(db, m["id"]) == len(cits)
        usage = db.exec(select(UsageEvent).where(UsageEvent.operation_id == op_id)).all()
    themes = {n.title: n for n in nodes if n.kind == "theme"}
    assert sorted(themes) == ["Decision order", "Recall against baselines"]  # the empty one went
    claims = [n for n in nodes if n.kind == "claim"]
    assert all(any(c.parent_id == t.id for c in claims) for t in themes.values())  # no empty theme
    # the model's claim: its words, the whole selected sentence as the quote
    [a] = [n for n in claims if n.parent_id == themes["Decision order"].id]
    assert a.title == a_text
    assert cits[a.id].quote == sentence
    assert cits[a.id].agent in ("researcher", "critic")
    # the echoing aspect: sentences quoted verbatim, marked as extractive on the node
    quoted = [n for n in claims if n.parent_id == themes["Recall against baselines"].id]
    assert quoted
    assert all(
        cits[n.id].agent == "extractive" and n.body == EXTRACTIVE_NOTE and n.title == cits[n.id].quote for n in quoted
    )
    assert any("recall" in n.title.lower() for n in quoted)
    # no usage streamed: every call billed by estimate, each with its prompt counted
    assert len(usage) == len(calls)
    assert all(u.estimated and u.input_tokens > 0 for u in usage)


@SQLITE_ONLY
def test_nothing_usable_ends_the_run_failed_not_an_empty_success(env):
    from bayes_app.llm import structured
    from bayes_app.models import Run

    structured.forget()
    sessions = env["sessions"]
    plan = {"aspects": [{"title": t, "query": q} for t, q in IRRELEVANT.items()]}
    with FakeOpenAI(Script.reply(json.dumps(plan), match="ROLE: planner"), default=Script(text=ECHO, times=-1)) as fake:
        with sessions() as db:
            m = service.create_map(db, env["user"], "PaSa", "Zebra, volcanoes and bread?")
        op_id, evs = run(env, "build_map", m["id"], lambda: OpenAIProvider(fake.base_url, "test-key"), outcome="FAILED")
    [err] = [e.data for e in evs if e.type == "error"]
    assert err["code"] == "no_usable_claims"
    assert "no usable claims" in err["message"]
    with sessions() as db:
        op = db.get(Run, op_id)
        assert op.outcome_reason == "no_usable_claims"  # the calls were made
        assert op.charged_credits > 0
        nodes = db.exec(select(MapNode).where(MapNode.map_id == m["id"])).all()
    assert [n.kind for n in nodes] == ["question"]  # no empty theme left behind


@SQLITE_ONLY
@pytest.mark.parametrize(
    ("refused", "expected"),
    [
        # llama-cpp-python: json_schema is a validation error (HTTP 500); JSON mode takes a schema
        (
            {
                "json_schema": (
                    500,
                    "1 validation error: ('body', 'response_format', 'type') Input should be 'text' or 'json_object'",
                )
            },
            "json_object_schema",
        ),
        # an endpoint with JSON mode only
        (
            {
                "json_schema": (400, "response_format json_schema is not supported"),
                "json_object_schema": (400, "unknown field: schema"),
            },
            "json_object",
        ),
    ],
)
def test_endpoint_without_json_schema_falls_back_once(env, refused, expected):
    from bayes_app.llm import structured
    from tests.support.fake_openai import format_key

    structured.forget()
    sessions = env["sessions"]
    sid, _sentence, _ = sentence_id(env, ASPECT_QUERIES["Decision order"], Q1, set())
    plan = {"aspects": [{"title": t, "query": q} for t, q in ASPECT_QUERIES.items()]}
    with FakeOpenAI() as fake:
        fake.refuse_formats(refused)
        fake.script(
            Script.reply(json.dumps(plan), match="ROLE: planner"),
            Script.reply(
                json.dumps(
                    {"claims": [{"text": "The decision token comes before the rationale.", "sentences": [sid]}]}
                ),
                match="ASPECT: Decision order",
            ),
            Script.reply(json.dumps({"scores": [], "contradictions": []}), match="ROLE: critic", times=-1),
        )
        with sessions() as db:
            m = service.create_map(db, env["user"], "PaSa", "How does PaSa search papers?")
        run(env, "build_map", m["id"], lambda: OpenAIProvider(fake.base_url, "test-key"))
        calls = fake.chat_requests()
    keys = [format_key(c["body"]) for c in calls]
    first_ok = keys.index(expected)
    # the refused levels were tried once, by the first call only (retried when HTTP 500)
    assert set(keys[:first_ok]) == set(refused)
    assert all(k == expected for k in keys[first_ok:])
    assert "ROLE: planner" in calls[first_ok]["body"]["messages"][-1]["content"]
    if expected == "json_object_schema":
        assert calls[first_ok]["body"]["response_format"]["schema"]["required"] == ["aspects"]
    with sessions() as db:
        assert any(
            n.title == "The decision token comes before the rationale."
            for n in db.exec(select(MapNode).where(MapNode.map_id == m["id"]))
        )


@SQLITE_ONLY
def test_each_role_calls_its_own_model(env):
    """BAYES_MODEL_<ROLE>: the run carries a model per role (each must be priced, else 409),
    and each call goes to its role's model."""
    from bayes_app.llm import structured
    from bayes_app.runs.service import RunRequestError

    structured.forget()
    sessions = env["sessions"]
    roles = {"planner": "tiny-planner", "researcher": "tiny-researcher", "critic": "big-critic", "writer": MODEL}
    with sessions() as db:
        m = service.create_map(db, env["user"], "PaSa", "How does PaSa search papers?")
        with pytest.raises(RunRequestError) as err:
            start_map_run(db, env["user"], "build_map", m["id"], model=MODEL, output_tokens=100, role_models=roles)
        assert err.value.status == 409
        assert "big-critic" in err.value.message  # the first unpriced, by name
        for name in ("tiny-planner", "tiny-researcher", "big-critic"):
            pricing.set_price(db, name, 10_000, 5_000, 40_000)
        db.commit()
        op = start_map_run(db, env["user"], "build_map", m["id"], model=MODEL, output_tokens=100, role_models=roles)
        assert op.input["models"] == roles
    sid, _sentence, _ = sentence_id(env, ASPECT_QUERIES["Decision order"], Q1, set())
    plan = {"aspects": [{"title": t, "query": q} for t, q in ASPECT_QUERIES.items()]}
    with FakeOpenAI(
        Script.reply(json.dumps(plan), match="ROLE: planner"),
        Script.reply(
            json.dumps({"claims": [{"text": "The decision token precedes the rationale.", "sentences": [sid]}]}),
            match="ASPECT: Decision order",
        ),
        default=Script(text=json.dumps({"scores": [], "contradictions": []}), times=-1),
    ) as fake:
        res = asyncio.run(
            executor.execute(
                op.id,
                r=env["r"],
                sessions=sessions,
                listener=env["listener"],
                provider_factory=lambda: OpenAIProvider(fake.base_url, "k"),
            )
        )
        calls = [c["body"] for c in fake.chat_requests()]
    assert res.outcome == "SUCCEEDED", res
    by_role = {"ROLE: planner": "tiny-planner", "ROLE: researcher": "tiny-researcher", "ROLE: critic": "big-critic"}
    for body in calls:
        role = next(k for k in by_role if body["messages"][-1]["content"].startswith(k))
        assert body["model"] == by_role[role], (role, body["model"])
    assert {b["model"] for b in calls} == {"tiny-planner", "tiny-researcher", "big-critic"}
    with sessions() as db:
        models = {u.model for u in db.exec(select(UsageEvent).where(UsageEvent.operation_id == op.id))}
    assert models == {"tiny-planner", "tiny-researcher", "big-critic"}  # priced per role


@SQLITE_ONLY
def test_a_map_over_a_scanned_paper_quotes_it(env, index_env):
    """Issue 39: OCR'd pages get the structure analysis of a text layer, so a Research run over
    a library holding only a scanned paper quotes it, verbatim on its pages."""
    from bayes_app.library.ingest import OcrOptions
    from tests.support import scans

    sessions = env["sessions"]
    uid = _funded_user(sessions)
    scan = index_env / "scanned-pasa.pdf"
    scan.write_bytes(scans.mixed_pdf("pasa.pdf", {1, 2, 3, 4}, pages=4))
    [doc_id] = ingest(sessions, uid, index_env / "files", [scan], ocr_options=OcrOptions())
    with sessions() as db:
        assert db.get(Document, doc_id).status == "indexed"
    question = "How does PaSa search for academic papers?"
    with sessions() as db:
        mid = service.create_map(db, uid, "Scanned", question)["id"]
    run({**env, "user": uid}, "build_map", mid, OfflineProvider, prompt=question, model="offline")
    with sessions() as db:
        n_cits = assert_provenance(db, mid)
        cited = {c.document_id for c in db.exec(select(Citation).where(Citation.map_id == mid))}
        claims = [n.title for n in db.exec(select(MapNode).where(MapNode.map_id == mid, MapNode.kind == "claim"))]
    # the same four pages as a text layer give 8; before OCR'd line-end hyphens were marked as a
    # text layer's are, quotes with "rele- vant" failed the provenance check and 2 were left
    assert n_cits >= 5, claims
    assert cited == {doc_id}, claims
    assert not any("http" in c for c in claims), claims  # footnote URLs run into a sentence are cut
