"""A table as CSV and XLSX: per cell its value, page and quote (three columns per question), so a
reviewer can check every value against its sentence; a person's edit is marked."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font

from bayes_app.tables.columns import Column

# Spreadsheet programs run a cell starting with one of these as a formula (CSV injection):
# such text is written with a leading apostrophe, which they show as text.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _safe(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def header(columns: Sequence[Column]) -> list[str]:
    out = ["paper", "document_id"]
    for c in columns:
        out += [c.key, f"{c.key} page", f"{c.key} quote", f"{c.key} status"]
    return out


def records(columns: Sequence[Column], rows: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """One list per paper: title, id, then value, page, quote and status per column."""
    out: list[list[Any]] = []
    for row in rows:
        line: list[Any] = [row["title"], row["document_id"]]
        for c in columns:
            cell = row["cells"].get(c.key) or {}
            status = cell.get("status") or "not_found"
            value = cell.get("value")
            line += [
                value if value is not None else ("" if status == "edited" else "not found"),
                cell.get("page"),
                cell.get("quote") or "",
                status,
            ]
        out.append([_safe(v) for v in line])
    return out


def to_csv(columns: Sequence[Column], rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header(columns))
    w.writerows(records(columns, rows))
    return buf.getvalue()


def to_xlsx(title: str, columns: Sequence[Column], rows: Sequence[dict[str, Any]]) -> bytes:
    wb = Workbook()
    ws = wb.active
    ws.title = "Table"
    ws.append(header(columns))
    for cell in ws[1]:
        cell.font = Font(bold=True)
    for line in records(columns, rows):
        ws.append(line)
    for col_cells in ws.iter_cols(min_row=2):
        for cell in col_cells:
            cell.alignment = Alignment(wrap_text=True, vertical="top")
    ws.freeze_panes = "C2"
    questions = wb.create_sheet("Columns")
    questions.append(["key", "question", "type", "options"])
    for c in columns:
        questions.append([c.key, _safe(c.question), c.type, ", ".join(c.choices)])
    wb.properties.title = title[:200]
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()
