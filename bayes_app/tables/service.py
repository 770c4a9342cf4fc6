"""Tables over a Session: create, read, share, edit cells, add columns, and write filled cells.

Access: the owner, and members by role (editor: fill, edit cells, add columns; viewer: read and
export); anyone else gets NotFound, never a hint that the table exists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, col, select

from bayes_app.errors import NotFound
from bayes_app.models import (
    Collection,
    DocStatus,
    Document,
    DocumentCollection,
    ExtractionTable,
    Role,
    TableCell,
    TableMember,
    User,
    utcnow,
)
from bayes_app.tables.columns import Column, TableError, check_column, check_columns
from bayes_app.tables.extract import EDITED, FOUND, NOT_FOUND, Extracted

MAX_TITLE = 300
MAX_DOCUMENTS = 2_000
MAX_TEXT_VALUE = 2_000
YES_NO = ("yes", "no", "unsure")


class TableNotFound(NotFound):
    def __init__(self) -> None:
        super().__init__("table")


@dataclass(frozen=True)
class Row:
    """One paper of a table."""

    document_id: str
    title: str
    status: str


def columns_of(table: ExtractionTable) -> list[Column]:
    return [Column.from_json(c) for c in table.columns]


def role_of(db: Session, table: ExtractionTable, user_id: str) -> str | None:
    if table.owner_id == user_id:
        return Role.OWNER
    m = db.get(TableMember, (table.id, user_id))
    return m.role if m else None


def get_for(db: Session, user_id: str, table_id: str, need: str = Role.VIEWER) -> ExtractionTable:
    """The table if `user_id` holds at least role `need` on it; NotFound for non-members,
    403 for a member whose role is too low."""
    table = db.get(ExtractionTable, table_id)
    role = role_of(db, table, user_id) if table is not None else None
    if table is None or role is None:
        raise TableNotFound()
    if Role.RANK[role] < Role.RANK[need]:
        raise TableError("forbidden_role", f"Your role on this table ({role}) does not allow this; ask its owner.", 403)
    return table


def _owned_documents(db: Session, owner_id: str, ids: list[str]) -> list[str]:
    ids = list(dict.fromkeys(i for i in ids if isinstance(i, str) and i))
    if len(ids) > MAX_DOCUMENTS:
        raise TableError("too_many_documents", f"A table holds at most {MAX_DOCUMENTS} papers.", 400)
    found = set(db.exec(select(Document.id).where(col(Document.id).in_(ids), Document.owner_id == owner_id)).all())
    missing = [i for i in ids if i not in found]
    if missing:
        raise TableError(
            "unknown_documents",
            f"{len(missing)} of the chosen papers are not in your library: {', '.join(missing[:5])}.",
            400,
        )
    return ids


def create(
    db: Session,
    owner_id: str,
    title: str,
    columns: list[Column],
    collection_id: str | None = None,
    document_ids: list[str] | None = None,
) -> ExtractionTable:
    """A new table over one of the owner's collections or a list of the owner's papers."""
    title = " ".join((title or "").split())
    if not title:
        raise TableError("missing_fields", "Give the table a title.", 400)
    if len(title) > MAX_TITLE:
        raise TableError("too_long", f"The title is longer than {MAX_TITLE} characters.", 400)
    if bool(collection_id) == bool(document_ids):
        raise TableError(
            "bad_rows",
            "Choose the papers: either a collection (collection_id) or a list of papers (document_ids).",
            400,
        )
    if collection_id:
        coll = db.get(Collection, collection_id)
        if coll is None or coll.owner_id != owner_id:
            raise NotFound("collection")
    checked = check_columns(columns)
    docs = _owned_documents(db, owner_id, document_ids or [])
    table = ExtractionTable(
        owner_id=owner_id,
        title=title,
        collection_id=collection_id or None,
        document_ids=docs,
        columns=[c.to_json() for c in checked],
    )
    db.add(table)
    db.flush()
    return table


def rows(db: Session, table: ExtractionTable) -> list[Row]:
    """The table's papers as they are now, by title."""
    query = select(Document.id, Document.title, Document.filename, Document.status).where(
        Document.owner_id == table.owner_id
    )
    if table.collection_id:
        query = query.join(DocumentCollection, col(DocumentCollection.document_id) == Document.id).where(
            DocumentCollection.collection_id == table.collection_id
        )
    else:
        query = query.where(col(Document.id).in_(table.document_ids or []))
    found = [Row(i, t or f, s) for i, t, f, s in db.exec(query).all()]
    return sorted(found, key=lambda r: (r.title.lower(), r.document_id))


