"""An editor's runs on a shared map (in-process executor, real Redis, a real index process, real
embeddings of pasa.pdf): they research the map OWNER's library (the editor's own is empty), are
charged to the editor (the credit history names the map; the owner pays nothing), their nodes
record who started them, and a viewer cannot start one."""

from __future__ import annotations

import json
import uuid

import pytest
from sqlmodel import col, select

from bayes_app.credits import ledger
from bayes_app.llm.offline import OfflineProvider
from bayes_app.llm.openai_provider import OpenAIProvider
from bayes_app.maps import citations, members, service
from bayes_app.maps.runs import start_map_run
from bayes_app.models import MICRO, Chunk, LedgerEntry, MapNode, Operation, User
from bayes_app.runs.service import RunRequestError
from tests.integration.test_map_agents import Q2A, env, index_env, run  # noqa: F401 (fixtures)
from tests.support.fake_openai import FakeOpenAI, Script


def _account(e: dict) -> str:
    from bayes_app.accounts import service as accounts

    with e["sessions"]() as db:
        user = accounts.register(db, f"m{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex)
        db.commit()
        ledger.grant(db, user, 10 * MICRO, f"grant:{user.id}", "test")
        db.commit()
        return user.id


def test_editor_run_reads_the_owners_library_and_is_charged_to_the_editor(env):  # noqa: F811
    from bayes_app.library.quotes import quote_in_text

    sessions, owner = env["sessions"], env["user"]
    editor, viewer = _account(env), _account(env)
    with sessions() as db:
        m = service.create_map(db, owner, "Team map", "How do LLM agents search for academic papers?")
        mid = m["id"]
        root = service.root_of(db, mid).id
        chunk = next(c for c in db.exec(select(Chunk).where(Chunk.owner_id == owner)) if quote_in_text(c.text, Q2A))
        node = service.add_child(db, owner, mid, root, "PaSa-7B always beats every baseline.", kind="claim")
        citations.attach_citation(db, owner, mid, node["id"], chunk.id, Q2A)
        for uid, role in ((editor, "editor"), (viewer, "viewer")):
            members.add_member(db, owner, mid, db.get(User, uid).email, role)
        db.commit()
        owner_before = ledger.balance(db, owner)
        with pytest.raises(RunRequestError) as refused:
            start_map_run(db, viewer, "deepen", mid, root, model="offline", output_tokens=2000)
        assert (refused.value.status, refused.value.code) == (403, "forbidden_role")

    # an offline deepen by the editor finds passages: the owner's library, not the editor's (empty)
    env_editor = {**env, "user": editor}
    op_id, _ = run(env_editor, "deepen", mid, OfflineProvider, node_id=root, model="offline")
    with sessions() as db:
        written = db.exec(select(MapNode).where(MapNode.run_id == op_id)).all()
        assert written
        assert all(n.author_id == editor and n.created_by == "agent" for n in written)

    # a billed (model-judged) run: charged to the editor, named after the map in the history
    reply = json.dumps({"scores": [{"quote": 1, "support": 0.4, "rewrite": "PaSa-7B beats baselines."}]})
    with FakeOpenAI(Script.reply(reply, match="ROLE: check_support")) as fake:
        op_id, _ = run(env_editor, "check_support", mid, lambda: OpenAIProvider(fake.base_url, "k"), node_id=node["id"])
    with sessions() as db:
        op = db.get(Operation, op_id)
        assert op.owner_id == editor
        assert op.charged_credits > 0
        spent = db.exec(select(LedgerEntry).where(LedgerEntry.operation_id == op_id)).all()
        assert spent
        assert all(e.user_id == editor for e in spent)
        assert ledger.balance(db, owner) == owner_before
        [row] = [h for h in ledger.history(db, editor) if h.id == op_id]
        assert row.title == "Check support · Team map"
        assert row.amount == -op.charged_credits
        assert all(h.id != op_id for h in ledger.history(db, owner))


def test_member_map_scoped_to_a_shared_collection_cites_only_that_collection(env, index_env):  # noqa: F811
    """A member's map scoped to a collection the owner shared: its run researches only that
    collection (the owner's other paper, relevant to the question, is never cited); once the
    owner unshares, a run is refused with a plain message and nothing is charged."""
    from bayes_app.models import Citation, Collection, CollectionMember, Document, DocumentCollection
    from bayes_app.search import runtime
    from bayes_app.sharing import collections as shared_cols
    from tests.support import pdfs
    from tests.support.maplib import ingest

    sessions, owner = env["sessions"], env["user"]
    [review] = ingest(sessions, owner, index_env / "files", [pdfs.REVIEW])
    member = _account(env)
    with sessions() as db:
        [pasa] = [d.id for d in db.exec(select(Document).where(Document.owner_id == owner)) if d.id != review]
        c = Collection(owner_id=owner, name="Explanations")
        db.add(c)
        db.flush()
        db.add(DocumentCollection(document_id=review, collection_id=c.id))
        db.commit()
        cid = c.id
    runtime.index().set_collections(review, [cid])  # as the library's collection edit does
    with sessions() as db:
        shared_cols.add_member(db, owner, cid, db.get(User, member).email, "viewer")
        q = "How do LLM agents search for academic papers, and how are molecular prediction models explained?"
        mid = service.create_map(db, member, "Scoped", q, collection_id=cid)["id"]
        db.commit()

    env_member = {**env, "user": member}
    op_id, _ = run(env_member, "build_map", mid, OfflineProvider, model="offline")
    with sessions() as db:
        written = [n.id for n in db.exec(select(MapNode).where(MapNode.run_id == op_id))]
        cited = {c.document_id for c in db.exec(select(Citation).where(col(Citation.node_id).in_(written)))}
        assert cited == {review}, (cited, pasa)

    # the owner unshares: the member's run is refused, nothing reserved or charged
    with sessions() as db:
        db.delete(db.get(CollectionMember, (cid, member)))
        db.commit()
        before = ledger.balance(db, member)
        ops = len(db.exec(select(Operation).where(Operation.owner_id == member)).all())
        with pytest.raises(RunRequestError) as refused:
            start_map_run(db, member, "build_map", mid, model="offline", output_tokens=2000)
        err = refused.value
        assert (err.status, err.code) == (409, "collection_not_shared")
        assert str(err.message) == "This map's collection is no longer shared with you."
    with sessions() as db:
        assert ledger.balance(db, member) == before
        assert len(db.exec(select(Operation).where(Operation.owner_id == member)).all()) == ops


@pytest.fixture
def use_cases(db_url, redis_server, configure):
    """The application layer's use cases read the test's database."""
    configure(DATABASE_URL=db_url, REDIS_URL=redis_server.url)


def _run_any(e: dict, kind: str, mid: str, node_id=None, prompt=None) -> tuple[str, str]:
    """Start and execute an offline map run as `e["user"]`; (run id, its outcome), whatever it is."""
    import asyncio

    from bayes_app.runs import executor
    from bayes_app.runs import service as run_service

    with e["sessions"]() as db:
        op = start_map_run(db, e["user"], kind, mid, node_id, prompt, model="offline", output_tokens=2000)
    res = asyncio.run(
        executor.execute(
            op.id, r=e["r"], sessions=e["sessions"], listener=e["listener"], provider_factory=OfflineProvider
        )
    )
    assert res.started, res
    run_service.settle(e["sessions"], e["r"], op.id)
    return op.id, res.outcome


def _cited(db, mid: str) -> set[str]:
    from bayes_app.models import Citation

    return {c.document_id for c in db.exec(select(Citation).where(Citation.map_id == mid)) if c.document_id}


MIXED = "How are molecular property prediction models explained, and how do LLM agents search for papers?"


@pytest.mark.usefixtures("use_cases")
def test_member_run_reads_only_what_the_owner_made_readable(env, index_env):  # noqa: F811
    """Issue 36.1: an editor's Research run with a prompt about another of the owner's papers
    reads only what the map cites: the other paper is never cited and stays unreadable to every
    member. A claim that would cite it goes to a proposal only the owner sees (accepting it is the
    owner's decision); once the owner adds the paper in the share dialog, the editor's run may cite it."""
    from bayes_app.library.quotes import quote_in_text
    from bayes_app.maps import updates
    from bayes_app.maps.agent_writes import NotShared
    from bayes_app.sharing import map_documents
    from bayes_app.sharing.documents import readable
    from bayes_app.usecases import maps as app_maps
    from tests.support import pdfs
    from tests.support.maplib import ingest

    sessions, owner = env["sessions"], env["user"]
    [review] = ingest(sessions, owner, index_env / "files", [pdfs.REVIEW])
    editor, viewer = _account(env), _account(env)
    with sessions() as db:
        mid = service.create_map(db, owner, "Team map", "How do LLM agents search for academic papers?")["id"]
        root = service.root_of(db, mid).id
        chunk = next(c for c in db.exec(select(Chunk).where(Chunk.owner_id == owner)) if quote_in_text(c.text, Q2A))
        pasa = chunk.document_id
        node = service.add_child(db, owner, mid, root, "PaSa-7B beats its baselines.", kind="claim")
        citations.attach_citation(db, owner, mid, node["id"], chunk.id, Q2A)
        for uid, role in ((editor, "editor"), (viewer, "viewer")):
            members.add_member(db, owner, mid, db.get(User, uid).email, role)
        db.commit()

    env_editor = {**env, "user": editor}
    op_id, _outcome = _run_any(env_editor, "build_map", mid, prompt=MIXED)
    with sessions() as db:
        assert _cited(db, mid) == {pasa}
        for uid in (editor, viewer):
            assert readable(db, uid, review) is None
            assert readable(db, uid, pasa) is not None
        # the write guard: a claim of the editor's run citing the unshared paper is refused ...
        rchunk = db.exec(select(Chunk).where(Chunk.document_id == review)).first()
        cit = {"document_id": review, "chunk_id": rchunk.id, "page": rchunk.page, "quote": rchunk.text[:80]}
        with pytest.raises(NotShared):
            service.write_agent_node(db, mid, root, "claim", "Off-topic claim.", run_id=op_id, citations=[cit])
        # ... and kept for the owner's decision: a proposal no member sees
        p = updates.divert_to_owner(db, mid, op_id, "Off-topic claim.", cit, parent_id=root)
        assert map_documents.proposal_documents(p.payload) == {review}
    assert [x.id for x in app_maps.map_view(owner, mid).proposals] == [p.id]
    for uid in (editor, viewer):
        assert app_maps.map_view(uid, mid).proposals == []
    with pytest.raises(app_maps.MapNotFound):
        app_maps.accept_proposal(editor, mid, p.id)
    with sessions() as db:
        assert readable(db, viewer, review) is None

    # the owner adds the paper in the share dialog: members open it, the editor's run may cite it
    shown = app_maps.add_map_document(owner, mid, review)
    assert {(d.document_id, d.how) for d in shown.documents} == {(pasa, "cited"), (review, "added")}
    with sessions() as db:
        assert readable(db, viewer, review) is not None
    _run_any(env_editor, "build_map", mid, prompt=MIXED)
    with sessions() as db:
        assert review in _cited(db, mid)


@pytest.mark.usefixtures("use_cases")
def test_prompted_research_keeps_the_root_and_is_undoable(env):  # noqa: F811
    """Issue 36.3: a Research run with a prompt never rewrites the map's root question: the
    prompt becomes the run's own question (a theme under the root, research under it); every write
    of the run is one history entry authored by the member who started it, and their undo
    removes it all. A run may not change a node it did not write."""
    from bayes_app.maps.errors import MapError
    from bayes_app.usecases import maps as app_maps

    sessions, owner = env["sessions"], env["user"]
    editor = _account(env)
    question = "How do LLM agents search for academic papers?"
    prompt = "Which recall does PaSa reach against Google Scholar?"
    with sessions() as db:
        mid = service.create_map(db, owner, "Team map", question)["id"]
        root = service.root_of(db, mid).id
        members.add_member(db, owner, mid, db.get(User, editor).email, "editor")
        [pasa] = db.exec(select(Chunk.document_id).where(Chunk.owner_id == owner)).unique().all()
        db.commit()
    app_maps.add_map_document(owner, mid, pasa)  # what the editor's run may read
    op_id, outcome = _run_any({**env, "user": editor}, "build_map", mid, prompt=prompt)
    assert outcome == "SUCCEEDED"
    with sessions() as db:
        r = db.get(MapNode, root)
        assert r.title == question
        assert r.edited_by is None
        written = db.exec(select(MapNode).where(MapNode.run_id == op_id)).all()
        [own_q] = [n for n in written if n.parent_id == root]
        assert own_q.title == prompt
        assert own_q.kind == "theme"
        assert len(written) > 2
        written_ids = {n.id for n in written}
        with pytest.raises(MapError) as refused:
            service.update_agent_node(db, mid, root, run_id=op_id, title="Rewritten")
        assert refused.value.code == "not_run_node"
    [entry] = [h for h in app_maps.map_history(owner, mid) if h.run_id == op_id]
    assert entry.action == "run_build_map"
    assert entry.user_id == editor
    assert written_ids <= set(entry.node_ids)
    assert app_maps.undo(editor, mid) == "run_build_map"
    with sessions() as db:
        assert db.exec(select(MapNode).where(MapNode.run_id == op_id)).all() == []
        assert service.root_of(db, mid).title == question
