"""One credit formatter and one date formatter across pages (#40), and the "what a credit buys" line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from bayes_app.usecases.views import MICRO, display_credits, display_date
from state.credits import buys_line


def test_display_date_one_format_from_datetimes_and_iso_strings():
    moment = datetime(2026, 11, 29, 1, 28, 41)
    assert display_date(moment) == "2026-11-29 01:28"
    assert display_date("2026-11-29T01:28:41.123456") == "2026-11-29 01:28"
    assert display_date("2026-11-29T01:28:41Z") == "2026-11-29 01:28"
    assert display_date(moment.replace(tzinfo=timezone(timedelta(hours=2)))) == "2026-11-28 23:28"
    assert display_date(moment.replace(tzinfo=UTC), seconds=True) == "2026-11-29 01:28:41"
    assert display_date(None) == ""
    assert display_date("") == ""


def test_display_credits_two_decimals():
    assert display_credits(9_979_576) == "9.98"
    assert display_credits(5_088) == "< 0.01"
    assert display_credits(-5_088) == "> -0.01"


def test_buys_line_from_typical_charges():
    assert buys_line({}) == ""
    line = buys_line({"ask": 8_000, "build_map": 400_000})
    assert line == "One credit buys about 125 questions or about 2 map runs."
    assert buys_line({"ask": 8_000, "build_map": 2 * MICRO}) == (
        "One credit buys about 125 questions. A map run costs about 2 credits."
    )
