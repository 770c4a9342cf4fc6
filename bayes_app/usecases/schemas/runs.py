"""What the run and conversation use cases return: runs, conversations, messages.

Built by the use cases inside their sessions (no ORM row leaves one) and used as is by the
HTTP API as `response_model`s (FastAPI documents and validates the JSON against them) and by
the pages' states. Ids are strings; times are ISO 8601 strings; credits are integer
micro-credits. Fields a client may ignore are still listed, so the document is complete."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class RunScope(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    document_ids: list[str] = []
    collection_ids: list[str] = []


class RunRequest(BaseModel):
    """What `POST /runs` asks `runs.start` for (read from the API's validated body by attribute):
    a map run (`kind` a map kind, `mindmap_id`, `node_id`, `prompt`) or an Ask question."""

    model_config = ConfigDict(from_attributes=True)
    kind: str | None = None
    prompt: str | None = None
    scope: RunScope | None = None
    conversation_id: str | None = None
    edit_message_id: str | None = None
    mindmap_id: str | None = None
    node_id: str | None = None


class RunStarted(BaseModel):
    id: str
    status: str
    conversation_id: str | None = None  # Ask runs
    message_id: str | None = None


class RunUsage(BaseModel):
    events: int
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    cost_credits: int
    estimated_events: int


class RunOut(BaseModel):
    id: str
    kind: str
    title: str
    status: str
    outcome: str | None
    outcome_reason: str | None
    model: str | None
    attempt: int
    reserved_credits: int | None
    charged_credits: int | None
    created_at: str
    started_at: str | None
    cancel_requested_at: str | None
    stopped_at: str | None
    finalized_at: str | None
    usage: RunUsage


class RunList(BaseModel):
    runs: list[RunOut]


class ScopeOut(BaseModel):
    """What a conversation is pinned to (`{}`: the whole library)."""

    document_ids: list[str] = []
    collection_ids: list[str] = []


class ConversationOut(BaseModel):
    id: str
    title: str
    scope: ScopeOut | None
    created_at: str
    updated_at: str


class ConversationList(BaseModel):
    conversations: list[ConversationOut]
    offline_mode: bool


class MessageOut(BaseModel):
    id: str
    position: int
    role: str  # user | assistant
    content: str
    thinking: str | None
    citations: list[dict[str, Any]] | None
    status: str
    grounding: str | None
    grounding_label: str
    run_id: str | None
    run_status: str | None
    outcome_reason: str | None
    charged_credits: int | None
    created_at: str


class ConversationDetail(ConversationOut):
    messages: list[MessageOut]
    active_run_ids: list[str]
    offline_mode: bool
    other_version: int  # questions an edit put aside (POST …/switch-version shows them); 0: none
