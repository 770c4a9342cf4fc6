"""The Tables pages' states: the list of tables with the new-table form, and one table's grid
(filled live by a run, cells edited, a cell's quote opened at its page). Every use case runs in
a thread: Reflex calls a handler on the event loop that serves every user."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode

import reflex as rx

from bayes_app.usecases import library as app_library
from bayes_app.usecases import runs as app_runs
from bayes_app.usecases import tables as app_tables
from bayes_app.usecases.schemas.tables import TableColumn, TableOut, TableSummary
from state.auth import AuthState
from state.offloop import off_loop, run_off_loop
from state.table_share import TableSharing

T = TypeVar("T")
TYPES = [("text", "Text"), ("number", "Number"), ("yes_no", "Yes / no"), ("choice", "Choice")]
PRESETS: list[dict[str, str]] = [
    {"key": "participants", "question": "How many participants were studied?", "type": "number", "choices": ""},
    {"key": "rct", "question": "Is this a randomized controlled trial?", "type": "yes_no", "choices": ""},
    {"key": "finding", "question": "What is the main finding?", "type": "text", "choices": ""},
]
NOT_FOUND = "not found"


def key_for(question: str, taken: set[str]) -> str:
    """A column key from its question ("How many participants…" → "participants")."""
    words = [w for w in re.findall(r"[a-z0-9]+", question.lower()) if len(w) > 3]
    stop = {"what", "which", "many", "much", "does", "this", "that", "were", "with", "from", "study", "paper"}
    base = "_".join([w for w in words if w not in stop][:2]) or "column"
    key, n = base[:36], 2
    while key in taken:
        key, n = f"{base[:33]}_{n}", n + 1
    return key


def cell_text(cell: dict[str, Any] | None) -> str:
    """How a cell reads in the grid: its value, or "not found"; an edit is marked."""
    if not cell:
        return ""
    value = cell.get("value")
    if value is None:
        return "" if cell.get("status") == "edited" else NOT_FOUND
    return f"{value} ✎" if cell.get("status") == "edited" else str(value)


class ColumnForm(rx.State, mixin=True):
    """The "another column" form (a question, its answer type, a choice column's options), on
    the new-table form and on a table."""

    col_question: str = ""
    col_type: str = "text"
    col_choices: str = ""

    @rx.event
    def set_col_question(self, value: str):
        self.col_question = value

    @rx.event
    def set_col_type(self, value: str):
        self.col_type = value

    @rx.event
    def set_col_choices(self, value: str):
        self.col_choices = value


class _Off(AuthState):
    """Calls a use case as the signed-in user in a worker thread."""

    async def _call(self, use_case: Callable[..., T], *args: Any, error_var: str | None = None) -> tuple[T | None, Any]:
        return await asyncio.to_thread(self._as_user, use_case, *args, error_var=error_var)


class TablesState(ColumnForm, _Off):
    tables: list[TableSummary] = []
    collections: list[dict[str, str]] = []
    new_title: str = ""
    new_collection: str = ""
    new_columns: list[dict[str, str]] = PRESETS
    form_error: str = ""

    @rx.event
    async def load(self):
        out, ev = await self._call(app_tables.list_tables)
        if ev is not None:
            return ev
        self.tables = out.tables if out else []
        rows, _ = await self._call(app_library.collections)
        self.collections = [{"id": c.id, "name": c.name} for c in rows or []]
        if self.collections and not self.new_collection:
            self.new_collection = self.collections[0]["id"]
        return None

    @rx.event
    def set_new_title(self, value: str):
        self.new_title = value

    @rx.event
    def set_new_collection(self, value: str):
        self.new_collection = value

    @rx.event
    @off_loop
    def add_new_column(self):
        question = " ".join(self.col_question.split())
        if not question:
            self.form_error = "Write the column's question first."
            return
        key = key_for(question, {c["key"] for c in self.new_columns})
        self.new_columns = [
            *self.new_columns,
            {"key": key, "question": question, "type": self.col_type, "choices": self.col_choices},
        ]
        self.col_question, self.col_choices, self.form_error = "", "", ""

    @rx.event
    def remove_new_column(self, key: str):
        self.new_columns = [c for c in self.new_columns if c["key"] != key]

    @rx.event
    async def create(self):
        columns = [
            {
                "key": c["key"],
                "question": c["question"],
                "type": c["type"],
                "choices": [o.strip() for o in c["choices"].split(",") if o.strip()] or None,
            }
            for c in self.new_columns
        ]
        out, ev = await self._call(
            app_tables.create_table,
            self.new_title or "Review table",
            columns,
            self.new_collection or None,
            None,
            error_var="form_error",
        )
        if ev is not None:
            return ev
        assert out is not None
        self.new_title = ""
        return rx.redirect(f"/tables/{out.id}")


class TableState(TableSharing, ColumnForm, _Off):
    table_id: str = ""
    title: str = ""
    role: str = ""
    columns: list[TableColumn] = []
    table: TableOut | None = None
    grid_columns: list[dict[str, Any]] = []
    grid_data: list[list[str]] = []
    row_ids: list[str] = []
    screening: list[dict[str, str]] = []
    sort_key: str = "paper"
    filter_text: str = ""
    only_missing: bool = False
    # the selected cell
    sel_document: str = ""
    sel_paper: str = ""
    sel_column: str = ""
    sel_question: str = ""
    sel_value: str = ""
    sel_status: str = ""
    sel_quote: str = ""
    sel_page: int = 0
    sel_link: str = ""
    sel_edit: str = ""
    # the live fill
    run_id: str = ""
    done: int = 0
    total: int = 0
    filling: bool = False
    fill_note: str = ""
    _gen: int = 0
    error: str = ""

    @rx.var
    def can_edit(self) -> bool:
        return self.role in ("owner", "editor")

    @rx.var
    def progress(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    @rx.var
    def csv_url(self) -> str:
        return f"/api/v1/tables/{self.table_id}/export.csv" if self.table_id else ""

    @rx.var
    def xlsx_url(self) -> str:
        return f"/api/v1/tables/{self.table_id}/export.xlsx" if self.table_id else ""

    def _rebuild(self) -> None:
        """The grid's columns and rows from the table, sorted and filtered as the user chose."""
        t = self.table
        if t is None:
            self.grid_columns, self.grid_data, self.row_ids, self.screening = [], [], [], []
            return
        editable = self.role in ("owner", "editor")
        self.columns = t.columns
        self.grid_columns = [{"title": "Paper", "id": "paper", "type": "str", "editable": False, "width": 260}] + [
            {"title": c.question, "id": c.key, "type": "str", "editable": editable, "width": 220} for c in t.columns
        ]
        rows = []
        needle = self.filter_text.lower().strip()
        for r in t.rows:
            cells = {k: c.model_dump() for k, c in r.cells.items()}
            texts = [cell_text(cells.get(c.key)) for c in t.columns]
            if needle and needle not in (r.title + " " + " ".join(texts)).lower():
                continue
            if self.only_missing and NOT_FOUND not in texts and "" not in texts:
                continue
            rows.append((r.document_id, [r.title, *texts], cells))
        if self.sort_key != "paper":
            idx = 1 + next((i for i, c in enumerate(t.columns) if c.key == self.sort_key), -1)

            def sort_value(row: tuple[str, list[str], dict]) -> tuple[int, float, str]:
                text = row[1][idx] if idx > 0 else ""
                num = re.sub(r"[^\d.]", "", text)
                return (text in ("", NOT_FOUND), -float(num) if num and num.count(".") <= 1 else 0.0, text.lower())

            rows.sort(key=sort_value)
        self.row_ids = [d for d, _, _ in rows]
        self.grid_data = [texts for _, texts, _ in rows]
        self.screening = [
            {
                "column": s.column,
                "line": f"{s.screened} screened · {s.included} included · {s.excluded} excluded · "
                f"{s.unsure} unsure · {s.not_screened} not screened",
            }
            for s in t.screening
        ]

    async def _reload(self) -> Any:
        out, ev = await self._call(app_tables.get_table, self.table_id)
        if ev is not None:
            return ev
        self.table = out
        self.title, self.role = (out.title, out.role) if out else ("", "")
        await run_off_loop(self._rebuild)
        return None

    @rx.event
    async def load(self):
        self.table_id = str(self.router.page.params.get("table_id", ""))
        self.sel_document, self.error, self.fill_note = "", "", ""
        ev = await self._reload()
        if ev is not None:
            return ev
        if self.table is None:
            return rx.redirect("/tables")
        self.share_error = ""
        return await self._load_members()

    @rx.event
    async def set_sort(self, key: str):
        self.sort_key = key
        await run_off_loop(self._rebuild)

    @rx.event
    async def set_filter(self, text: str):
        self.filter_text = text
        await run_off_loop(self._rebuild)

    @rx.event
    async def set_only_missing(self, value: bool):
        self.only_missing = value
        await run_off_loop(self._rebuild)

    def _select(self, row: int, col: int) -> None:
        t = self.table
        if t is None or not 0 <= row < len(self.row_ids) or not 1 <= col <= len(t.columns):
            return
        doc = self.row_ids[row]
        column = t.columns[col - 1]
        r = next(r for r in t.rows if r.document_id == doc)
        cell = r.cells.get(column.key)
        self.sel_document, self.sel_paper = doc, r.title
        self.sel_column, self.sel_question = column.key, column.question
        self.sel_value = cell_text(cell.model_dump()) if cell else ""
        self.sel_status = cell.status if cell else "not_filled"
        self.sel_quote = (cell.quote or "") if cell else ""
        self.sel_page = (cell.page or 0) if cell else 0
        self.sel_link = (
            f"/documents/{doc}?" + urlencode({"page": self.sel_page, "quote": self.sel_quote}) if self.sel_quote else ""
        )
        self.sel_edit = "" if cell is None or cell.value is None else str(cell.value)

    def _reselect(self) -> None:
        """Select the edited cell again (its row may have moved)."""
        row = self.row_ids.index(self.sel_document) if self.sel_document in self.row_ids else -1
        col = 1 + next((i for i, c in enumerate(self.columns) if c.key == self.sel_column), -1)
        self._select(row, col)

    @rx.event
    @off_loop
    def select_cell(self, pos: tuple[int, int]):
        col, row = pos
        self._select(row, col)

    @rx.event
    def set_sel_edit(self, value: str):
        self.sel_edit = value

    async def _edit(self, document_id: str, column: str, value: str) -> Any:
        out, ev = await self._call(app_tables.edit_cell, self.table_id, document_id, column, value or None)
        if ev is not None:
            return ev
        return await self._reload()

    @rx.event
    async def save_edit(self):
        if not self.sel_document:
            return None
        ev = await self._edit(self.sel_document, self.sel_column, self.sel_edit)
        if ev is not None:
            return ev
        await run_off_loop(self._reselect)
        return rx.toast.success("Saved; a later fill keeps your value.")

    @rx.event
    async def cell_edited(self, pos: tuple[int, int], cell: dict[str, Any]):
        col, row = pos
        if not 1 <= col <= len(self.columns) or not 0 <= row < len(self.row_ids):
            return None
        value = str(cell.get("data", "") or "").removesuffix(" ✎").strip()
        if value == NOT_FOUND:
            return None
        return await self._edit(self.row_ids[row], self.columns[col - 1].key, value)

    @rx.event
    async def add_column(self):
        question = " ".join(self.col_question.split())
        key = key_for(question, {c.key for c in self.columns})
        choices = [o.strip() for o in self.col_choices.split(",") if o.strip()] or None
        out, ev = await self._call(
            app_tables.add_column, self.table_id, key, question, self.col_type, choices, error_var="error"
        )
        if ev is not None:
            return ev
        self.col_question, self.col_choices = "", ""
        await self._reload()
        return TableState.fill([key])  # type: ignore[operator]

    @rx.event
    async def fill_all(self):
        return TableState.fill([])  # type: ignore[operator]

    @rx.event
    async def fill(self, columns: list[str]):
        out, ev = await self._call(app_tables.fill, self.table_id, columns or None, error_var="error")
        if ev is not None:
            return ev
        assert out is not None
        self.run_id, self.done, self.total, self.filling = out.run_id, 0, 0, True
        self.fill_note = "Filling…"
        self._gen += 1
        return TableState.follow(self._gen)  # type: ignore[misc]

    @rx.event
    async def stop(self):
        if self.run_id:
            await asyncio.to_thread(app_runs.stop, self.run_id)
            self.fill_note = "Stopping…"

    @rx.event(background=True)
    async def follow(self, gen: int):
        """Apply the fill's events as they arrive: each paper's cells, then its progress."""
        async with self:
            run_id = self.run_id
        follower = app_runs.follower(run_id)
        try:
            while True:
                batch = await follower.next()
                async with self:
                    if self._gen != gen:
                        return
                    changed = finished = False
                    for ev in batch:
                        if ev.type == "progress":
                            self.done, self.total = int(ev.data.get("done", 0)), int(ev.data.get("total", 0))
                        elif ev.type == "cells":
                            changed = True
                        elif ev.type == "done":
                            finished = True
                    if changed or finished:
                        await self._reload()
                    if finished:
                        info = await asyncio.to_thread(app_runs.info, run_id)
                        status = info.status if info else ""
                        self.filling = False
                        self.fill_note = {
                            "SUCCEEDED": "Filled.",
                            "CANCELLED": "Stopped; the cells filled so far are kept.",
                        }.get(status, "The fill did not finish; try again.")
                        return
        finally:
            await follower.aclose()
