"""Pure Zotero helpers: annotation parsing (untrusted data), viewer boxes, theme fit, note HTML links."""

from __future__ import annotations

import json

from bayes_app.zotero.annotations import is_highlighted, parse
from bayes_app.zotero.highlights_map import best_theme
from bayes_app.zotero.notes_html import open_pdf_link
from bayes_app.zotero.viewer_boxes import css_boxes


def test_parse_validates_position_colour_and_type():
    good = {
        "annotationType": "highlight",
        "annotationText": "t",
        "annotationColor": "#FF6666",
        "annotationPosition": json.dumps({"pageIndex": 3, "rects": [[300, 712, 72, 700], [1, 2, 3]]}),
    }
    a = parse("K", "P", good)
    assert (a.page, a.page_index, a.color, a.rects) == (4, 3, "#ff6666", [[72, 700, 300, 712]])
    assert parse("K", "P", {**good, "annotationType": "weird"}) is None
    assert parse("K", "P", {**good, "annotationPosition": '{"pageIndex": "3"}'}) is None
    assert parse("K", "P", {**good, "annotationPosition": "[1]"}) is None
    assert parse("K", "P", {**good, "annotationColor": "url(javascript:x)"}).color == "#ffd400"
    nan = json.dumps({"pageIndex": 0, "rects": [[0, 0, float("inf"), 1], [True, 1, 2, 3]]})
    assert parse("K", "P", {**good, "annotationPosition": nan}).rects == []


def test_css_boxes_convert_pdf_points_through_the_crop_box():
    a = parse(
        "K",
        "P",
        {
            "annotationType": "highlight",
            "annotationColor": "#5fb236",
            "annotationPosition": json.dumps({"pageIndex": 0, "rects": [[72, 700, 300, 712]]}),
        },
    )
    [box] = css_boxes([a], 1, (0.0, 0.0, 612.0, 842.0))
    assert box["left"] == "11.765%"
    assert box["top"] == "15.439%"
    assert box["width"] == "37.255%"
    assert box["height"] == "1.425%"
    assert box["color"] == "#5fb236"
    assert css_boxes([a], 2, (0.0, 0.0, 612.0, 842.0)) == []  # another page
    [shifted] = css_boxes([a], 1, (10.0, 20.0, 622.0, 862.0))  # a crop box not at the origin
    assert shifted["left"] == "10.131%"
    assert shifted["top"] == "17.815%"


def test_highlight_matching_and_theme_fit():
    hl = ["Sleep deprivation impairs memory consolidation in adults"]
    assert is_highlighted("In a trial, sleep deprivation impairs memory consolidation in adults.", hl)
    assert is_highlighted("memory consolidation", hl)
    assert not is_highlighted("Coffee improves reaction time in the morning", hl)
    themes = {"a": {"sleep", "memory", "learning"}, "b": {"coffee", "caffeine"}}
    assert best_theme("Sleep loss harms memory", themes) == "a"
    assert best_theme("Entirely unrelated words here", themes) is None


def test_open_pdf_links_only_from_safe_keys():
    class Lib:
        library_type, library_key = "group", "123"

    assert open_pdf_link(Lib(), "ABCD2345", 0) == "zotero://open-pdf/groups/123/items/ABCD2345?page=1"
    assert open_pdf_link(Lib(), 'A"><img', 2) is None
    assert open_pdf_link(None, "ABCD2345", 2) is None
