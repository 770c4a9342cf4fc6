"""Audits in the database: start one (the row and its run, reserved in one transaction), read,
list and delete them. The caller enqueues the run."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from bayes_app.audits.draft import Draft
from bayes_app.audits.library import check_collection
from bayes_app.credits import ledger, pricing
from bayes_app.errors import NotFound
from bayes_app.models import Audit, Run, RunStatus, new_id
from bayes_app.runs import lifecycle as lc
from bayes_app.runs.service import RunRequestError, estimate_for

KIND = "audit"
RESOURCE = "audit"
PROMPT_TOKENS_PER_CITATION = 700  # the sentence, three passages, the instructions
OUTPUT_TOKENS_PER_SENTENCE = 120
STATUS = {
    RunStatus.QUEUED: "queued",
    RunStatus.RUNNING: "running",
    RunStatus.STOPPED: "running",
    RunStatus.SUCCEEDED: "succeeded",
    RunStatus.FAILED: "failed",
    RunStatus.CANCELLED: "cancelled",
}


def start(
    db: Session,
    owner_id: str,
    filename: str,
    draft: Draft,
    collection_id: str | None,
    model: str,
    role_models: dict[str, str] | None = None,
) -> tuple[Audit, Run]:
    """Create the audit and its QUEUED run with its reserve (RunRequestError on a refusal)."""
    if collection_id:
        check_collection(db, owner_id, collection_id)
    cited = sum(len(s.cites) for s in draft.sentences)
    try:
        estimate = estimate_for(
            db, model, cited * PROMPT_TOKENS_PER_CITATION, len(draft.sentences) * OUTPUT_TOKENS_PER_SENTENCE
        )
        for m in sorted(set((role_models or {}).values()) - {model}):
            pricing.get_price(db, m)
        audit = Audit(
            id=new_id(),
            owner_id=owner_id,
            filename=filename[:500],
            format=draft.format,
            collection_id=collection_id,
            draft=draft.to_json(),
            progress_total=len(draft.sentences),
        )
        run_id = new_id()
        audit.run_id = run_id
        db.add(audit)
        run = lc.create_operation(
            db,
            owner_id,
            KIND,
            f"Check a draft: {filename}",
            estimate,
            model,
            input={"audit_id": audit.id, "models": dict(role_models or {})},
            resource=(RESOURCE, audit.id),
            op_id=run_id,
        )
    except pricing.PriceMissing as err:
        db.rollback()
        raise RunRequestError(409, "model_unpriced", str(err)) from None
    except ledger.InsufficientCredits as err:
        db.rollback()
        raise RunRequestError(402, "insufficient_credits", str(err)) from None
    return audit, run


def get_owned(db: Session, owner_id: str, audit_id: str) -> Audit:
    """The user's audit; NotFound for anyone else's."""
    a = db.get(Audit, audit_id)
    if a is None or a.owner_id != owner_id:
        raise NotFound("audit")
    return a


def status_of(db: Session, audit: Audit) -> str:
    run = db.get(Run, audit.run_id) if audit.run_id else None
    return STATUS.get(run.status, "failed") if run is not None else "failed"


def list_owned(db: Session, owner_id: str) -> list[Audit]:
    """The user's audits, newest first."""
    return list(
        db.exec(select(Audit).where(Audit.owner_id == owner_id).order_by(col(Audit.created_at).desc(), col(Audit.id)))
    )


def save_progress(
    db: Session,
    audit_id: str,
    done: int,
    sentences: list[dict[str, Any]] | None = None,
    summary: dict[str, Any] | None = None,
) -> None:
    """Record how many sentences are checked (and the findings so far, when given)."""
    a = db.get(Audit, audit_id)
    if a is None:
        return
    a.progress_done = done
    if sentences is not None:
        a.sentences = sentences
    if summary is not None:
        a.summary = summary
    db.add(a)
    db.commit()
