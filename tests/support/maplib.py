"""Map test helpers. A real library for map-run tests: PDFs stored and ingested (real
embeddings, real index process) into a given database for one user; the provenance check.
For the browser tests against the shared app (`app_stack` + the scripted model): users with
the paper, the researcher's passage numbers, scripted replies, seeded maps, canvas locators."""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Locator, Page, expect
from sqlmodel import Session, col, select

from bayes_app.credits import ledger
from bayes_app.credits.pricing import display_credits, format_credits
from bayes_app.db import session_scope
from bayes_app.library import documents as lib
from bayes_app.library import storage
from bayes_app.library.ingest import ingest_document
from bayes_app.library.quotes import normalize, quote_in_text
from bayes_app.maps import citations, service
from bayes_app.models import MICRO, Chunk, Citation, MapNode, Origin, PageText, Run, User
from tests.support import pdfs
from tests.support.fake_openai import _WORD, Script


def ingest(sessions, owner_id: str, files_root: Path, paths: list[Path], ocr_options: Any = None) -> list[str]:
    """Store and ingest `paths` for `owner_id` in-process (scanned pages read by OCR when
    `ocr_options` is given); returns the document ids."""
    from bayes_app.search import runtime

    ids = []
    for p in paths:
        stored = storage.store_stream(files_root, io.BytesIO(p.read_bytes()), 200 << 20)
        with sessions() as db:
            doc, _ = lib.add_upload(db, owner_id, p.name, stored, None)
            db.commit()
            doc_id, gen = doc.id, doc.ingest_generation
        ingest_document(
            sessions,
            doc_id,
            gen,
            files_root=files_root,
            index=runtime.index(),
            embedder=runtime.embedder(),
            ocr_options=ocr_options,
        )
        ids.append(doc_id)
    return ids


def assert_provenance(db: Session, map_id: str) -> int:
    """Every agent citation's quote is in its chunk, on its page, at its offsets. Returns how many."""
    cits = db.exec(select(Citation).where(Citation.map_id == map_id, Citation.origin == Origin.AGENT)).all()
    for c in cits:
        chunk = db.get(Chunk, c.chunk_id)
        assert chunk is not None
        assert chunk.page == c.page
        assert chunk.document_id == c.document_id
        assert quote_in_text(chunk.text, c.quote), (c.quote, chunk.text)
        page = db.get(PageText, (c.document_id, c.page))
        assert normalize(page.text[c.char_start : c.char_end]).text == normalize(c.quote).text
    return len(cits)


# ---- browser tests of the map against the scripted model (tests/browser/test_maps_*) ----------
NODE = ".react-flow__node"
PER_ASPECT = 6  # pipeline.PASSAGES_PER_ASPECT

# passages of pasa.pdf (each inside one chunk) and claims made from them
Q1 = (
    "the decision token is presented before the rationale, allowing the Selector to act as a "
    "single-token reward model during the Crawler training"
)
Q2A = "PaSa-7B surpasses the best Google-based baseline, Google with GPT-4o, by 37.78% in recall@20"
Q2B = "It also exceeds PaSa-GPT-4o by 30.36% in recall"
A_TEXT = "Putting the decision before the rationale lets the Selector act as a single-token reward model."
HI = "PaSa-7B achieves higher recall than Google with GPT-4o."
LO = "PaSa-7B achieves lower recall than Google with GPT-4o."


@dataclass
class MapUser:
    """A signed-up user with 10 credits, a bearer token and (optionally) pasa.pdf indexed."""

    email: str
    password: str
    id: str
    headers: dict[str, str]
    doc_id: str | None = None


def map_user(app_stack: Any, make_user: Callable[[], tuple[str, str]], app_db_url: str, paper: bool) -> MapUser:
    email, password = make_user()
    with session_scope(app_db_url) as db:
        user = db.query(User).filter(User.email == email).one()
        ledger.grant(db, user, 10 * MICRO, f"grant:{user.id}", "test")
        uid = user.id
    api = app_stack.url + "/api/v1"
    token = httpx.post(f"{api}/auth/token", json={"email": email, "password": password}).json()["token"]
    h = {"Authorization": f"Bearer {token}"}
    doc_id = None
    if paper:
        doc = httpx.post(
            f"{api}/documents",
            headers=h,
            timeout=60,
            files={"file": ("pasa.pdf", pdfs.PASA.read_bytes(), "application/pdf")},
        ).json()
        doc_id = doc["id"]
        deadline = time.monotonic() + 240
        while httpx.get(f"{api}/documents/{doc_id}", headers=h).json()["status"] != "indexed":
            assert time.monotonic() < deadline, "the paper did not finish indexing"
            time.sleep(0.3)
    return MapUser(email, password, uid, h, doc_id)


