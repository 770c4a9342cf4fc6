"""The Ask agent's tools: their OpenAI function schemas and the library-side work.

Model-backed tools (`analyze_document`, `compare_documents`) get their passages here; the
run kind makes the model call itself, so its usage is recorded with the run.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel
from sqlmodel import Session, col, select

from bayes_app.llm import structured as st
from bayes_app.models import DocStatus, Document, DocumentCollection, PageText

SEARCH_TOP_K = 7
ANALYZE_CHARS = 24_000  # of a document's text sent to analyze_document
COMPARE_PASSAGES = 5  # per document, for compare_documents


def _fn(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_DOC = {"type": "string", "description": "A document id or (part of) its title, from list_documents."}
TOOLS: list[dict[str, Any]] = [
    _fn(
        "search_knowledge_base",
        "Hybrid (keyword + semantic) search over the user's library. Returns the 7 best "
        "passages, numbered [n] with their document and page; cite them as [n].",
        {"query": {"type": "string", "description": "What to look for."}},
        ["query"],
    ),
    _fn("list_documents", "List the documents in the library (id, title, authors, year, pages).", {}, []),
    _fn(
        "analyze_document",
        "Topics, entities, key facts and a summary of one document.",
        {"document": _DOC},
        ["document"],
    ),
    _fn(
        "compare_documents",
        "Compare two documents on a question, from their most relevant passages.",
        {"a": _DOC, "b": _DOC, "question": {"type": "string"}},
        ["a", "b", "question"],
    ),
    _fn(
        "calculator",
        "Evaluate an arithmetic expression exactly (+ - * / // % **, sqrt, log, ...).",
        {"expression": {"type": "string"}},
        ["expression"],
    ),
    _fn("current_time", "The current date and time (UTC).", {}, []),
]
TOOL_NAMES = frozenset(t["function"]["name"] for t in TOOLS)


def current_time(now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return now.strftime("%A %d %B %Y, %H:%M:%S UTC (%Y-%m-%dT%H:%M:%SZ)")


def scoped_documents(db: Session, owner_id: str, scope: dict[str, list[str]] | None) -> list[Document]:
    """The owner's documents, restricted to the pinned documents/collections if any."""
    stmt = select(Document).where(Document.owner_id == owner_id)
    scope = scope or {}
    doc_ids, coll_ids = scope.get("document_ids") or [], scope.get("collection_ids") or []
    if doc_ids or coll_ids:
        in_colls = select(DocumentCollection.document_id).where(
            col(DocumentCollection.collection_id).in_(coll_ids or [""])
        )
        stmt = stmt.where(col(Document.id).in_(doc_ids or [""]) | col(Document.id).in_(in_colls))
    return list(db.exec(stmt.order_by(col(Document.created_at))).all())


def list_documents(db: Session, owner_id: str, scope: dict[str, list[str]] | None) -> str:
    docs = scoped_documents(db, owner_id, scope)
    if not docs:
        return "The library has no documents" + (" in the pinned scope." if scope else ".")
    rows = [
        {
            "id": d.id,
            "title": d.title or d.filename,
            "authors": d.authors[:6],
            "year": d.year,
            "pages": d.page_count,
            "status": d.status,
        }
        for d in docs[:200]
    ]
    return json.dumps({"documents": rows, "total": len(docs)}, ensure_ascii=False)


class ToolError(ValueError):
    """A tool call that cannot be done; the message goes back to the model."""


def resolve_document(db: Session, owner_id: str, scope: dict[str, list[str]] | None, ref: Any) -> Document:
    """A document of the owner (within the scope) by id or by a unique title match."""
    if not isinstance(ref, str) or not ref.strip():
        raise ToolError("Name a document by its id or title (see list_documents).")
    ref = ref.strip()
    docs = scoped_documents(db, owner_id, scope)
    for d in docs:
        if d.id == ref:
            return d
    low = ref.lower()
    exact = [d for d in docs if (d.title or d.filename).lower() == low]
    partial = exact or [d for d in docs if low in (d.title or d.filename).lower()]
    if len(partial) == 1:
        return partial[0]
    if not partial:
        raise ToolError(f"No document matches {ref!r}; call list_documents for ids.")
    names = "; ".join(f"{d.id} ({d.title or d.filename})" for d in partial[:5])
    raise ToolError(f"{ref!r} matches several documents: {names}. Use an id.")


def document_passages(db: Session, doc: Document, max_chars: int = ANALYZE_CHARS) -> list[dict[str, Any]]:
    """The document's pages as numbered passages, cut to `max_chars` in total."""
    if doc.status != DocStatus.INDEXED:
        raise ToolError(f"{doc.title or doc.filename} is not ready yet ({doc.status}).")
    pages = db.exec(select(PageText).where(PageText.document_id == doc.id).order_by(col(PageText.page))).all()
    out: list[dict[str, Any]] = []
    used = 0
    for p in pages:
        text = " ".join(p.text.split())
        if not text:
            continue
        text = text[: max(0, max_chars - used)]
        if not text:
            break
        out.append(
            {"n": len(out) + 1, "title": doc.title or doc.filename, "page": p.page, "text": text, "document_id": doc.id}
        )
        used += len(text)
    return out


class Analysis(BaseModel):
    """The analyze_document step's reply."""

    topics: list[str] = []
    entities: list[str] = []
    key_facts: list[str] = []
    summary: str = ""


def parse_analysis(data: Any) -> dict[str, Any] | None:
    """The model's analysis ({topics, entities, key_facts, summary}, parsed or as text) or None."""
    if isinstance(data, str):
        data = st.parse_json(data)
    analysis = st.parse_as(Analysis, data) if isinstance(data, dict) else None
    if analysis is None:
        return None
    out: dict[str, Any] = {k: v[:20] if isinstance(v, list) else v for k, v in analysis.model_dump().items()}
    return out if any(out.values()) else None
