"""Living maps (issue 30, items 1, 2, 4) on SQLite and PostgreSQL with real Redis, a real index
process, real embeddings and generated PDFs; runs execute in-process on the offline provider.

- a paper relevant to one of two watching maps gives exactly one update proposal, on that map;
  accepting some of its items writes exactly those claims where the preview put them (one undo
  step reverts it), rejecting writes nothing;
- 20 papers arriving in one sync are one batch: one update run and one proposal per map;
- a theme passing the split threshold gets a split proposal whose accept makes sub-themes;
- an accepted counterpoint marks the older claim "superseded by <paper>" with the arrival date.
"""

from __future__ import annotations

import asyncio
import io
import textwrap
import uuid
from pathlib import Path

import pytest
import redis
from sqlmodel import Session, select

from bayes_app.credits import ledger
from bayes_app.db import get_engine
from bayes_app.library import documents as lib
from bayes_app.library import storage
from bayes_app.library.ingest import ingest_document
from bayes_app.llm.offline import OfflineProvider
from bayes_app.maps import arrivals, crowding, service, updates
from bayes_app.models import MICRO, Citation, Document, MapNode, MapProposal, NodeRelation, Operation
from bayes_app.runs import control, executor
from bayes_app.runs import service as run_service
from tests.support.mapchecks import name_checks
from tests.support.procs import index_process
from tests.support.tiny_pdf import text_pdf

AGENTS = [
    "The crawler agent expands the search by following the citations of the papers it has found.",
    "Citation expansion raised the recall of relevant papers from 41 percent to 63 percent on the benchmark.",
    "The selector model ranks each candidate paper by reading its title and abstract against the query.",
    "Agents that issue several rewritten search queries find more relevant academic papers than one keyword search.",
    "Reinforcement learning with a recall reward improved the crawler agent more than supervised fine-tuning.",
]
CORAL = [
    "Coral bleaching followed every marine heatwave that lasted longer than four weeks on the reef.",
    "Water temperature two degrees above the summer maximum expelled the symbiotic algae from the corals.",
    "Ocean acidification slowed the calcification of young coral colonies by 15 percent in the tank experiments.",
    "Reefs shaded by turbid water bleached less than reefs in clear water during the 2016 heatwave.",
    "Bleached colonies that regained their algae within two months mostly survived the event.",
]


def _pdf(title: str, sentences: list[str], seed: int) -> bytes:
    lines = [f"Study {seed}: {title}."]
    for s in sentences[seed % len(sentences) :] + sentences[: seed % len(sentences)]:
        lines += textwrap.wrap(s, 80) + [""]
    return text_pdf(f"{title} {seed}", lines)


@pytest.fixture(scope="module")
def index_env(tmp_path_factory):
    """A real index process; this process's settings point at it."""
    with index_process(Path(tmp_path_factory.mktemp("livingidx"))) as tmp:
        yield tmp