def passage_no(
    app_stack: Any, h: dict[str, str], app_db_url: str, query: str, quote: str, exclude: set[str]
) -> tuple[int, set[str]]:
    """The number the researcher's passage list gives the chunk holding `quote` (agents.retrieval:
    hybrid search for k + len(exclude), seen chunks skipped, the first k numbered from 1), and
    the chunks of that list."""
    hits = httpx.get(
        f"{app_stack.url}/api/v1/search", headers=h, timeout=60, params={"q": query, "k": PER_ASPECT + len(exclude)}
    ).json()
    hits = [x for x in hits if x["chunk_id"] not in exclude][:PER_ASPECT]
    with session_scope(app_db_url) as db:
        raw = {c.id: c.text for c in db.exec(select(Chunk).where(col(Chunk.id).in_([x["chunk_id"] for x in hits])))}
    n = next(i for i, x in enumerate(hits, 1) if quote_in_text(raw[x["chunk_id"]], quote))
    return n, {x["chunk_id"] for x in hits}


def claims_json(*claims: tuple[str, str, int]) -> str:
    """A researcher reply: (text, quote, passage number) per claim."""
    return json.dumps({"claims": [{"text": t, "quote": q, "passage": n} for t, q, n in claims]})


def paced(text: str, seconds: float, **kw: Any) -> Script:
    """A reply streamed over about `seconds`."""
    return Script.reply(text, tokens_per_s=max(1.0, len(_WORD.findall(text)) / seconds), **kw)


def canvas_node(page: Page, text: str) -> Locator:
    return page.locator(NODE, has_text=text)


def db_nodes(app_db_url: str, map_id: str) -> list[MapNode]:
    with session_scope(app_db_url) as db:
        return list(db.exec(select(MapNode).where(MapNode.map_id == map_id)))


def shape(app_db_url: str, map_id: str) -> list[tuple]:
    """The map's tree as sorted (id, parent, kind, title, order) rows."""
    return sorted((n.id, n.parent_id, n.kind, n.title, n.order_index) for n in db_nodes(app_db_url, map_id))


def node_title(app_db_url: str, node_id: str) -> str:
    with session_scope(app_db_url) as db:
        return db.get(MapNode, node_id).title


def tree_edge(page: Page, parent_id: str, child_id: str) -> Locator:
    """The canvas edge parent → child (React Flow labels edges 'Edge from <source> to <target>')."""
    edge = page.locator(f'[data-testid="rf__edge-t-{child_id}"]')
    expect(edge).to_have_attribute("aria-label", f"Edge from {parent_id} to {child_id}")
    return edge


def new_map(page: Page, title: str) -> str:
    """Create a map from the maps page; returns its id (the editor is open)."""
    page.fill("#new-map-title", title)
    page.click("#new-map")
    expect(page).to_have_url(re.compile(r"/maps/[0-9a-f]{32}$"))
    expect(page.locator(NODE)).to_have_count(1)
    return page.url.rsplit("/", 1)[1]


def expect_cost(page: Page, app_db_url: str, uid: str, kind: str) -> Run:
    """The run ended SUCCEEDED and its charged credits (> 0, as in the database) are shown."""
    expect(page.locator("#run-outcome")).to_have_text("SUCCEEDED", timeout=90_000)
    with session_scope(app_db_url) as db:
        op = db.exec(
            select(Run).where(Run.owner_id == uid, Run.kind == kind).order_by(col(Run.created_at).desc())
        ).first()
        db.expunge(op)
    assert op.status == "SUCCEEDED", op
    assert op.charged_credits, op
    assert op.charged_credits > 0, op
    expect(page.locator("#run-cost")).to_have_text(f"{display_credits(op.charged_credits)} credits")
    expect(page.locator("#run-cost")).to_have_attribute("title", f"{format_credits(op.charged_credits)} credits")
    return op


def seed_map(app_db_url: str, uid: str, m: str) -> tuple[str, str, dict[str, str]]:
    """A map with one theme holding four claims on two topics (no run needed):
    (map id, theme id, {"c1".."c4": claim id})."""
    titles = {
        "c1": f"The Crawler issues search queries {m}",
        "c2": f"The Selector scores each paper {m}",
        "c3": f"The Crawler expands citations {m}",
        "c4": f"The Selector is a reward model {m}",
    }
    with session_scope(app_db_url) as db:
        mp = service.create_map(db, uid, f"PaSa agents {m}", f"How does PaSa work? {m}")
        root = service.root_of(db, mp["id"])
        theme, _ = service.write_agent_node(db, mp["id"], root.id, "theme", f"Mixed bag {m}", run_id=None)
        ids = {}
        for k, t in titles.items():
            node, _ = service.write_agent_node(db, mp["id"], theme.id, "claim", t, run_id=None)
            ids[k] = node.id
        return mp["id"], theme.id, ids


def cite(db: Session, owner_id: str, map_id: str, node_id: str, doc_id: str, quote: str) -> None:
    """Attach `quote` (from the chunk of `doc_id` holding it) to a node, as the user's "Attach" does."""
    chunk = next(c for c in db.exec(select(Chunk).where(Chunk.document_id == doc_id)) if quote_in_text(c.text, quote))
    citations.attach_citation(db, owner_id, map_id, node_id, chunk.id, quote)
