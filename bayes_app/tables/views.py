"""How a cell travels in run events (the page applies them as they arrive)."""

from __future__ import annotations

from typing import Any

from bayes_app.models import TableCell


def cell_view(cell: TableCell) -> dict[str, Any]:
    """A cell's value, quote, page, highlight range and status."""
    return {
        "value": cell.value,
        "quote": cell.quote,
        "page": cell.page,
        "char_start": cell.char_start,
        "char_end": cell.char_end,
        "status": cell.status,
    }
