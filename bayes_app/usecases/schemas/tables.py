"""What the table use cases return: tables, their rows and cells, members.

Built by the use cases inside their sessions and used as is by the HTTP API as
`response_model`s and by the Tables page's state."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class TableColumn(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    key: str
    question: str
    type: str  # number | yes_no | choice | text
    choices: list[str] = []


class CellOut(BaseModel):
    value: Any = None  # a number, "yes" | "no" | "unsure", an option, or text; None: not found
    quote: str | None = None  # the verbatim sentence the value rests on
    page: int | None = None
    status: str = "not_found"  # found | not_found | edited


class TableRowOut(BaseModel):
    document_id: str
    title: str
    cells: dict[str, CellOut]


class ScreeningCounts(BaseModel):
    """What a PRISMA flow diagram needs, per yes/no column: screened, included, excluded, unsure."""

    column: str
    screened: int
    included: int
    excluded: int
    unsure: int
    not_screened: int


class TableOut(BaseModel):
    id: str
    title: str
    role: str  # the caller's: owner | editor | viewer
    collection_id: str | None
    columns: list[TableColumn]
    rows: list[TableRowOut]
    screening: list[ScreeningCounts]
    created_at: str
    updated_at: str


class TableSummary(BaseModel):
    id: str
    title: str
    role: str
    columns: int
    created_at: str


class TableList(BaseModel):
    tables: list[TableSummary]


class CellEdited(CellOut):
    document_id: str
    column: str


class FillStarted(BaseModel):
    run_id: str
    status: str


class TableMemberOut(BaseModel):
    user_id: str
    email: str
    role: str


class TableMembers(BaseModel):
    members: list[TableMemberOut]
