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

LIST_QUOTE = ("Answer Papers: [0] Instruction Distillation Makes Large Language Models Efficient Zero-shot Rankers "
              "[1] Beyond Yes and No: Improving Zero-Shot LLM Rankers via Scoring Fine-Grained Relevance Labels")
RECALL_QUOTE = "PaSa-7B surpasses the best Google-based baseline, Google with GPT-4o, by 37.78% in recall@20"
MARKER = re.compile(r"(?<!\\)\[(\d+)\]")
AUTHOR_YEAR = re.compile(r"\(([^()]*?\d{4}, p\. (\d+))\)")


@pytest.fixture(scope="module")
def lab():
    with MapLab([pdfs.PASA]) as lab:
        yield lab


def _chunk_with(lab: MapLab, text: str) -> Chunk:
    from bayes_app.library.quotes import quote_in_text

    with lab.sessions() as db:
        return next(c for c in db.exec(select(Chunk).where(col(Chunk.document_id) == lab.doc_ids[0]))
                    if quote_in_text(c.text, text))


def _map(lab: MapLab) -> tuple[str, str, str]:
    """A map with a claim quoting the "[n] Title" list and a claim from page 1."""
    listing, recall = _chunk_with(lab, LIST_QUOTE), _chunk_with(lab, RECALL_QUOTE)
    assert (listing.page, recall.page) == (14, 1)
    with lab.sessions() as db:
        m = service.create_map(db, lab.user_id, "Attribution", "What does PaSa report?")
        root = service.map_view(db, lab.user_id, m["id"])["root_id"]
        theme = service.add_child(db, lab.user_id, m["id"], root, "PaSa", kind="theme")
        a = service.add_child(db, lab.user_id, m["id"], theme["id"], "RealScholarQuery lists answer papers such "
                              "as [0] Instruction Distillation and [1] Beyond Yes and No", kind="claim")
        b = service.add_child(db, lab.user_id, m["id"], theme["id"],
                              "PaSa-7B beats Google with GPT-4o by 37.78% in recall@20", kind="claim")
        citations.attach_citation(db, lab.user_id, m["id"], a["id"], listing.id, LIST_QUOTE)
        citations.attach_citation(db, lab.user_id, m["id"], b["id"], recall.id, RECALL_QUOTE)
    return m["id"], a["id"], b["id"]


def _page_of_marker(md: str, n: int) -> int:
    ref = re.search(rf"^{n}\. .*, p\. (\d+)$", md, re.M)
    assert ref, (n, md)
    return int(ref.group(1))


def _check_note(lab: MapLab, map_id: str) -> MapNode:
    """The saved synthesis: every author-year marker is one of the passages it carries; the
    source's "[0]"/"[1]" stay escaped text."""
    with lab.sessions() as db:
        [note] = db.exec(select(MapNode).where(MapNode.map_id == map_id,
                                               col(MapNode.title).startswith("Synthesis:"))).all()
        cits = db.exec(select(Citation).where(Citation.node_id == note.id)).all()
    assert not MARKER.search(note.body), note.body  # no unescaped [n] left in the note
    cited_pages = {c.page for c in cits}
    marker_pages = {int(p) for _, p in AUTHOR_YEAR.findall(note.body)}
    assert marker_pages and marker_pages == cited_pages, (note.body, cited_pages)
    return note


def test_offline_synthesis_and_exports_keep_source_brackets_as_text(lab):
    map_id, a_id, b_id = _map(lab)
    _, evs = lab.run("synthesize", map_id, OfflineProvider)
    note = _check_note(lab, map_id)
    assert "\\[0\\] Instruction Distillation" in note.body and "\\[1\\] Beyond Yes and No" in note.body
    # the list claim is cited with its own page, the recall claim with page 1
    assert re.search(r"Beyond Yes and No[^()]*\(He et al\. 2025, p\. 14\)", note.body), note.body
    assert re.search(r"recall@20[^()]*\(He et al\. 2025, p\. 1\)", note.body), note.body

    with lab.sessions() as db:
        md = export.markdown(db, lab.user_id, map_id)
        docx = export.docx_bytes(db, lab.user_id, map_id)
    # Markdown: every unescaped [n] is a real marker pointing to the passage of its claim
    for line in md.splitlines():
        for n in MARKER.findall(line):
            page = _page_of_marker(md, int(n))
            if "Beyond Yes and No" in line.split(f"[{n}]")[0].split(". ")[-1] and "recall@20" not in line:
                assert page == 14
    claim_a = next(x for x in md.splitlines() if x.startswith("RealScholarQuery lists"))
    assert "\\[0\\] Instruction Distillation and \\[1\\] Beyond Yes and No" in claim_a
    [n_a] = MARKER.findall(claim_a.split("PaSa-7B")[0])
    assert _page_of_marker(md, int(n_a)) == 14
    n_b = MARKER.findall(claim_a.split("PaSa-7B", 1)[1])[0]
    assert _page_of_marker(md, int(n_b)) == 1
    assert "0. " not in md.split("## References")[1]  # the source's [0] never became a reference

    # DOCX: the markers are superscript runs; the source's brackets are plain text
    paras = Docx(io.BytesIO(docx)).paragraphs
    sup = [r.text for p in paras for r in p.runs if r.font.superscript]
    plain = "".join(r.text for p in paras for r in p.runs if not r.font.superscript)
    assert sup and all(re.fullmatch(r"\[\d+(, \d+)*\]", x) for x in sup)
    assert "[0] Instruction Distillation and [1] Beyond Yes and No" in plain
    assert not re.search(r"\\\[", plain)


def test_model_synthesis_markers_come_from_the_writer_and_point_to_their_passage(lab):
    map_id, _a, _b = _map(lab)
    with lab.sessions() as db:
        o = export.outline(db, lab.user_id, map_id)
    n_list = next(n for n, cs in o.citations.items() if cs[0].page == 14)
    n_recall = next(n for n, cs in o.citations.items() if cs[0].page == 1)
    prose = (f"RealScholarQuery lists answer papers such as \\[0\\] Instruction Distillation [{n_list}]. "
             f"PaSa-7B beats Google with GPT-4o by 37.78% in recall@20 [{n_recall}]. "
             # a marker the sentence doesn't match (the recall passage for the list): dropped
             f"The benchmark also lists Beyond Yes and No Improving Zero-Shot LLM Rankers [{n_recall}].")
    with FakeOpenAI(Script.reply(prose, match="ROLE: synthesize")) as fake:
        _, evs = lab.run("synthesize", map_id, lambda: OpenAIProvider(fake.base_url, "test-key"), model=MODEL)
        [req] = [r for r in fake.chat_requests() if "ROLE: synthesize" in r["body"]["messages"][-1]["content"]]
    sent = req["body"]["messages"][-1]["content"]
    assert "\\[0\\] Instruction Distillation" in sent  # the writer sees the source brackets escaped
    assert [x for e in evs if e.type == "agent" for x in e.data.get("dropped_markers", [])] == [n_recall]
    note = _check_note(lab, map_id)
    assert "Zero-Shot LLM Rankers." in note.body and "Rankers (He" not in note.body
    assert re.search(r"Instruction Distillation \(He et al\. 2025, p\. 14\)", note.body), note.body