def cells(db: Session, table_id: str) -> dict[tuple[str, str], TableCell]:
    return {(c.document_id, c.column_key): c for c in db.exec(select(TableCell).where(TableCell.table_id == table_id))}


def list_for(db: Session, user_id: str) -> list[tuple[ExtractionTable, str]]:
    """The user's own tables and those shared with them, newest first, with the user's role."""
    own = db.exec(select(ExtractionTable).where(ExtractionTable.owner_id == user_id)).all()
    shared = db.exec(
        select(ExtractionTable, TableMember.role)
        .join(TableMember, col(TableMember.table_id) == ExtractionTable.id)
        .where(TableMember.user_id == user_id)
    ).all()
    out = [(t, Role.OWNER) for t in own] + [(t, r) for t, r in shared]
    return sorted(out, key=lambda tr: tr[0].created_at, reverse=True)


def add_column(db: Session, table: ExtractionTable, column: Column) -> ExtractionTable:
    """Append a column (its key must be new)."""
    existing = columns_of(table)
    check_columns([*existing, column])
    table.columns = [*table.columns, column.to_json()]
    table.updated_at = utcnow()
    db.add(table)
    db.flush()
    return table


def _checked_value(column: Column, value: Any) -> Any:
    """A user's value for `column`, in its type, or TableError saying what is expected."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if column.type == "number":
        return _checked_number(column, value)
    text = " ".join(str(value).split())
    if column.type == "yes_no":
        if text.lower() not in YES_NO:
            raise TableError("bad_value", f"{column.key!r} takes yes, no or unsure.", 400)
        return text.lower()
    if column.type == "choice":
        match = next((c for c in column.choices if c.lower() == text.lower()), None)
        if match is None:
            raise TableError("bad_value", f"{column.key!r} takes one of: {', '.join(column.choices)}.", 400)
        return match
    if len(text) > MAX_TEXT_VALUE:
        raise TableError("bad_value", f"A cell holds at most {MAX_TEXT_VALUE} characters.", 400)
    return text


def _checked_number(column: Column, value: Any) -> int | float:
    """A number column's value: an int when whole; TableError for anything but a finite number."""
    if isinstance(value, bool):
        raise TableError("bad_value", f"{column.key!r} takes a number.", 400)
    try:
        number = float(str(value).replace(",", "").strip())
    except ValueError:
        raise TableError("bad_value", f"{column.key!r} takes a number, such as 120 or 3.5.", 400) from None
    if not math.isfinite(number):
        raise TableError("bad_value", f"{column.key!r} takes a finite number.", 400)
    return int(number) if number.is_integer() else number


def edit_cell(db: Session, table: ExtractionTable, user_id: str, document_id: str, key: str, value: Any) -> TableCell:
    """A person's value for one cell: kept, marked edited, never overwritten by a fill."""
    column = next((c for c in columns_of(table) if c.key == key), None)
    if column is None:
        raise TableError("unknown_column", f"This table has no column {key!r}.", 400)
    if document_id not in {r.document_id for r in rows(db, table)}:
        raise TableError("unknown_row", "That paper is not a row of this table.", 400)
    cell = db.get(TableCell, (table.id, document_id, key)) or TableCell(
        table_id=table.id, document_id=document_id, column_key=key
    )
    cell.value = _checked_value(column, value)
    cell.status = EDITED
    cell.edited_by = user_id
    cell.updated_at = utcnow()
    db.add(cell)
    db.flush()
    return cell


