"""The append-only credit ledger: grant, reserve, spend, release, adjust.

Amounts are signed integer micro-credits (see `bayes_app.models.credits` for the sign
convention): balance = Σ grant/spend/adjust, held = Σ reserve/release,
available = balance − held. Every row has a unique idempotency key and is inserted with
ON CONFLICT DO NOTHING, so retrying any write is safe.

Functions here never commit: they are the building blocks of the caller's transaction
(`create_operation`, `finalize`, an admin route's `session_scope`). Those that check or
change what a user can spend take the user's credit lock first (`write_lock`), which is
held until the caller commits or rolls back, so commit promptly.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import text
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, SQLModel, col, func, select

from bayes_app.credits.pricing import format_credits
from bayes_app.models import EntryType, IsoTime, LedgerEntry, Run, User, new_id, utcnow


class InsufficientCredits(Exception):
    """The user cannot cover a run's estimate; nothing was created."""

    def __init__(self, needed: int, available: int):
        super().__init__(
            f"Not enough credits: this run needs up to {format_credits(needed)} credits, "
            f"but only {format_credits(max(available, 0))} are available."
        )
        self.needed = needed
        self.available = available


# ---- database helpers shared with the run lifecycle ---------------------------------------
def write_lock(db: Session, key: str, *, shared: bool = False) -> None:
    """Serialise writers on `key` until the current transaction ends.

    SQLite: `BEGIN IMMEDIATE` takes the database's single write lock (all keys at once).
    If this connection already holds a write transaction it already has that lock.
    PostgreSQL: a transaction-scoped advisory lock on hashtextextended(key, 0); `shared`
    lets holders of the same key run together while excluding the exclusive holder.
    Call it before reading what the decision depends on.
    """
    conn = db.connection()
    dialect = conn.dialect.name
    if dialect == "sqlite":
        # pysqlite (legacy transaction mode) opens a transaction only before DML, so a
        # connection that has only read is not in one and can start an IMMEDIATE one.
        raw = conn.connection.dbapi_connection
        if raw is not None and not raw.in_transaction:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif dialect == "postgresql":
        fn = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        conn.execute(text(f"SELECT {fn}(hashtextextended(:k, 0))"), {"k": key})
    else:
        raise RuntimeError(f"unsupported database dialect for ledger locks: {dialect}")


def insert_ignore(db: Session, model: type[SQLModel], values: dict[str, Any], conflict: list[str]) -> bool:
    """INSERT … ON CONFLICT (conflict) DO NOTHING; True when a row was inserted."""
    table = model.__table__  # type: ignore[attr-defined]
    dialect = db.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = (
        insert(table)
        .values(**values)
        .on_conflict_do_nothing(index_elements=conflict)
        .returning(*table.primary_key.columns)
    )
    # RETURNING, not rowcount: SQLAlchemy does not report rowcount for INSERTs on psycopg.
    return db.exec(stmt).first() is not None


def credit_lock_key(user_id: str) -> str:
    return f"credits:{user_id}"


def _uid(user: User | str) -> str:
    return user if isinstance(user, str) else user.id


def insert_entry(
    db: Session,
    user_id: str,
    entry_type: str,
    amount: int,
    key: str,
    *,
    operation_id: str | None = None,
    note: str | None = None,
) -> bool:
    """Append one ledger row unless its idempotency key exists; True when inserted."""
    return insert_ignore(
        db,
        LedgerEntry,
        {
            "id": new_id(),
            "user_id": user_id,
            "operation_id": operation_id,
            "entry_type": entry_type,
            "amount": amount,
            "idempotency_key": key,
            "note": note[:500] if note else None,
            "created_at": utcnow(),
        },
        ["idempotency_key"],
    )


# ---- balances -----------------------------------------------------------------------------
def _sums(db: Session, user_id: str) -> tuple[int, int]:
    """(balance, held) from one SELECT, so both come from the same snapshot."""

    def total(types: tuple[str, ...]) -> Any:
        return func.coalesce(func.sum(LedgerEntry.amount).filter(col(LedgerEntry.entry_type).in_(types)), 0)

    bal, hold = db.exec(
        select(total(EntryType.BALANCE), total(EntryType.HOLD)).where(LedgerEntry.user_id == user_id)
    ).one()
    return int(bal), int(hold)


def balance(db: Session, user: User | str) -> int:
    """Σ grant + spend + adjust, in micro-credits."""
    return _sums(db, _uid(user))[0]


def held(db: Session, user: User | str) -> int:
    """Σ reserve + release: credits set aside for runs not yet settled."""
    return _sums(db, _uid(user))[1]


def available(db: Session, user: User | str) -> int:
    """balance − held: what a new run may reserve."""
    bal, hold = _sums(db, _uid(user))
    return bal - hold


