"""Quote normalisation and location, on synthetic strings and real pdfium page text."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from bayes_app.library.pdf import PageText, extract_pages
from bayes_app.library.quotes import locate_quote, normalize, quote_in_text

PAPERS = Path(__file__).resolve().parents[1] / "fixtures" / "papers"


@cache
def _pages(name: str) -> tuple[PageText, ...]:
    return tuple(extract_pages(PAPERS / name))


def _check_map(raw: str) -> None:
    norm = normalize(raw)
    assert len(norm.index_map) == len(norm.text)
    assert list(norm.index_map) == sorted(norm.index_map)
    assert all(0 <= i < len(raw) for i in norm.index_map)


# --------------------------------------------------------------------------- normalize


def test_whitespace_case_and_typography() -> None:
    assert normalize("  Hello,\r\n\tWORLD  ").text == "hello, world"
    assert normalize("“Smart” ‘quotes’ and Selector’s").text == "\"smart\" 'quotes' and selector's"
    assert normalize("a – b — c − d").text == "a - b - c - d"
    assert normalize("Straße café naïve").text == "strasse cafe naive"
    # pdfium emits some accents detached from their letter
    assert normalize("M¨uller and Jim´enez").text == "muller and jimenez"
    assert normalize("x\x10\r\ny\uf8f2z").text == "x y z"  # control / private-use glyphs
    assert normalize("").text == ""
    assert normalize(" \r\n ").text == ""


def test_hyphenation_is_joined() -> None:
    for raw in (
        "hyphen-\nation",
        "hyphen-\r\nation",
        "hyphen\u00adation",
        "hyphen\ufffeation",
        "hyphen\ufffe\r\nation",
        "hyphen\u0002\r\nation",
        "hyphenation",
        "hyphen‐ation",
    ):
        assert normalize(raw).text == "hyphenation", raw
        _check_map(raw)
    # compound words compare equal whether or not they were broken at a line end
    assert normalize("state-of-\r\nthe-art").text == normalize("state-of-the-art").text
    assert normalize("K.-\r\nR. Müller").text == normalize("K.-R. Müller").text == "k.-r. muller"
    assert normalize("pre- and post-processing").text == "pre- and postprocessing"


def test_ligatures_expand_and_map_to_the_ligature() -> None:
    raw = "e\ufb03cient \ufb01eld \ufb02ow o\ufb00 ba\ufb04e"
    norm = normalize(raw)
    assert norm.text == "efficient field flow off baffle"
    assert [norm.index_map[k] for k in range(1, 4)] == [1, 1, 1]  # "ffi" -> the ﬃ at offset 1
    _check_map(raw)


# --------------------------------------------------------------------------- locate_quote


def test_locate_across_line_break_and_hyphenation_on_real_page() -> None:
    text = _pages("pasa.pdf")[0].text
    quote = (
        "Despite being trained on synthetic data, PaSa significantly outperforms existing baselines on RealScholarQuery"
    )
    span = locate_quote(text, quote)
    assert span is not None
    raw = text[span[0] : span[1]]
    assert raw.startswith("De\ufffespite")
    assert raw.endswith("RealScholarQuery")
    assert "sig\ufffenificantly" in raw
    assert "\r\n" in raw  # both obstacles really are inside
    assert normalize(raw).text == normalize(quote).text


def test_locate_across_plain_hyphen_at_line_end_on_real_page() -> None:
    text = _pages("explanations-molecular-prediction-models.pdf")[23].text
    span = locate_quote(text, "Gastegger, M.; Müller, K.-R.; Tkatchenko, A.")
    assert span is not None
    assert text[span[0] : span[1]] == "Gastegger, M.; M¨uller, K.-\r\nR.; Tkatchenko, A."


def test_locate_across_ligatures_on_real_page() -> None:
    # pdfium already expands the ligatures of these papers, so put them back into real page text.
    text = _pages("pasa.pdf")[0].text.replace("fi", "\ufb01")
    quote = "includes 35k fine-grained academic queries and corresponding papers"
    span = locate_quote(text, quote)
    assert span is not None
    assert text[span[0] : span[1]] == ("includes 35k \ufb01ne-grained academic queries and\r\ncorresponding papers")
    start, end = locate_quote(text, "ine-grained academic")  # starts inside the ligature
    assert text[start] == "\ufb01"
    assert text[start:end].endswith("academic")


def test_quote_on_page_7_of_pasa_is_found_there() -> None:
    pages = _pages("pasa.pdf")
    quote = (
        "the decision token is presented before the rationale, allowing the Selector to act "
        "as a single-token reward model during the Crawler training"
    )
    assert [p.number for p in pages if locate_quote(p.text, quote)] == [7]
    start, end = locate_quote(pages[6].text, quote)
    assert pages[6].text[start:end].startswith("the decision token")
    assert "ratio\ufffenale" in pages[6].text[start:end]
    # typographic apostrophe in the PDF, ASCII in the quote
    assert quote_in_text(pages[6].text, "does not affect the Selector's performance")


def test_missing_or_empty_quotes() -> None:
    text = _pages("pasa.pdf")[6].text
    assert locate_quote(text, "the decision token is presented after the rationale") is None
    assert locate_quote(text, "") is None
    assert locate_quote(text, " \n ") is None
    assert not quote_in_text(text, "")
    assert not quote_in_text(text, "PaSa is a cooking robot")
    assert quote_in_text(text, "WE SEQUENTIALLY TRAINED the selector and crawler")


def test_offsets_are_raw_offsets_for_simple_text() -> None:
    text = "Alpha  beta\r\ngam\ufffema delta"
    assert locate_quote(text, "beta gamma") == (7, 19)
    assert text[7:19] == "beta\r\ngam\ufffema"
    assert locate_quote(text, "alpha") == (0, 5)
    assert locate_quote(text, "delta") == (20, 25)
    assert text[20:25] == "delta"


def test_loose_location_ignores_punctuation_and_spacing_but_not_letters():
    from bayes_app.library.quotes import locate_quote_loose

    page = "Crawler Paper Queue\r\nUser Query\r\nSelector [Search] [Expand]"
    start, end = locate_quote_loose(page, "Crawler Paper-Queue User Query: Selector")
    assert page[start:end] == "Crawler Paper Queue\r\nUser Query\r\nSelector"
    assert locate_quote_loose(page, "Crawler Paper Queue User Quarry Selector") is None
    assert locate_quote_loose(page, "[Stop]") is None  # too short for letters alone, and absent
