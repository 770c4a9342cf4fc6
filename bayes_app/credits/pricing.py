"""Model prices and the cost of a usage, in integer micro-credits (rounded up)."""

from __future__ import annotations

from sqlmodel import Session, select

from bayes_app.models import MICRO, ModelPrice, utcnow

TOKENS_PER_PRICE_UNIT = 1_000_000  # prices are per million tokens


class PriceMissing(LookupError):
    """The model has no row in the price table, so it cannot be used."""

    def __init__(self, model: str):
        super().__init__(f"Model {model} has no price; an admin must set one")
        self.model = model


def format_credits(micro: int) -> str:
    """Micro-credits as a human number of credits: 1_500_000 -> "1.5"."""
    sign = "-" if micro < 0 else ""
    whole, frac = divmod(abs(micro), MICRO)
    return f"{sign}{whole}.{frac:06d}".rstrip("0").rstrip(".") if frac else f"{sign}{whole}"


def display_credits(micro: int) -> str:
    """Micro-credits rounded for reading: two decimals ("12.35", "0.05", "10"), "< 0.01" for
    less than a hundredth (show `format_credits` beside it, e.g. in a tooltip, for the exact sum)."""
    if micro == 0:
        return "0"
    if abs(micro) < MICRO // 100:
        return "< 0.01" if micro > 0 else "> -0.01"
    cents = round(micro / (MICRO // 100))
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}{whole}.{frac:02d}".rstrip("0").rstrip(".") if frac else f"{sign}{whole}"


def cost_micro(price: ModelPrice, input_tokens: int, cached_tokens: int, output_tokens: int) -> int:
    """Micro-credits for one usage. `cached_tokens` is the cached part of `input_tokens`.

    One ceiling over the exact sum, so many small calls are never charged less than the
    tokens they used and never more than one micro-credit above it.
    """
    if min(input_tokens, cached_tokens, output_tokens) < 0:
        raise ValueError("token counts must be >= 0")
    cached = min(cached_tokens, input_tokens)
    numerator = (
        (input_tokens - cached) * price.input_per_million
        + cached * price.cached_per_million
        + output_tokens * price.output_per_million
    )
    return -(-numerator // TOKENS_PER_PRICE_UNIT)


def get_price(db: Session, model: str) -> ModelPrice:
    """The model's price row, or PriceMissing."""
    price = db.get(ModelPrice, model)
    if price is None:
        raise PriceMissing(model)
    return price


def list_prices(db: Session) -> list[ModelPrice]:
    return list(db.exec(select(ModelPrice).order_by(ModelPrice.model)).all())


def set_price(
    db: Session,
    model: str,
    input_per_million: int,
    cached_per_million: int,
    output_per_million: int,
    updated_by: str | None = None,
) -> ModelPrice:
    """Create or update a model's price (micro-credits per million tokens). Caller commits.

    Usage already recorded keeps the cost computed at its own time.
    """
    model = model.strip()
    if not model:
        raise ValueError("model name is required")
    values = (input_per_million, cached_per_million, output_per_million)
    if any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in values):
        raise ValueError("prices must be integers >= 0 (micro-credits per million tokens)")
    price = db.get(ModelPrice, model) or ModelPrice(
        model=model, input_per_million=0, cached_per_million=0, output_per_million=0
    )
    price.input_per_million, price.cached_per_million, price.output_per_million = values
    price.updated_at = utcnow()
    price.updated_by = updated_by
    db.add(price)
    db.flush()
    return price
