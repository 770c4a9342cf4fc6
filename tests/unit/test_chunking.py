"""Chunking: exact page slices, overlap, stable hashes, speed."""

from __future__ import annotations

import hashlib
import statistics
import time
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

from bayes_app.library.chunking import (
    Chunk,
    chunk_pages,
    content_hash,
    embedding_text,
    estimate_tokens,
    iter_chunks,
)
from bayes_app.library.pdf import PageText, extract_pages, iter_pages

PAPERS = Path(__file__).resolve().parents[1] / "fixtures" / "papers"
ALL_PAPERS = ["pasa.pdf", "explanations-molecular-prediction-models.pdf", "duplicate-media.pdf"]


@cache
def _pages(name: str) -> tuple[PageText, ...]:
    return tuple(extract_pages(PAPERS / name))


@pytest.mark.parametrize("name", ALL_PAPERS)
def test_offsets_reproduce_chunk_text_and_never_cross_pages(name: str) -> None:
    pages = _pages(name)
    chunks = chunk_pages(pages)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert [c.page for c in chunks] == sorted(c.page for c in chunks)
    for c in chunks:
        text = pages[c.page - 1].text
        assert c.page == c.page_end
        assert 0 <= c.char_start < c.char_end <= len(text)
        assert c.text == text[c.char_start : c.char_end]
        # whitespace boundaries only: never mid-word
        assert c.char_start == 0 or text[c.char_start - 1].isspace()
        assert c.char_end == len(text) or text[c.char_end].isspace()
        assert c.text == c.text.strip()


@pytest.mark.parametrize("name", ALL_PAPERS)
def test_chunks_cover_every_word(name: str) -> None:
    pages = _pages(name)
    covered: dict[int, list[bool]] = {p.number: [False] * len(p.text) for p in pages}
    for c in chunk_pages(pages):
        covered[c.page][c.char_start : c.char_end] = [True] * (c.char_end - c.char_start)
    for p in pages:
        assert all(covered[p.number][i] or ch.isspace() for i, ch in enumerate(p.text))


