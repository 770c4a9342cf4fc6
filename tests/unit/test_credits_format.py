"""Credits as people read them: rounded to hundredths; the exact figure stays available."""

from bayes_app.credits.pricing import display_credits, format_credits
from bayes_app.models import MICRO


def test_display_rounds_to_hundredths_and_names_tiny_sums() -> None:
    assert display_credits(0) == "0"
    assert display_credits(10 * MICRO) == "10"
    assert display_credits(12_345_678) == "12.35"
    assert display_credits(1_500_000) == "1.5"
    assert display_credits(50_000) == "0.05"
    assert display_credits(8_123) == "< 0.01"
    assert format_credits(8_123) == "0.008123"
    assert display_credits(-2_506_000) == "-2.51"
    assert display_credits(-3) == "> -0.01"
