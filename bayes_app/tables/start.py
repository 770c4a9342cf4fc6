"""Starting a fill: validate, reserve and create a QUEUED `fill_table` run (the caller enqueues it)."""

from __future__ import annotations

from sqlmodel import Session, col, select

from bayes_app.credits import ledger, pricing
from bayes_app.models import ExtractionTable, Run, RunStatus
from bayes_app.runs import lifecycle as lc
from bayes_app.runs.service import RunRequestError, estimate_for
from bayes_app.tables import service
from bayes_app.tables.fill import KIND_NAME, PROMPT_BUDGET_PER_PAPER, RESOURCE


def active_fills(db: Session, table_id: str) -> list[str]:
    """Ids of fills still working on the table."""
    return list(
        db.exec(
            select(Run.id).where(
                Run.resource_type == RESOURCE, Run.resource_id == table_id, col(Run.status).in_(RunStatus.ACTIVE)
            )
        ).all()
    )


def start_fill(
    db: Session, user_id: str, table: ExtractionTable, keys: list[str] | None, model: str, output_tokens: int
) -> Run:
    """A QUEUED fill of `keys` (all columns when None) over the table's indexed papers, its
    reserve covering every paper; 409 while another fill works on the table, 402 without credits."""
    columns, rows = service.to_fill(db, table, keys)
    if not rows:
        raise RunRequestError(
            409, "nothing_to_fill", "No paper of this table is indexed yet; wait for the upload to finish."
        )
    if active_fills(db, table.id):
        raise RunRequestError(409, "table_busy", "This table is being filled; stop that fill or wait for it.")
    try:
        estimate = estimate_for(db, model, PROMPT_BUDGET_PER_PAPER * len(rows), output_tokens)
        payload = {"table_id": table.id, "columns": [c.key for c in columns], "papers": len(rows)}
        title = f"Fill table: {table.title}"
        return lc.create_operation(
            db, user_id, KIND_NAME, title, estimate, model, input=payload, resource=(RESOURCE, table.id)
        )
    except pricing.PriceMissing as err:
        raise RunRequestError(409, "model_unpriced", str(err)) from None
    except ledger.InsufficientCredits as err:
        raise RunRequestError(402, "insufficient_credits", str(err)) from None