def summaries(db: Session) -> dict[str, tuple[int, int]]:
    """user id → (balance, held) for every user with ledger rows (admin dashboard)."""
    bal = func.sum(LedgerEntry.amount).filter(col(LedgerEntry.entry_type).in_(EntryType.BALANCE))
    hold = func.sum(LedgerEntry.amount).filter(col(LedgerEntry.entry_type).in_(EntryType.HOLD))
    rows = db.exec(select(LedgerEntry.user_id, bal, hold).group_by(LedgerEntry.user_id)).all()
    return {uid: (int(b or 0), int(h or 0)) for uid, b, h in rows}


# ---- writes -------------------------------------------------------------------------------
def grant(db: Session, user: User | str, amount: int, key: str, note: str | None = None) -> bool:
    """Give credits. Idempotent by `key`; True when a new row was written."""
    if amount <= 0:
        raise ValueError("a grant must be > 0 micro-credits")
    uid = _uid(user)
    write_lock(db, credit_lock_key(uid))
    return insert_entry(db, uid, EntryType.GRANT, amount, key, note=note)


def adjust(db: Session, user: User | str, amount: int, key: str, note: str | None = None) -> bool:
    """An admin correction of the balance (either sign). Idempotent by `key`."""
    if amount == 0:
        raise ValueError("an adjustment must not be 0")
    uid = _uid(user)
    write_lock(db, credit_lock_key(uid))
    return insert_entry(db, uid, EntryType.ADJUST, amount, key, note=note)


def ensure_available(db: Session, user: User | str, amount: int) -> int:
    """Take the user's credit lock and raise InsufficientCredits unless `amount` fits."""
    uid = _uid(user)
    write_lock(db, credit_lock_key(uid))
    avail = available(db, uid)
    if amount > avail:
        raise InsufficientCredits(amount, avail)
    return avail


def reserve(db: Session, op: Run, amount: int) -> LedgerEntry:
    """Hold `amount` for the run `op` (key reserve:{op.id}); idempotent and race-safe.

    Two concurrent reserves for one user are serialised by the credit lock, so they cannot
    both pass when only one fits. A repeated call returns the existing row unchanged.
    """
    if amount < 0:
        raise ValueError("a reserve must be >= 0 micro-credits")
    key = f"reserve:{op.id}"
    write_lock(db, credit_lock_key(op.owner_id))
    existing = db.exec(select(LedgerEntry).where(LedgerEntry.idempotency_key == key)).first()
    if existing is not None:
        return existing
    ensure_available(db, op.owner_id, amount)
    insert_entry(db, op.owner_id, EntryType.RESERVE, amount, key, operation_id=op.id)
    op.reserved_credits = amount
    db.add(op)
    db.flush()
    return db.exec(select(LedgerEntry).where(LedgerEntry.idempotency_key == key)).one()


# ---- what the user sees -------------------------------------------------------------------
class HistoryRow(BaseModel):
    """One line of a user's credit history: a whole run, or a grant / adjustment."""

    model_config = ConfigDict(frozen=True)

    kind: str  # "run" | "grant" | "adjust"
    id: str
    title: str
    date: IsoTime
    amount: int | None  # signed change of the balance; None while a run is not settled
    status: str | None
    charged: int | None
    reserved: int | None
    operation_kind: str | None


def history(db: Session, user: User | str, limit: int = 200) -> list[HistoryRow]:
    """Newest first: one row per run (never its steps), plus grants and adjustments."""
    uid = _uid(user)
    ops = db.exec(
        select(Run)
        .where(Run.owner_id == uid)
        .order_by(col(Run.created_at).desc())
        .limit(limit)
        .execution_options(populate_existing=True)  # runs are settled by other sessions
    ).all()
    rows = [
        HistoryRow(
            kind="run",
            id=op.id,
            title=op.title,
            date=op.created_at,
            amount=-op.charged_credits if op.charged_credits is not None else None,
            status=op.status,
            charged=op.charged_credits,
            reserved=op.reserved_credits,
            operation_kind=op.kind,
        )
        for op in ops
    ]
    entries = db.exec(
        select(LedgerEntry)
        .where(
            LedgerEntry.user_id == uid,
            col(LedgerEntry.entry_type).in_((EntryType.GRANT, EntryType.ADJUST)),
        )
        .order_by(col(LedgerEntry.created_at).desc())
        .limit(limit)
    ).all()
    rows += [
        HistoryRow(
            kind=e.entry_type,
            id=e.id,
            amount=e.amount,
            date=e.created_at,
            title=e.note or ("Credits granted" if e.entry_type == EntryType.GRANT else "Adjustment"),
            status=None,
            charged=None,
            reserved=None,
            operation_kind=None,
        )
        for e in entries
    ]
    rows.sort(key=lambda r: r.date, reverse=True)
    return rows[:limit]
