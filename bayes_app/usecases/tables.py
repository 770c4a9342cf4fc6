"""Extraction-table use cases, each one transaction: make, read, share, edit, fill, export."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlmodel import Session

from bayes_app.db import session_scope, sessions
from bayes_app.models import ExtractionTable, Role
from bayes_app.redis_client import get_redis
from bayes_app.runs import service as run_service
from bayes_app.settings import get_settings
from bayes_app.tables import export, service
from bayes_app.tables.columns import Column, check_column
from bayes_app.tables.fill import RESOURCE
from bayes_app.tables.start import start_fill
from bayes_app.tables.views import cell_view
from bayes_app.usecases import runs
from bayes_app.usecases.schemas.tables import (
    CellEdited,
    CellOut,
    FillStarted,
    ScreeningCounts,
    TableColumn,
    TableList,
    TableMemberOut,
    TableMembers,
    TableOut,
    TableRowOut,
    TableSummary,
)

__all__ = ["Column", "check_column"]


def _rows(db: Session, table: ExtractionTable) -> list[dict[str, Any]]:
    cells = service.cells(db, table.id)
    keys = [c["key"] for c in table.columns]
    out = []
    for r in service.rows(db, table):
        row_cells = {k: cell_view(c) for k in keys if (c := cells.get((r.document_id, k))) is not None}
        out.append({"document_id": r.document_id, "title": r.title, "cells": row_cells})
    return out


def _screening(columns: list[Column], rows: list[dict[str, Any]]) -> list[ScreeningCounts]:
    out = []
    for c in columns:
        if c.type != "yes_no":
            continue
        seen = Counter(((row["cells"].get(c.key) or {}).get("value") or "") for row in rows)
        out.append(
            ScreeningCounts(
                column=c.key,
                screened=len(rows) - seen[""],
                included=seen["yes"],
                excluded=seen["no"],
                unsure=seen["unsure"],
                not_screened=seen[""],
            )
        )
    return out


def _view(db: Session, table: ExtractionTable, role: str) -> TableOut:
    rows = _rows(db, table)
    columns = service.columns_of(table)
    return TableOut(
        id=table.id,
        title=table.title,
        role=role,
        collection_id=table.collection_id,
        columns=[TableColumn.model_validate(c.to_json()) for c in columns],
        rows=[
            TableRowOut(
                document_id=r["document_id"],
                title=r["title"],
                cells={k: CellOut.model_validate(v) for k, v in r["cells"].items()},
            )
            for r in rows
        ],
        screening=_screening(columns, rows),
        created_at=table.created_at.isoformat(),
        updated_at=table.updated_at.isoformat(),
    )


def create_table(
    user_id: str,
    title: str,
    columns: list[dict[str, Any]],
    collection_id: str | None = None,
    document_ids: list[str] | None = None,
) -> TableOut:
    """A new table over one of the user's collections or a list of the user's papers."""
    checked = [
        check_column(c.get("key", ""), c.get("question", ""), c.get("type", ""), c.get("choices")) for c in columns
    ]
    with session_scope() as db:
        table = service.create(db, user_id, title, checked, collection_id, document_ids)
        return _view(db, table, Role.OWNER)


def list_tables(user_id: str) -> TableList:
    """The user's tables and those shared with them, newest first."""
    with session_scope() as db:
        return TableList(
            tables=[
                TableSummary(
                    id=t.id, title=t.title, role=role, columns=len(t.columns), created_at=t.created_at.isoformat()
                )
                for t, role in service.list_for(db, user_id)
            ]
        )


def get_table(user_id: str, table_id: str) -> TableOut:
    """The table with every row and cell (members only)."""
    with session_scope() as db:
        table = service.get_for(db, user_id, table_id)
        return _view(db, table, service.role_of(db, table, user_id) or Role.VIEWER)


def delete_table(user_id: str, table_id: str) -> None:
    """The owner deletes the table; a fill still working on it is cancelled and settled."""
    with session_scope() as db:
        table = service.get_for(db, user_id, table_id, Role.OWNER)
        db.delete(table)
    ids = run_service.cancel_resource_runs(sessions, get_redis(), RESOURCE, table_id)
    runs.settle_cancelled(ids)


def add_column(user_id: str, table_id: str, key: str, question: str, type_: str, choices: list[str] | None) -> TableOut:
    """An editor adds a column (fill it with `start_fill(columns=[key])`)."""
    column = check_column(key, question, type_, choices)
    with session_scope() as db:
        table = service.get_for(db, user_id, table_id, Role.EDITOR)
        service.add_column(db, table, column)
        return _view(db, table, service.role_of(db, table, user_id) or Role.EDITOR)


def edit_cell(user_id: str, table_id: str, document_id: str, column: str, value: Any) -> CellEdited:
    """An editor's value for a cell: kept, marked edited, never overwritten by a fill."""
    with session_scope() as db:
        table = service.get_for(db, user_id, table_id, Role.EDITOR)
        cell = service.edit_cell(db, table, user_id, document_id, column, value)
        return CellEdited(document_id=document_id, column=column, **cell_view(cell))


def fill(user_id: str, table_id: str, columns: list[str] | None = None) -> FillStarted:
    """Start filling the table (every column, or `columns`); the caller's credits pay for it."""
    settings = get_settings()
    with session_scope() as db:
        table = service.get_for(db, user_id, table_id, Role.EDITOR)
        op = start_fill(db, user_id, table, columns, settings.model_default, settings.run_reserve_output_tokens)
        op_id, status = op.id, op.status
    runs.submit(op_id, status)
    return FillStarted(run_id=op_id, status=status)


def export_csv(user_id: str, table_id: str) -> tuple[str, str]:
    """(file name, CSV text): per cell its value, page, quote and status."""
    with session_scope() as db:
        table = service.get_for(db, user_id, table_id)
        return _filename(table, "csv"), export.to_csv(service.columns_of(table), _rows(db, table))


def export_xlsx(user_id: str, table_id: str) -> tuple[str, bytes]:
    """(file name, XLSX bytes): the same columns as the CSV, and a sheet of the questions."""
    with session_scope() as db:
        table = service.get_for(db, user_id, table_id)
        return _filename(table, "xlsx"), export.to_xlsx(table.title, service.columns_of(table), _rows(db, table))


def _filename(table: ExtractionTable, ext: str) -> str:
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in table.title.lower())[:60].strip("-")
    return f"{stem or 'table'}.{ext}"


def members(user_id: str, table_id: str) -> TableMembers:
    """The table's members (the owner's view)."""
    with session_scope() as db:
        table = service.get_for(db, user_id, table_id, Role.OWNER)
        return TableMembers(
            members=[TableMemberOut(user_id=u, email=e, role=r) for u, e, r in service.members(db, table)]
        )


def share(user_id: str, table_id: str, email: str, role: str) -> TableMemberOut:
    """The owner gives a registered user a role on the table (its papers become readable to them)."""
    with session_scope() as db:
        table = service.get_for(db, user_id, table_id, Role.OWNER)
        m = service.share(db, table, user_id, email, role)
        return TableMemberOut(user_id=m.user_id, email=email.strip().lower(), role=m.role)


def unshare(user_id: str, table_id: str, member_id: str) -> None:
    """The owner removes a member, or a member leaves."""
    with session_scope() as db:
        table = service.get_for(db, user_id, table_id)
        if member_id != user_id:
            table = service.get_for(db, user_id, table_id, Role.OWNER)
        service.unshare(db, table, member_id)
