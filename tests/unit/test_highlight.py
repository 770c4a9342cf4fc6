"""Where the viewer highlights a quote: the page asked for, the nearest other page, or both
sides of a page break (past the printed page number)."""

from bayes_app.library.highlight import find_quote_spans

PAGES = {
    1: "Intro text.\r\nThe lichen grows slowly\r\non granite walls.\r\nA sentence that goes on\r\n1",
    2: "to the next page here. More words on\r\npage two.\r\n2",
    3: "The lichen grows slowly on granite walls.\r\n3",
}


def _at(page: int, raw: str) -> tuple[int, int, int]:
    start = PAGES[page].index(raw)
    return page, start, start + len(raw)


def test_on_the_page_asked_for_first_then_the_nearest():
    lichen = "The lichen grows slowly on granite walls."
    assert find_quote_spans(PAGES, 1, lichen) == [_at(1, "The lichen grows slowly\r\non granite walls.")]
    assert find_quote_spans(PAGES, 3, lichen) == [_at(3, lichen)]
    assert find_quote_spans(PAGES, 2, lichen) == [_at(1, "The lichen grows slowly\r\non granite walls.")]
    assert find_quote_spans(PAGES, 3, "More words on page two.") == [_at(2, "More words on\r\npage two.")]


def test_across_a_page_break_past_the_page_number():
    spans = find_quote_spans(PAGES, 1, "A sentence that goes on to the next page here.")
    assert [(p, PAGES[p][a:b]) for p, a, b in spans] == [(1, "A sentence that goes on"), (2, "to the next page here.")]


def test_nowhere():
    assert find_quote_spans(PAGES, 1, "Not in this document at all.") == []
    assert find_quote_spans({1: "Only one page.\r\n1"}, 1, "one page. And more") == []
