"""The map command parser and the demo library."""

from __future__ import annotations

import pypdfium2 as pdfium
import pytest

from bayes_app.agents.commands import edit_ops
from bayes_app.library import demo


@pytest.mark.parametrize(
    ("message", "title", "kind", "under"),
    [
        ("add a note saying check the RL reward design later", "check the RL reward design later", "note", None),
        ("add a note Check the PaSa benchmark", "Check the PaSa benchmark", "note", None),
        ("Add a note that says compare with BM25 under Crawler", "compare with BM25", "note", "Crawler"),
        ('add a note: "read section 4"', "read section 4", "note", None),
        ("create a theme called Reward design", "Reward design", "theme", None),
    ],
)
def test_add_commands_title_is_what_follows_the_verb(message, title, kind, under):
    assert edit_ops(message) == [{"op": "add", "kind": kind, "title": title, "under": under}]


def test_demo_library_is_real_papers_only():
    """Every demo paper is a real paper (many pages of prose), never a test fixture."""
    assert demo.DEMO_FILES
    assert "duplicate-media.pdf" not in demo.DEMO_FILES
    for name in demo.DEMO_FILES:
        pdf = pdfium.PdfDocument(str(demo.DEMO_PAPERS / name))
        words = sum(len(pdf[i].get_textpage().get_text_range().split()) for i in range(len(pdf)))
        assert len(pdf) >= 10, (name, len(pdf), words)
        assert words >= 5_000, (name, len(pdf), words)