def test_sizes_and_overlap_on_a_real_paper() -> None:
    pages = _pages("explanations-molecular-prediction-models.pdf")
    chunks = chunk_pages(pages, 250, 50)
    assert all(c.token_count == estimate_tokens(c.text) for c in chunks)
    assert max(c.token_count for c in chunks) <= 250 + 250 // 4 + 5
    assert statistics.median(c.token_count for c in chunks) >= 180
    overlaps = []
    for prev, nxt in pairwise(chunks):
        if prev.page != nxt.page:
            continue
        assert prev.char_start < nxt.char_start  # progress made, and no gap but white space:
        assert not pages[prev.page - 1].text[prev.char_end : nxt.char_start].strip()
        overlaps.append(estimate_tokens(prev.text[nxt.char_start - prev.char_start :]))
    assert overlaps
    # whole sentences are repeated: about `overlap_tokens`, more to keep a cut sentence whole, none
    # after a sentence longer than half a chunk
    assert all(0 <= o <= 250 // 2 + 5 for o in overlaps)
    assert sum(o > 0 for o in overlaps) >= 0.95 * len(overlaps)
    assert 25 <= statistics.median(overlaps) <= 60
    # the next chunk starts where a sentence does (the text after it in the page: upper case or a number)
    assert sum(c.text[:1].isupper() or c.text[:1].isdigit() for c in chunks) >= 0.6 * len(chunks)


def test_a_sentence_cut_by_a_chunk_end_is_whole_in_the_next_chunk() -> None:
    # sentences of 6 to 40 words, one of 70 (longer than half a chunk)
    lengths = [6, 25, 40, 12, 33, 8, 40, 21, 70, 9, 38, 17, 29, 40, 11, 35, 6, 26]
    sentences = [
        f"Sentence {n} says " + " ".join(f"w{n}x{k}" for k in range(m - 4)) + " here." for n, m in enumerate(lengths)
    ]
    text = " ".join(sentences * 3)
    chunks = chunk_pages([PageText(1, text)], target_tokens=100, overlap_tokens=20)
    assert len(chunks) > 10
    for s in sentences:
        if estimate_tokens(s) <= 0.8 * 100:  # at most REPEAT_CUT of a chunk: whole in some chunk
            assert any(s in c.text for c in chunks), s
    # a chunk opens on a sentence, unless the sentence before is longer than half a chunk
    opens = [c.text.startswith("Sentence ") for c in chunks[1:]]
    assert sum(opens) >= len(opens) - 3  # the 70-word sentence is cut inside in each of its three copies


def test_prefers_sentence_ends() -> None:
    text = " ".join(f"Sentence number {i} has exactly eight words here." for i in range(200))
    chunks = chunk_pages([PageText(1, text)], target_tokens=100, overlap_tokens=20)
    assert len(chunks) > 5
    assert all(c.text.endswith(".") for c in chunks)


def test_short_tail_is_merged_into_previous_chunk() -> None:
    words = " ".join(f"w{i}" for i in range(105))  # 105 pieces ≈ 137 tokens
    chunks = chunk_pages([PageText(1, words)], target_tokens=130, overlap_tokens=20)
    assert len(chunks) == 1
    assert chunks[0].text == words
    chunks = chunk_pages([PageText(1, words)], target_tokens=60, overlap_tokens=10)
    assert len(chunks) > 1
    assert chunks[-1].text.endswith("w104")


def test_empty_pages_and_giant_words() -> None:
    pages = [PageText(1, ""), PageText(2, " \r\n "), PageText(3, "x" * 5000 + " tail")]
    chunks = chunk_pages(pages, target_tokens=10, overlap_tokens=2, min_tail_tokens=0)
    # the 5,000-character word is cut into MAX_RUN_CHARS pieces (issue 24.3), one chunk each
    assert [c.page for c in chunks] == [3] * len(chunks)
    assert len(chunks) == 5000 // 200 + 1
    assert all(c.text == "x" * 200 for c in chunks[:-1])
    assert chunks[-1].text == "tail"
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_invalid_parameters() -> None:
    with pytest.raises(ValueError, match="need target_tokens > 0"):
        chunk_pages([], target_tokens=50, overlap_tokens=50)
    with pytest.raises(ValueError, match="need target_tokens > 0"):
        chunk_pages([], target_tokens=0)


def test_hash_is_stable_and_only_changes_for_edited_pages() -> None:
    pages = list(_pages("pasa.pdf"))
    first = chunk_pages(pages)
    assert [c.content_hash for c in chunk_pages(pages)] == [c.content_hash for c in first]
    c = first[0]
    assert c.content_hash == hashlib.sha256(embedding_text(c.text).encode()).hexdigest()
    # whitespace and pdfium hyphenation markers do not change what is embedded
    assert content_hash("reading pa\ufffepers,\r\n and") == content_hash("reading papers, and")
    assert content_hash("reading papers") != content_hash("reading paper")

    edited = pages.copy()
    edited[6] = PageText(7, pages[6].text.replace("Selector", "Chooser"))
    second = chunk_pages(edited)
    before = {c.content_hash for c in first if c.page != 7}
    after = {c.content_hash for c in second if c.page != 7}
    assert before == after
    changed = {c.content_hash for c in second if c.page == 7} - {c.content_hash for c in first}
    assert changed


def test_streams_from_the_page_iterator() -> None:
    streamed = list(iter_chunks(iter_pages(PAPERS / "pasa.pdf")))
    assert streamed == chunk_pages(_pages("pasa.pdf"))
    assert all(isinstance(c, Chunk) for c in streamed)


def test_chunking_speed_on_41_page_paper() -> None:
    pages = _pages("explanations-molecular-prediction-models.pdf")
    assert len(pages) == 41
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        chunk_pages(pages)
        best = min(best, time.perf_counter() - start)
    assert len(pages) / best > 500, f"{len(pages) / best:.0f} pages/s"


def test_a_run_without_spaces_is_cut_into_bounded_chunks():
    """Issue 24.3: a 300,000-character run with no space is split, not one giant chunk;
    every chunk still is a slice of the page text at its offsets."""
    from bayes_app.library.chunking import MAX_RUN_CHARS, iter_chunks
    from bayes_app.library.pdf import PageText

    text = "Intro words here. " + "A" * 300_000 + " and the end."
    chunks = list(iter_chunks([PageText(1, text)], target_tokens=250, overlap_tokens=50))
    assert len(chunks) > 100
    assert max(len(c.text) for c in chunks) < 250 * MAX_RUN_CHARS // 10
    assert all(c.text == text[c.char_start : c.char_end] for c in chunks)
    assert chunks[-1].text.endswith("the end.")


def test_heading_lead_is_the_section_headings_a_passage_opens_with():
    """Issue 39: a passage opening with its section's heading lines is shown and highlighted
    from the sentence after them; a heading run into the sentence's own line is not cut."""
    from bayes_app.library.chunking import heading_lead

    text = "3 Datasets\r\n3.1 AutoScholarQuery\r\nAutoScholarQuery is a synthetic dataset."
    lead = heading_lead(text, "3 Datasets › 3.1 AutoScholarQuery")
    assert text[lead:].strip() == "AutoScholarQuery is a synthetic dataset."
    broken = "Attribution\nmethods\nFeature attribution methods explain predictions."
    assert broken[heading_lead(broken, "Attribution methods") :].strip().startswith("Feature")
    assert heading_lead("Results show gains.\nMore.", "Results") == 0  # the word, not the heading line
    assert heading_lead("Results\n", "Results") == 0  # nothing after the heading: keep it
    assert heading_lead("Intro\nText.", "") == 0


def test_search_passages_on_real_papers_start_after_their_headings():
    """On the bundled papers every passage that opens with its section's heading lines loses
    them from the shown text, and the remaining text is still the page's slice at its offset."""
    from bayes_app.library import structure
    from bayes_app.library.chunking import heading_lead, iter_structured_chunks
    from bayes_app.library.pdf import iter_layouts, pdf_document

    with pdf_document((PAPERS / "explanations-molecular-prediction-models.pdf").read_bytes()) as doc:
        pages = list(iter_layouts(doc))
    chunks = list(iter_structured_chunks(pages, structure.analyze(pages)))
    cut = {
        c.section: c.text[heading_lead(c.text, c.section) :].split()[:3]
        for c in chunks
        if heading_lead(c.text, c.section)
    }
    assert cut["Attribution methods"] == ["Feature", "attribution", "methods"]
    assert len(cut) >= 10