class RecordingQueue:
    """The use cases' queue: runs and batches are recorded (the test executes them itself)."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.batches: list[tuple[str, float, float]] = []

    def run(self, op_id: str) -> None:
        self.runs.append(op_id)

    def living_batch(self, owner_id: str, started_at: float, delay_s: float) -> None:
        self.batches.append((owner_id, started_at, delay_s))


@pytest.fixture
def env(db_url, redis_server, index_env, configure):
    from bayes_app.accounts import service as accounts
    from bayes_app.usecases import queue

    url = redis_server.url_db(12)
    configure(DATABASE_URL=db_url, REDIS_URL=url, BAYES_LIVING_BATCH_S="5")
    r = redis.Redis.from_url(url, decode_responses=True)
    listener = control.AbortListener(lambda: redis.Redis.from_url(url, decode_responses=True))
    listener.start()
    listener.subscribed.wait(5)
    q = RecordingQueue()
    saved = queue._queue
    queue.use(q)

    def sessions() -> Session:
        return Session(get_engine(db_url), expire_on_commit=False)

    with sessions() as db:
        user = accounts.register(db, f"l{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
        db.commit()
        ledger.grant(db, user, 10 * MICRO, f"grant:{user.id}", "test")
        db.commit()
        uid = user.id
    yield {"sessions": sessions, "r": r, "listener": listener, "user": uid, "queue": q, "files": index_env / "files"}
    queue._queue = saved
    listener.stop()
    r.flushdb()


def _ingest(env, name: str, data: bytes) -> str:
    from bayes_app.search import runtime

    stored = storage.store_stream(env["files"], io.BytesIO(data), 20 << 20)
    with env["sessions"]() as db:
        doc, _ = lib.add_upload(db, env["user"], name, stored, None)
        db.commit()
        doc_id, gen = doc.id, doc.ingest_generation
    ingest_document(
        env["sessions"], doc_id, gen, files_root=env["files"], index=runtime.index(), embedder=runtime.embedder()
    )
    return doc_id


def _map(env, question: str, themes: dict[str, list[str]]) -> tuple[str, dict[str, str]]:
    ids: dict[str, str] = {}
    with env["sessions"]() as db:
        mid = service.create_map(db, env["user"], question, question)["id"]
        root = service.root_of(db, mid)
        for theme, claims in themes.items():
            t, _ = service.write_agent_node(db, mid, root.id, "theme", theme, run_id="seed")
            ids[theme] = t.id
            for c in claims:
                n, _ = service.write_agent_node(db, mid, t.id, "claim", c, run_id="seed")
                ids[c] = n.id
    return mid, ids


def _execute(env, op_id: str) -> None:
    res = asyncio.run(
        executor.execute(
            op_id, r=env["r"], sessions=env["sessions"], listener=env["listener"], provider_factory=OfflineProvider
        )
    )
    assert res.started, res
    assert res.outcome == "SUCCEEDED", res
    assert run_service.settle(env["sessions"], env["r"], op_id) == "finalized"


def _agents_map(env) -> tuple[str, dict[str, str]]:
    return _map(
        env,
        "How do LLM agents search for academic papers?",
        {
            "Crawler and citation expansion": ["A crawler agent follows references to find more papers."],
            "Selector and ranking of papers": ["A selector scores whether a paper matches the query."],
        },
    )


def _coral_map(env) -> tuple[str, dict[str, str]]:
    return _map(
        env,
        "What causes coral reef bleaching?",
        {
            "Ocean temperature": ["Heat stress makes corals expel their algae."],
            "Acidification": ["Lower pH weakens coral skeletons."],
        },
    )


def _proposals(env, mid: str) -> list[MapProposal]:
    with env["sessions"]() as db:
        return list(db.exec(select(MapProposal).where(MapProposal.map_id == mid, MapProposal.kind == "update")))


def _nodes(env, mid: str) -> dict[str, MapNode]:
    with env["sessions"]() as db:
        return {n.id: n for n in db.exec(select(MapNode).where(MapNode.map_id == mid))}


def test_a_relevant_paper_updates_only_its_map_through_a_previewed_proposal(env):
    from bayes_app.usecases import living

    a, a_ids = _agents_map(env)
    b, _ = _coral_map(env)
    doc = _ingest(env, "agents.pdf", _pdf("LLM agents for academic paper search", AGENTS, 1))
    living.note_indexed(doc)
    assert [x[0] for x in env["queue"].batches] == [env["user"]]  # one delayed batch scheduled
    started = living.propose_updates(env["user"], env["queue"].batches[0][1])
    assert len(started) == 1
    assert env["queue"].runs == started
    with env["sessions"]() as db:
        op = db.get(Operation, started[0])
        assert op.kind == "update_map"
        assert op.resource_id == a
        assert op.input["document_ids"] == [doc]
    before = _nodes(env, a)
    _execute(env, started[0])
    assert _nodes(env, a).keys() == before.keys()  # the run writes nothing but the proposal
    assert _proposals(env, b) == []
    (p,) = _proposals(env, a)
    items = p.payload["items"]
    assert p.payload["documents"][0]["id"] == doc
    assert len(items) >= 2
    for it in items:  # the preview: which claim, where, from which paper
        assert it["document_id"] == doc
        assert it["quote"]
        assert it["action"] in ("insert", "create", "counter")
        if it["action"] == "insert":
            assert it["parent_id"] in (a_ids["Crawler and citation expansion"], a_ids["Selector and ranking of papers"])
    assert any(it["action"] == "insert" for it in items)
    # a new theme is named from its own claims: every word in two of them (in its one claim)
    new_themes: dict[str, list[str]] = {}
    for it in items:
        if it["action"] == "create":
            new_themes.setdefault(it["theme_title"], []).append(it["text"])
    names = name_checks(list(new_themes.items()))
    assert names["held"] == names["names"], (names, new_themes)
    assert names["absent"] == names["dangling"] == 0, (names, new_themes)
    with env["sessions"]() as db:
        view = service.map_view(db, env["user"], a)
        # the cost is shown before accepting: what the update run was charged, like any run
        assert view["proposals"][0]["charged_credits"] == db.get(Operation, started[0]).charged_credits is not None
        assert {m["id"]: m["new_papers"] for m in service.list_maps(db, env["user"])} == {a: 1, b: 0}

    chosen = [it for it in items if it["action"] == "insert"][:1] + [it for it in items if it["action"] != "insert"][:1]
    living.accept_update(env["user"], a, p.id, [it["n"] for it in chosen])
    after = _nodes(env, a)
    new = [n for i, n in after.items() if i not in before]
    with env["sessions"]() as db:
        cits = {c.node_id: c for c in db.exec(select(Citation).where(Citation.map_id == a))}
    written = [n for n in new if n.kind in ("claim", "counterpoint")]
    assert sorted(n.title for n in written) == sorted(it["text"] for it in chosen)
    for it in chosen:
        node = next(n for n in written if n.title == it["text"])
        assert cits[node.id].document_id == doc
        assert cits[node.id].quote == it["quote"]
        if it["action"] == "insert":
            assert node.parent_id == it["parent_id"]
        elif it["action"] == "create":
            assert after[node.parent_id].title == it["theme_title"]
            assert after[node.parent_id].parent_id is not None
    with env["sessions"]() as db:
        assert service.undo(db, env["user"], a) == "accept_update"  # one step reverts it all
    assert _nodes(env, a).keys() == before.keys()

    # a second paper's proposal rejected: nothing is written
    doc2 = _ingest(env, "agents2.pdf", _pdf("LLM agents for academic paper search", AGENTS, 3))
    with env["sessions"]() as db:
        p2 = updates.create_update_proposal(db, a, [{"id": doc2, "title": "x", "year": None}], [], None)
    with env["sessions"]() as db:
        service.reject_proposal(db, env["user"], a, p2.id)
    assert _nodes(env, a).keys() == before.keys()


def test_twenty_papers_in_one_sync_give_one_proposal_per_map(env):
    from bayes_app.usecases import living

    a, _ = _agents_map(env)
    b, _ = _coral_map(env)
    docs = [
        _ingest(env, f"p{k}.pdf", _pdf("LLM agents for academic paper search", AGENTS, k))
        if k % 2
        else _ingest(env, f"p{k}.pdf", _pdf("Coral reef bleaching in warming oceans", CORAL, k))
        for k in range(20)
    ]
    for d in docs:
        living.note_indexed(d)
    assert len(env["queue"].batches) == 1  # the first paper scheduled the batch; the rest joined it
    started = living.propose_updates(env["user"], env["queue"].batches[0][1])
    assert len(started) == 2
    assert arrivals.take_batch(env["r"], env["user"]) == []  # the batch was taken whole
    for op_id in started:
        _execute(env, op_id)
    (pa,), (pb,) = _proposals(env, a), _proposals(env, b)
    assert {d["id"] for d in pa.payload["documents"]} == set(docs[1::2])
    assert {d["id"] for d in pb.payload["documents"]} == set(docs[0::2])
    # a paper already proposed to a map is not proposed again (a redelivered ingest message)
    living.note_indexed(docs[1])
    assert living.propose_updates(env["user"], env["queue"].batches[-1][1]) == []


def test_a_crowded_theme_gets_a_split_proposal(env):
    claims = [f"Paper search agents {s}" for s in AGENTS] + [f"Reef bleaching {s}" for s in CORAL]
    claims += ["Coral reefs bleach when the sea warms.", "LLM agents read citations to find papers.", "Extra."]
    mid, ids = _map(env, "Everything", {"Mixed bag": claims})
    with env["sessions"]() as db:
        assert crowding.propose_splits(db, mid, threshold=len(claims)) == []  # not over the threshold
        (p,) = crowding.propose_splits(db, mid, threshold=12)
        assert crowding.propose_splits(db, mid, threshold=12) == []  # one pending split per theme
        groups = p.payload["groups"]
        assert p.kind == "split"
        assert p.payload["parent_id"] == ids["Mixed bag"]
        assert len(groups) >= 2
        assert sorted(i for g in groups for i in g["node_ids"]) == sorted(ids[c] for c in claims)
        service.accept_proposal(db, env["user"], mid, p.id)
    nodes = _nodes(env, mid)
    subs = [n for n in nodes.values() if n.parent_id == ids["Mixed bag"] and n.kind == "theme"]
    assert sorted(s.title for s in subs) == sorted(g["title"] for g in groups)
    assert all(nodes[ids[c]].parent_id in {s.id for s in subs} for c in claims)
    names = name_checks([(g["title"], [nodes[i].title for i in g["node_ids"]]) for g in groups])
    assert names["held"] == names["names"] == len(groups), names
    assert names["absent"] == names["dangling"] == 0, names


def test_an_accepted_counterpoint_marks_the_older_claim_superseded(env):
    old = _ingest(env, "old.pdf", _pdf("LLM agents for academic paper search", AGENTS, 2))
    new = _ingest(env, "new.pdf", _pdf("LLM agents for academic paper search", AGENTS, 4))
    with env["sessions"]() as db:
        db.get(Document, old).year, db.get(Document, new).year = 2019, 2024
        db.commit()
    mid, ids = _agents_map(env)
    target = ids["A crawler agent follows references to find more papers."]
    cit = {"document_id": old, "chunk_id": None, "page": 1, "quote": "q", "agent": "researcher"}
    with env["sessions"]() as db:
        service.add_agent_citations(db, mid, target, [cit])
        item = {
            "action": "counter",
            "text": "Following references found no additional papers.",
            "document_id": new,
            "document_title": "Newer study",
            "citation": {**cit, "document_id": new, "quote": "no additional papers"},
            "target_id": target,
            "parent_id": ids["Crawler and citation expansion"],
        }
        p = updates.create_update_proposal(
            db, mid, [{"id": new, "title": "Newer study", "arrived_at": "2026-11-20T10:00:00+00:00"}], [item], "r"
        )
        updates.accept_update(db, p, [0])
        rel = db.exec(select(NodeRelation).where(NodeRelation.target_id == target)).one()
        assert rel.evidence_document_id == new
        assert rel.evidence_at.year == 2026
        view = service.map_view(db, env["user"], mid)
    node = next(n for n in view["nodes"] if n["id"] == target)
    (mark,) = node["challenged_by"]
    assert mark["verb"] == "superseded"
    assert mark["title"] == "Newer study"
    assert mark["arrived_at"].startswith("2026-11-20")
    line = "Superseded by Newer study (evidence arrived 2026-11-20)"
    assert mark["line"] == line
    # the canvas and the outline show it on the node
    from bayes_app.maps.live import build_graph
    from bayes_app.maps.outline import outline_rows

    by_id = {n["id"]: n for n in view["nodes"]}
    assert next(g for g in build_graph(by_id, [], False)["nodes"] if g["id"] == target)["challenged"] == line
    assert next(r for r in outline_rows(by_id, {}) if r["id"] == target)["challenged"] == line
    counter = next(n for n in view["nodes"] if n["id"] == rel.source_id)
    assert counter["kind"] == "counterpoint"
    assert counter["parent_id"] == ids["Crawler and citation expansion"]


def test_the_http_api_watches_counts_and_accepts_items(env):
    from starlette.testclient import TestClient

    from bayes_app.api import build_api

    email, password = f"h{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex
    with TestClient(build_api()) as c:
        assert c.post("/api/v1/session/register", json={"email": email, "password": password}).status_code == 201
        token = c.post("/api/v1/auth/token", json={"email": email, "password": password}).json()["token"]
        c.headers["Authorization"] = f"Bearer {token}"
        mid = c.post("/api/v1/mindmaps", json={"title": "Agents", "question": "How do agents search?"}).json()["id"]
        assert c.get(f"/api/v1/mindmaps/{mid}").json()["watch_new_papers"] is True  # on for new maps
        assert c.put(f"/api/v1/mindmaps/{mid}/watch", json={"watch_new_papers": False}).json() == {
            "watch_new_papers": False
        }
        assert c.get(f"/api/v1/mindmaps/{mid}").json()["watch_new_papers"] is False
        assert c.put(f"/api/v1/mindmaps/{mid}/watch", json={"watch_new_papers": "yes"}).status_code == 400
        root = c.get(f"/api/v1/mindmaps/{mid}").json()["root_id"]
        cit = {"document_id": None, "chunk_id": None, "page": 1, "quote": "q", "agent": "update"}
        items = [
            {"action": "create", "text": f"New claim {k}.", "theme_title": "New theme", "citation": cit}
            for k in range(3)
        ]
        with env["sessions"]() as db:
            p = updates.create_update_proposal(db, mid, [{"id": "d" * 32, "title": "P"}], items, None)
        assert c.get("/api/v1/mindmaps").json()["mindmaps"][0]["new_papers"] == 1
        bad = c.post(f"/api/v1/mindmaps/{mid}/proposals/{p.id}/accept", json={"items": [7]})
        assert bad.status_code == 400
        assert bad.json()["error"]["code"] == "bad_items"
        ok = c.post(f"/api/v1/mindmaps/{mid}/proposals/{p.id}/accept", json={"items": [0, 2]})
        assert ok.status_code == 200
        assert ok.json()["payload"]["accepted"] == [0, 2]
        view = c.get(f"/api/v1/mindmaps/{mid}").json()
        theme = next(n for n in view["nodes"] if n["title"] == "New theme")
        assert theme["parent_id"] == root
        assert sorted(n["title"] for n in view["nodes"] if n["parent_id"] == theme["id"]) == [
            "New claim 0.",
            "New claim 2.",
        ]
        assert c.get("/api/v1/mindmaps").json()["mindmaps"][0]["new_papers"] == 0
        again = c.post(f"/api/v1/mindmaps/{mid}/proposals/{p.id}/accept", json={"items": [1]})
        assert again.status_code == 409
        # no body: the whole proposal (the documented default)
        with env["sessions"]() as db:
            whole = updates.create_update_proposal(db, mid, [{"id": "e" * 32, "title": "Q"}], items[:2], None)
        ok = c.post(f"/api/v1/mindmaps/{mid}/proposals/{whole.id}/accept")
        assert ok.status_code == 200, ok.text
        assert ok.json()["payload"]["accepted"] == [0, 1], ok.text


def test_with_a_model_a_contradicting_claim_is_proposed_as_a_counterpoint(env):
    """The update run over the real `openai` client and a scripted server: the researcher quotes
    the new paper by sentence id, the critic names the contradiction with the map's claim."""
    import json
    import re

    from bayes_app.credits import pricing
    from bayes_app.llm.openai_provider import OpenAIProvider
    from bayes_app.maps.runs import start_map_run
    from tests.support.fake_openai import FakeOpenAI, Script, _last_user_text

    old_claim = "Citation expansion does not raise the recall of paper search agents."
    new_claim = "Citation expansion raised the recall of relevant papers from 41 to 63 percent."
    mid, ids = _map(
        env, "How do LLM agents search for academic papers?", {"Crawler and citation expansion": [old_claim]}
    )
    doc = _ingest(env, "agents.pdf", _pdf("LLM agents for academic paper search", AGENTS, 1))

    def responder(body: dict) -> Script | None:
        last = _last_user_text(body)
        if "ROLE: researcher" in last:
            sid = re.search(r"^\[(\d+\.\d+)\] Citation expansion raised", last, re.M).group(1)
            return Script.reply(json.dumps({"claims": [{"text": new_claim, "sentences": [sid]}]}))
        if "ROLE: critic" in last:
            num = {t.strip(): int(n) for n, t in re.findall(r"^(\d+)\. ([^\n(]*)", last, re.M)}
            pair = {"a": num[old_claim], "b": num[new_claim]}
            return Script.reply(json.dumps({"scores": [], "contradictions": [pair]}))
        return None

    with env["sessions"]() as db:
        pricing.set_price(db, "gpt-4o-mini", 150_000, 75_000, 600_000)
        db.commit()
        op = start_map_run(
            db, env["user"], "update_map", mid, model="gpt-4o-mini", output_tokens=2000, document_ids=[doc]
        )
    with FakeOpenAI(responder=responder) as fake:
        res = asyncio.run(
            executor.execute(
                op.id,
                r=env["r"],
                sessions=env["sessions"],
                listener=env["listener"],
                provider_factory=lambda: OpenAIProvider(fake.base_url, "test-key"),
            )
        )
        assert res.outcome == "SUCCEEDED", res
        assert run_service.settle(env["sessions"], env["r"], op.id) == "finalized"
    (p,) = _proposals(env, mid)
    (item,) = p.payload["items"]
    assert item["action"] == "counter"
    assert item["target_id"] == ids[old_claim]
    assert item["text"] == new_claim
    with env["sessions"]() as db:
        assert db.get(Operation, op.id).charged_credits > 0  # charged like any run
        updates.accept_update(db, db.get(MapProposal, p.id), None)
        view = service.map_view(db, env["user"], mid)
    (mark,) = next(n for n in view["nodes"] if n["id"] == ids[old_claim])["challenged_by"]
    assert mark["document_id"] == doc
    assert mark["verb"] == "contradicted"
    assert mark["arrived_at"]


