"""Extraction-table routes: make a table over papers, fill it (a run), edit cells, add columns,
share it, export CSV and XLSX. A non-member gets 404; a member whose role is too low 403."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import JSONResponse, Response

from bayes_app.api import schemas
from bayes_app.api.deps import CookieUser, CurrentUser, StrictJSONRoute
from bayes_app.usecases import schemas as R
from bayes_app.usecases import tables as app_tables
from bayes_app.usecases.schemas import tables as RT

router = APIRouter(route_class=StrictJSONRoute)
T = "/tables/{table_id}"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _attachment(name: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{name}"'}


@router.post("/tables", status_code=201, response_model=RT.TableOut, summary="Make a table over papers")
def create_table(user: CurrentUser, body: schemas.TableCreate) -> RT.TableOut:
    """{"title", "collection_id" | "document_ids", "columns": [{"key", "question", "type": number | yes_no |
    choice | text, "choices"?}]}: rows are the collection's papers (as it is now) or the listed ones."""
    return app_tables.create_table(
        user.id, body.title, [c.model_dump() for c in body.columns], body.collection_id, body.document_ids
    )


@router.get("/tables", response_model=RT.TableList, summary="Your tables and those shared with you, newest first")
def list_tables(user: CurrentUser) -> RT.TableList:
    return app_tables.list_tables(user.id)


@router.get(T, response_model=RT.TableOut, summary="A table: columns, one row per paper, each cell with its quote")
def get_table(user: CurrentUser, table_id: str) -> RT.TableOut:
    return app_tables.get_table(user.id, table_id)


@router.delete(T, response_model=R.Deleted, summary="Delete the table (owner only); a running fill is stopped")
def delete_table(user: CurrentUser, table_id: str) -> R.Deleted:
    app_tables.delete_table(user.id, table_id)
    return R.Deleted(deleted=True)


@router.post(T + "/fill", status_code=202, response_model=RT.FillStarted, summary="Fill the table's cells (a run)")
def fill_table(
    user: CurrentUser,
    table_id: str,
    body: schemas.TableFill = schemas.TableFill(),  # no body: every column
) -> JSONResponse:
    """Fills every column (or `columns`) of every indexed paper; cells a person edited are kept.
    Follow it with GET /runs/{run_id}/events; stop it with POST /runs/{run_id}/cancel."""
    started = app_tables.fill(user.id, table_id, body.columns)
    return JSONResponse(started.model_dump(), status_code=202)


@router.post(T + "/columns", status_code=201, response_model=RT.TableOut, summary="Add a column (editor)")
def add_column(user: CurrentUser, table_id: str, body: schemas.TableColumnBody) -> RT.TableOut:
    """Then fill only it: POST /tables/{id}/fill {"columns": [key]}."""
    return app_tables.add_column(user.id, table_id, body.key, body.question, body.type, body.choices)


@router.patch(T + "/cells", response_model=RT.CellEdited, summary="Set a cell's value by hand (editor)")
def edit_cell(user: CurrentUser, table_id: str, body: schemas.CellPatch) -> RT.CellEdited:
    """The value is kept, marked `edited`, and survives later fills; null clears it."""
    return app_tables.edit_cell(user.id, table_id, body.document_id, body.column, body.value)


@router.get(
    T + "/export.csv", summary="The table as CSV (value, page, quote and status per cell); the session cookie works too"
)
def export_csv(user: CookieUser, table_id: str) -> Response:
    name, text = app_tables.export_csv(user.id, table_id)
    return Response(text, media_type="text/csv; charset=utf-8", headers=_attachment(name))


@router.get(T + "/export.xlsx", summary="The table as an Excel workbook")
def export_xlsx(user: CookieUser, table_id: str) -> Response:
    name, data = app_tables.export_xlsx(user.id, table_id)
    return Response(data, media_type=XLSX, headers=_attachment(name))


@router.get(T + "/members", response_model=RT.TableMembers, summary="The table's members (owner only)")
def list_members(user: CurrentUser, table_id: str) -> RT.TableMembers:
    return app_tables.members(user.id, table_id)


@router.post(T + "/members", status_code=201, response_model=RT.TableMemberOut, summary="Share the table (owner)")
def add_member(user: CurrentUser, table_id: str, body: schemas.MemberAdd) -> RT.TableMemberOut:
    """{"email", "role": viewer | editor}: members read the table and open its papers' quotes."""
    return app_tables.share(user.id, table_id, body.email, body.role)


@router.delete(T + "/members/{member_id}", response_model=R.Deleted, summary="Remove a member (owner), or leave")
def remove_member(user: CurrentUser, table_id: str, member_id: str) -> R.Deleted:
    app_tables.unshare(user.id, table_id, member_id)
    return R.Deleted(deleted=True)
