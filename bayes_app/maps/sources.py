"""When a document leaves the library, the map citations quoting it stay, marked
"source removed" with the title they had, instead of silently disappearing."""

from __future__ import annotations

from sqlalchemy import update
from sqlmodel import Session, col

from bayes_app.models import Citation, Document, utcnow


def mark_citations_source_removed(db: Session, document_id: str, reason: str) -> None:
    """Detach the document's citations (inside the deleting transaction)."""
    doc = db.get(Document, document_id)
    title = (doc.title or doc.filename) if doc else None
    db.exec(
        update(Citation)
        .where(col(Citation.document_id) == document_id)
        .values(document_id=None, source_title=title, source_removed_at=utcnow(), source_removed_reason=reason[:40])
        .execution_options(synchronize_session=False)
    )
