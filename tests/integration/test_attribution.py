"""Attribution in Synthesize and the exports, with source text that has its own "[n] Title"
lists (pasa.pdf p. 14: "Answer Papers: [0] Instruction Distillation … [1] Beyond Yes and No …").

Real parts: pasa.pdf ingested with real embeddings into a real index process, runs executed by
the executor against real Redis and SQLite, the scripted model over the real `openai` client."""

from __future__ import annotations

import io
import re

import pytest
from docx import Document as Docx
from sqlmodel import col, select

from bayes_app.llm.offline import OfflineProvider
from bayes_app.llm.openai_provider import OpenAIProvider
from bayes_app.maps import citations, export, service
from bayes_app.models import Chunk, Citation, MapNode
from tests.support import pdfs
from tests.support.fake_openai import FakeOpenAI, Script
from tests.support.maplab import MODEL, MapLab

LIST_QUOTE = (
    "Answer Papers: [0] Instruction Distillation Makes Large Language Models Efficient Zero-shot Rankers "
    "[1] Beyond Yes and No: Improving Zero-Shot LLM Rankers via Scoring Fine-Grained Relevance Labels"
)
RECALL_QUOTE = "PaSa-7B surpasses the best Google-based baseline, Google with GPT-4o, by 37.78% in recall@20"
MARKER = re.compile(r"(?<!\\)\[(\d+)\]")


@pytest.fixture(scope="module")
def lab():
    with MapLab([pdfs.PASA]) as lab:
        yield lab


def _chunk_with(lab: MapLab, text: str) -> Chunk:
    from bayes_app.library.quotes import quote_in_text

    with lab.sessions() as db:
        return next(
            c
            for c in db.exec(select(Chunk).where(col(Chunk.document_id) == lab.doc_ids[0]))
            if quote_in_text(c.text, text)
        )


def _map(lab: MapLab) -> tuple[str, str, str]:
    """A map with a claim quoting the "[n] Title" list and a claim from page 1."""
    listing, recall = _chunk_with(lab, LIST_QUOTE), _chunk_with(lab, RECALL_QUOTE)
    assert (listing.page, recall.page) == (14, 1)
    with lab.sessions() as db:
        m = service.create_map(db, lab.user_id, "Attribution", "What does PaSa report?")
        root = service.map_view(db, lab.user_id, m["id"])["root_id"]
        theme = service.add_child(db, lab.user_id, m["id"], root, "PaSa", kind="theme")
        a = service.add_child(
            db,
            lab.user_id,
            m["id"],
            theme["id"],
            "RealScholarQuery lists answer papers such as [0] Instruction Distillation and [1] Beyond Yes and No",
            kind="claim",
        )
        b = service.add_child(
            db,
            lab.user_id,
            m["id"],
            theme["id"],
            "PaSa-7B beats Google with GPT-4o by 37.78% in recall@20",
            kind="claim",
        )
        citations.attach_citation(db, lab.user_id, m["id"], a["id"], listing.id, LIST_QUOTE)
        citations.attach_citation(db, lab.user_id, m["id"], b["id"], recall.id, RECALL_QUOTE)
    return m["id"], a["id"], b["id"]


PAGED = re.compile(r"(?<!\\)\[(\d+), pp?\. [\d, ]+\]")


def _marker_pages(md: str, after: str) -> set[int]:
    """The pages of the first marker after `after` ("[1, p. 3]" or "[1, pp. 1, 14]")."""
    m = re.compile(r"(?<!\\)\[\d+, pp?\. ([\d, ]+)\]").search(md, md.index(after))
    assert m, (after, md)
    return {int(x) for x in m.group(1).split(",")}


def _note(lab: MapLab, map_id: str) -> tuple[MapNode, list[Citation]]:
    with lab.sessions() as db:
        [note] = db.exec(
            select(MapNode).where(MapNode.map_id == map_id, col(MapNode.title).startswith("Synthesis:"))
        ).all()
        cits = list(db.exec(select(Citation).where(Citation.node_id == note.id).order_by(col(Citation.created_at))))
    return note, cits


def _marker_page(note: MapNode, cits: list[Citation], after: str) -> int:
    """The page of the note's own citation that the first marker after `after` numbers."""
    k = int(MARKER.search(note.body, note.body.index(after)).group(1))
    return cits[k - 1].page