def test_an_item_whose_paper_was_removed_since_the_preview_is_skipped(env):
    mid, ids = _agents_map(env)
    gone = _ingest(env, "gone.pdf", _pdf("LLM agents for academic paper search", AGENTS, 2))
    cit = {"document_id": gone, "chunk_id": None, "page": 1, "quote": "q", "agent": "update"}
    item = {"action": "insert", "text": "Gone claim.", "parent_id": ids["Crawler and citation expansion"]}
    with env["sessions"]() as db:
        p = updates.create_update_proposal(db, mid, [{"id": gone, "title": "Gone"}], [{**item, "citation": cit}], None)
        db.delete(db.get(Document, gone))
        db.commit()
    before = _nodes(env, mid)
    with env["sessions"]() as db:
        view, _ = updates.accept_update(db, db.get(MapProposal, p.id), [0])
    assert view["payload"]["skipped_removed"] == [0]
    assert view["payload"]["accepted"] == []
    assert _nodes(env, mid).keys() == before.keys()


def test_a_research_run_that_leaves_a_theme_crowded_ends_with_a_split_proposal(env, configure):
    from bayes_app.maps.runs import start_map_run
    from bayes_app.runs import events

    configure(BAYES_SPLIT_THRESHOLD="3")
    claims = [f"Paper search agents {s}" for s in AGENTS[:2]] + [f"Reef bleaching {s}" for s in CORAL[:2]]
    mid, ids = _map(env, "How do LLM agents search for academic papers?", {"Crowded theme": claims})
    _ingest(env, "agents.pdf", _pdf("LLM agents for academic paper search", AGENTS, 1))
    with env["sessions"]() as db:
        op = start_map_run(db, env["user"], "counter", mid, ids[claims[0]], model="offline", output_tokens=2000)
    _execute(env, op.id)
    with env["sessions"]() as db:
        (p,) = db.exec(select(MapProposal).where(MapProposal.map_id == mid, MapProposal.kind == "split")).all()
    assert p.run_id == op.id
    assert p.payload["parent_id"] == ids["Crowded theme"]
    assert p.id in [
        e.data["id"] for e in events.read_range(env["r"], op.id, None, count=10_000) if e.type == "proposal"
    ]


def test_a_map_not_watching_is_left_alone(env):
    from bayes_app.usecases import living

    a, _ = _agents_map(env)
    living.set_watch(env["user"], a, False)
    doc = _ingest(env, "agents.pdf", _pdf("LLM agents for academic paper search", AGENTS, 1))
    living.note_indexed(doc)
    assert env["queue"].batches == []  # no watching map: nothing is batched
    b, _ = _agents_map(env)  # a second map on the same topic, watching (the default)
    living.note_indexed(doc)
    (batch,) = env["queue"].batches
    assert len(started := living.propose_updates(env["user"], batch[1])) == 1
    with env["sessions"]() as db:
        assert db.get(Operation, started[0]).resource_id == b
