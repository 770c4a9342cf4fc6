"""Audit use cases: start a draft check (read the draft, then create and reserve, then enqueue),
read, list, cancel and delete audits, and export their reports. Only the owner sees an audit."""

from __future__ import annotations

import re
from itertools import groupby
from typing import Any

from bayes_app.audits import readers, report, store
from bayes_app.audits.draft import Draft, DraftRejected
from bayes_app.audits.result import SentenceResult, Summary
from bayes_app.audits.sentences import build
from bayes_app.db import session_scope
from bayes_app.errors import DomainError
from bayes_app.models import Audit
from bayes_app.runs import service
from bayes_app.settings import get_settings
from bayes_app.usecases import runs as app_runs
from bayes_app.usecases.schemas.audits import (
    AuditList,
    AuditOut,
    AuditProgress,
    AuditRow,
    AuditSentence,
    AuditStarted,
    AuditSummary,
    MissingReference,
)

MAX_DRAFT_BYTES = readers.MAX_DRAFT_BYTES


def start(
    user_id: str, filename: str, data: bytes, bib: bytes | None = None, collection_id: str | None = None
) -> AuditStarted:
    """Read the draft (DraftRejected: nothing is stored), create the audit with its reserved run
    and enqueue it."""
    draft = build(readers.read(filename, data, bib))
    if not draft.sentences:
        raise DraftRejected("empty_file", f"“{filename}” has no sentences to check.")
    settings = get_settings()
    with session_scope() as db:
        audit, run = store.start(
            db, user_id, filename, draft, collection_id or None, settings.model_default, settings.role_models()
        )
        out = AuditStarted(id=audit.id, status=store.STATUS[run.status])
        run_id, status = run.id, run.status
    app_runs.submit(run_id, status)
    return out


def _results(a: Audit) -> list[SentenceResult]:
    return [SentenceResult.model_validate(s) for s in a.sentences or []]


def _row(a: Audit, status: str) -> dict[str, Any]:
    return {
        "id": a.id,
        "filename": a.filename,
        "format": a.format,
        "status": status,
        "created_at": a.created_at.isoformat(),
        "progress": AuditProgress(done=a.progress_done, total=a.progress_total),
        "summary": AuditSummary.model_validate(a.summary or {}),
    }


def _missing(a: Audit, results: list[SentenceResult]) -> list[MissingReference]:
    draft = Draft.model_validate(a.draft)
    seen: dict[str, MissingReference] = {}
    for s_result, s in zip(results, draft.sentences):
        for c_result, c in zip(s_result.citations, s.cites):
            if c_result.verdict == "not_in_library" and c.key not in seen:
                ref = draft.references.get(c.key)
                seen[c.key] = MissingReference(
                    reference=c_result.reference,
                    title=ref.title if ref else None,
                    doi=ref.doi if ref else None,
                    year=ref.year if ref else None,
                )
    return list(seen.values())


def get(user_id: str, audit_id: str) -> AuditOut:
    """The user's audit with its findings so far (NotFound for anyone else's)."""
    with session_scope() as db:
        a = store.get_owned(db, user_id, audit_id)
        results = _results(a)
        sentences = [AuditSentence(**r.model_dump(), flagged=r.flagged) for r in results]
        return AuditOut(
            **_row(a, store.status_of(db, a)),
            run_id=a.run_id,
            collection_id=a.collection_id,
            sentences=sentences,
            missing=_missing(a, results),
        )


def list_audits(user_id: str) -> AuditList:
    """The user's audits, newest first."""
    with session_scope() as db:
        return AuditList(audits=[AuditRow(**_row(a, store.status_of(db, a))) for a in store.list_owned(db, user_id)])


def cancel(user_id: str, audit_id: str) -> AuditStarted:
    """Stop the audit's run (idempotent once stopped); its findings so far are kept."""
    with session_scope() as db:
        a = store.get_owned(db, user_id, audit_id)
        run_id = a.run_id
    if run_id:
        app_runs.stop_owned(user_id, run_id, finished_ok=True)
    with session_scope() as db:
        a = store.get_owned(db, user_id, audit_id)
        return AuditStarted(id=a.id, status=store.status_of(db, a))


def delete(user_id: str, audit_id: str) -> None:
    """Delete the audit (a run still working on it is cancelled first)."""
    from bayes_app.db import sessions
    from bayes_app.redis_client import get_redis

    with session_scope() as db:
        store.get_owned(db, user_id, audit_id)
    ids = service.cancel_resource_runs(sessions, get_redis(), store.RESOURCE, audit_id)
    app_runs.settle_cancelled(ids)
    with session_scope() as db:
        a = store.get_owned(db, user_id, audit_id)
        db.delete(a)


def _finished(user_id: str, audit_id: str) -> tuple[str, Summary, list[SentenceResult]]:
    with session_scope() as db:
        a = store.get_owned(db, user_id, audit_id)
        if store.status_of(db, a) in ("queued", "running"):
            raise DomainError(
                "audit_running", "The check is still running: export its report when it has finished.", 409
            )
        return a.filename, Summary.model_validate(a.summary or {}), _results(a)


def report_markdown(user_id: str, audit_id: str) -> str:
    """The Markdown report: every flagged sentence, its verdicts, evidence and suggestions."""
    filename, summary, results = _finished(user_id, audit_id)
    return report.markdown(filename, summary, results)


def report_docx(user_id: str, audit_id: str) -> tuple[str, bytes]:
    """(file name, the draft as DOCX with a Word comment on each flagged sentence and suggestion)."""
    filename, _, results = _finished(user_id, audit_id)
    paragraphs = [list(g) for _, g in groupby(results, key=lambda r: r.paragraph)]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", filename.rsplit(".", 1)[0]).strip("._") or "draft"
    return f"{stem}-checked.docx", report.docx(paragraphs)