def _check_note(lab: MapLab, map_id: str) -> MapNode:
    """The saved synthesis: every marker [k] numbers one of the note's own citations (in their
    order); the source's "[0]"/"[1]" stay escaped text."""
    note, cits = _note(lab, map_id)
    used = {int(k) for k in MARKER.findall(note.body)}
    assert used, (note.body, len(cits))
    assert used == set(range(1, len(cits) + 1)), (note.body, len(cits))
    return note


def test_offline_synthesis_and_exports_keep_source_brackets_as_text(lab):
    map_id, a_id, b_id = _map(lab)
    _, evs = lab.run("synthesize", map_id, OfflineProvider)
    note = _check_note(lab, map_id)
    _, cits = _note(lab, map_id)
    assert "\\[0\\] Instruction Distillation" in note.body
    assert "\\[1\\] Beyond Yes and No" in note.body
    # the list claim is cited with its own page, the recall claim with page 1
    assert _marker_page(note, cits, "Beyond Yes and No") == 14
    assert _marker_page(note, cits, "recall@20") == 1

    with lab.sessions() as db:
        md = export.markdown(db, lab.user_id, map_id)
        docx = export.docx_bytes(db, lab.user_id, map_id)
    # Markdown: one paper; each claim's marker carries its own page ("[1, p. 14]")
    assert {int(n) for n in PAGED.findall(md)} == {1}
    assert not MARKER.search(md)
    assert _marker_pages(md, "RealScholarQuery lists") == {14}
    assert _marker_pages(md, "recall@20") == {1}
    claim_a = next(x for x in md.splitlines() if x.startswith("RealScholarQuery lists"))
    assert "\\[0\\] Instruction Distillation and \\[1\\] Beyond Yes and No" in claim_a
    assert not re.search(r"^\s*0\. ", md.split("## References")[1], re.M)  # the source's [0] never became a reference
    assert "\\\\" not in md  # escaped once, never twice
    synth = md[md.index("Synthesis:") : md.index("## References")]
    assert "\\[0\\] Instruction Distillation" in synth
    assert re.search(r"\[1, pp?\. ", synth)

    # DOCX: the markers are superscript runs; the source's brackets are plain text
    paras = Docx(io.BytesIO(docx)).paragraphs
    sup = [r.text for p in paras for r in p.runs if r.font.superscript]
    plain = "".join(r.text for p in paras for r in p.runs if not r.font.superscript)
    assert sup
    assert all(re.fullmatch(r"\[1, pp?\. \d+(, \d+)*\]", x) for x in sup)
    assert "[0] Instruction Distillation and [1] Beyond Yes and No" in plain
    assert not re.search(r"\\\[", plain)


def test_model_synthesis_markers_come_from_the_writer_and_point_to_their_passage(lab):
    map_id, _a, _b = _map(lab)
    with lab.sessions() as db:
        o = export.outline(db, lab.user_id, map_id)
    [n_paper] = o.citations  # one paper: one number
    prose = (
        f"RealScholarQuery lists answer papers such as \\[0\\] Instruction Distillation [{n_paper}]. "
        f"PaSa-7B beats Google with GPT-4o by 37.78% in recall@20 [{n_paper}]. "
        # a marker the sentence doesn't match (no claim of that paper says it): dropped
        f"The weather in Shanghai was mild [{n_paper}]. "
        # a sentence without a marker: dropped
        "This shows a lot."
    )
    with FakeOpenAI(Script.reply(prose, match="ROLE: synthesize")) as fake:
        _, evs = lab.run("synthesize", map_id, lambda: OpenAIProvider(fake.base_url, "test-key"), model=MODEL)
        [req] = [r for r in fake.chat_requests() if "ROLE: synthesize" in r["body"]["messages"][-1]["content"]]
    sent = req["body"]["messages"][-1]["content"]
    assert "\\[0\\] Instruction Distillation" in sent  # the writer sees the source brackets escaped
    [critic] = [e.data for e in evs if e.type == "agent" and "dropped_markers" in e.data]
    assert critic["dropped_markers"] == [n_paper]
    assert critic["dropped_sentences"] == 2
    note = _check_note(lab, map_id)
    _, cits = _note(lab, map_id)
    assert "Shanghai" not in note.body
    assert "This shows a lot" not in note.body
    # each marker points at the citation of the claim its sentence states
    assert _marker_page(note, cits, "Instruction Distillation") == 14
    assert _marker_page(note, cits, "recall@20") == 1
