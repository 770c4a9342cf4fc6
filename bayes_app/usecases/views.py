"""View helpers for the front doors: pure display formatting and the status names a page
compares against, re-exported from the domain so that `state/`, `components/` and the HTTP
API reach the domain only through the application layer (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from bayes_app.accounts.identity import shown_email
from bayes_app.accounts.passwords import PASSWORD_RULES
from bayes_app.credits.pricing import display_credits, format_credits
from bayes_app.maps.live import support_level
from bayes_app.models import MICRO, DocStatus, NodeKind, RunStatus, utcnow
from bayes_app.search.crosslang import foreign_label, language_name
from bayes_app.search.highlight import best_quote, emphasis_segments
from bayes_app.usecases.schemas.library import SearchHit
from bayes_app.zotero.service import LOCAL_LABEL as ZOTERO_LOCAL_LABEL

__all__ = [
    "MICRO",
    "PASSWORD_RULES",
    "ZOTERO_LOCAL_LABEL",
    "DocStatus",
    "NodeKind",
    "RunStatus",
    "all_weak",
    "best_quote",
    "display_credits",
    "display_date",
    "emphasis_segments",
    "foreign_label",
    "format_credits",
    "language_name",
    "shown_email",
    "support_level",
    "utcnow",
]


def all_weak(hits: Sequence[SearchHit]) -> bool:
    """True when results exist but none is a strong match ("No strong matches")."""
    return bool(hits) and all(h.weak for h in hits)


def display_date(value: datetime | str | None, seconds: bool = False) -> str:
    """One way to show a moment on every page: "2026-11-29 01:28" (UTC; naive values are UTC),
    from a datetime or an ISO 8601 string; "" for none."""
    if not value:
        return ""
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        value = parsed
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