def to_fill(db: Session, table: ExtractionTable, keys: list[str] | None) -> tuple[list[Column], list[Row]]:
    """The columns a fill writes (all, or `keys`) and the rows it reads (indexed papers)."""
    columns = columns_of(table)
    if keys:
        unknown = [k for k in keys if k not in {c.key for c in columns}]
        if unknown:
            raise TableError("unknown_column", f"This table has no column {', '.join(map(repr, unknown))}.", 400)
        columns = [c for c in columns if c.key in keys]
    return columns, [r for r in rows(db, table) if r.status == DocStatus.INDEXED]


def write_cell(db: Session, table_id: str, document_id: str, key: str, got: Extracted, run_id: str) -> TableCell | None:
    """Store a fill's value unless a person edited the cell (their value wins); None then."""
    cell = db.get(TableCell, (table_id, document_id, key))
    if cell is not None and cell.status == EDITED:
        return None
    cell = cell or TableCell(table_id=table_id, document_id=document_id, column_key=key)
    s = got.sentence
    cell.value = got.value if got.status == FOUND else None
    cell.status = got.status if s is not None or got.status == NOT_FOUND else NOT_FOUND
    cell.quote = s.text if s else None
    cell.page = s.page if s else None
    cell.char_start = s.char_start if s else None
    cell.char_end = s.char_end if s else None
    cell.score = float(got.score)
    cell.run_id = run_id
    cell.updated_at = utcnow()
    db.add(cell)
    db.flush()
    return cell


def share(db: Session, table: ExtractionTable, by: str, email: str, role: str) -> TableMember:
    """Give a registered user a role (viewer | editor) on the table."""
    if role not in Role.GRANTABLE:
        raise TableError("bad_role", "A member is a viewer or an editor.", 400)
    user = db.exec(select(User).where(col(User.email) == (email or "").strip().lower())).first()
    if user is None:
        raise TableError("unknown_user", "No account uses that e-mail address; ask them to sign up first.", 404)
    if user.id == table.owner_id:
        raise TableError("owner", "The owner already has every right on the table.", 400)
    member = db.get(TableMember, (table.id, user.id)) or TableMember(
        table_id=table.id, user_id=user.id, added_by=by, role=role
    )
    member.role = role
    db.add(member)
    db.flush()
    return member


def unshare(db: Session, table: ExtractionTable, user_id: str) -> None:
    member = db.get(TableMember, (table.id, user_id))
    if member is not None:
        db.delete(member)
        db.flush()


def members(db: Session, table: ExtractionTable) -> list[tuple[str, str, str]]:
    """(user_id, email, role) of each member."""
    out = db.exec(
        select(TableMember.user_id, User.email, TableMember.role)
        .join(User, col(User.id) == TableMember.user_id)
        .where(TableMember.table_id == table.id)
    ).all()
    return [(u, e, r) for u, e, r in out]


def row_of_shared_table(db: Session, user_id: str, doc: Document) -> bool:
    """Is the document a row of a table its owner shared with the user? (Sharing a table
    shares its papers: the owner's decision, made in the share dialog.)"""
    tables = db.exec(
        select(ExtractionTable)
        .join(TableMember, col(TableMember.table_id) == ExtractionTable.id)
        .where(TableMember.user_id == user_id, ExtractionTable.owner_id == doc.owner_id)
    ).all()
    for t in tables:
        if t.collection_id:
            if db.get(DocumentCollection, (doc.id, t.collection_id)) is not None:
                return True
        elif doc.id in (t.document_ids or []):
            return True
    return False


__all__ = ["Column", "check_column", "TableError"]
