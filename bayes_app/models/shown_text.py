"""The one place shown text enters storage: before every flush, the titles and texts that users,
documents and models supply lose their bidi controls (`bayes_app.bidi.inert`), whichever path
wrote them (API, Reflex page, run, ingestion, Zotero sync, undo)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

from bayes_app.bidi import inert_deep
from bayes_app.models.chat import ChatMessage, Conversation
from bayes_app.models.library import Collection, Document, DocumentReference
from bayes_app.models.maps import Citation, MapNode, MapProposal, Mindmap, NodeRelation
from bayes_app.models.runs import Operation
from bayes_app.models.zotero import ZoteroCollection, ZoteroLibrary

# Page and chunk text are left as extracted (highlights index pdfium's characters); what is
# shown of them goes through a citation's quote, an answer or an export, which are cleaned.
SHOWN: dict[type, tuple[str, ...]] = {
    Mindmap: ("title",),
    MapNode: ("title", "body"),
    Citation: ("quote", "source_title"),
    NodeRelation: ("evidence_title",),
    MapProposal: ("payload",),
    Document: ("title", "filename", "authors"),
    DocumentReference: ("title", "venue", "authors", "raw"),
    Collection: ("name",),
    Conversation: ("title",),
    ChatMessage: ("content",),
    Operation: ("title",),
    ZoteroLibrary: ("name",),
    ZoteroCollection: ("name",),
}


@event.listens_for(Session, "before_flush")
def _inert_shown_text(session: Session, _ctx: Any, _instances: Any) -> None:
    for obj in (*session.new, *session.dirty):
        for name in SHOWN.get(type(obj), ()):
            value = getattr(obj, name, None)
            if value is None:
                continue
            clean = inert_deep(value)
            if clean != value:
                setattr(obj, name, clean)
