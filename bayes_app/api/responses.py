"""Response bodies of the HTTP API, as typed models: they describe the JSON in the OpenAPI
document, and FastAPI validates every JSON success response against its route's model
(a mismatch is a 500). Ids are strings; times are ISO 8601 strings; credits are integer
micro-credits. Fields a client may ignore are still listed, so the document is complete."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from bayes_app.usecases.accounts import IssuedToken, Token
from bayes_app.usecases.credits import Price
from bayes_app.usecases.library import CollectionRef


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorOut(BaseModel):
    """Every refusal: `{"error": {"code", "message"}}` with a 4xx/5xx status."""

    error: ErrorDetail


# ---- system, session, tokens -----------------------------------------------------------------
class UserOut(BaseModel):
    id: str
    email: str
    is_admin: bool
    created_at: str


class SessionUser(BaseModel):
    user: UserOut


class Changed(BaseModel):
    changed: bool


class Health(BaseModel):
    status: str  # "ok" | "degraded"
    broken: list[str] | None = None  # administrators only
    components: dict[str, dict[str, Any]] | None = None  # administrators only


TokenIssued = IssuedToken  # the use case's own return type (`token` is shown once: store it)


class TokenRow(Token):
    current: bool  # the token this request was made with


class TokenList(BaseModel):
    tokens: list[TokenRow]


# ---- library ---------------------------------------------------------------------------------
class Progress(BaseModel):
    done: int
    total: int
    fraction: float | None


class DocumentOut(BaseModel):
    id: str
    filename: str
    title: str
    authors: list[str]
    year: int | None
    doi: str | None
    status: str  # queued | processing | indexed | failed
    progress: Progress
    page_count: int
    chunk_count: int
    error: ErrorDetail | None
    collection_ids: list[str]
    file_size: int
    reference_count: int
    language: str  # ISO 639-1 ("" until detected)
    language_name: str
    ocr_pages: int = 0  # pages whose text came from OCR (text recognition)
    ocr_language: str = ""  # the Tesseract languages OCR used ("deu+eng"; "" = no OCR)
    ocr_language_choice: str = "auto"  # chosen at upload ("auto" = the detected language)
    created_at: str | None


class UploadedDocument(DocumentOut):
    duplicate: bool  # the same file was already in the library (nothing new was stored)


class DocumentList(BaseModel):
    documents: list[DocumentOut]


class Reference(BaseModel):
    position: int
    page: int | None
    authors: list[str]
    year: int | None
    title: str | None
    venue: str | None
    doi: str | None
    raw: str


class ReferenceList(BaseModel):
    document_id: str
    count: int
    references: list[Reference]


CollectionOut = CollectionRef  # the use case's own return type


class CollectionRow(CollectionOut):
    document_count: int
    created_at: str


class CollectionList(BaseModel):
    collections: list[CollectionRow]


class SearchHit(BaseModel):
    chunk_id: str
    document_id: str
    title: str
    authors: list[str]
    year: int | None
    page: int
    char_start: int
    char_end: int
    text: str
    score: float
    role: str | None
    role_label: str | None
    section: str | None
    relevance: float | None
    weak: bool
    language: str
    # with highlights=true ("my highlights"): the Zotero highlight over the passage
    highlighted: bool | None = None
    highlight: dict[str, Any] | None = None


# ---- runs and conversations -------------------------------------------------------------------
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


# ---- mindmaps ---------------------------------------------------------------------------------
class Point(BaseModel):
    x: float
    y: float


class MapSummary(BaseModel):
    id: str
    title: str
    offline: bool  # written without a language model
    watch_new_papers: bool = False  # a newly indexed relevant paper starts an update proposal
    collection_id: str | None = None  # the map's scope: its runs research only this collection
    revision: int
    created_at: str | None
    updated_at: str | None
    role: str | None = None  # the caller's: owner | editor | viewer


class MapRow(MapSummary):
    node_count: int
    new_papers: int = 0  # papers of pending update proposals: "N new papers may change this map"


class MapList(BaseModel):
    mindmaps: list[MapRow]


class NodeOut(BaseModel):
    id: str
    map_id: str
    parent_id: str | None
    kind: str
    title: str
    body: str
    order: int
    position: Point | None
    collapsed: bool
    created_by: str  # user | agent
    run_id: str | None
    author_id: str | None = None  # who made it (a user, or who started the run that wrote it)
    edited_by: str | None = None  # who changed it last
    confidence: float | None
    citation_count: int
    support: float | None
    challenged_by: list[dict[str, Any]] = []  # newer papers contradicting it (verb, title, arrived_at)
    created_at: str | None
    updated_at: str | None


class CitationOut(BaseModel):
    id: str
    node_id: str
    document_id: str | None
    chunk_id: str | None
    page: int | None
    quote: str
    char_start: int | None
    char_end: int | None
    origin: str
    agent: str | None
    support_score: float | None
    support_label: str | None
    suggested_rewrite: str | None
    region: dict[str, Any] | None = None  # a Zotero highlight's page rectangles
    title: str | None
    source_removed: bool
    source_removed_reason: str | None
    authors: list[str]
    year: int | None
    language: str | None
    cited_in_library: int = 0  # how many of the owner's documents cite this citation's paper
    created_at: str | None


class RelationOut(BaseModel):
    id: str
    source_id: str
    target_id: str
    kind: str
    created_by: str
    run_id: str | None


class ProposalOut(BaseModel):
    id: str
    kind: str  # restructure | chapters | split | update
    status: str
    run_id: str | None
    payload: dict[str, Any]
    charged_credits: int | None = None  # an update: what its run cost (micro-credits)
    created_at: str | None


class Watch(BaseModel):
    watch_new_papers: bool


class NewPapers(BaseModel):
    maps: dict[str, int]  # map id → new papers that may change it


class MapView(MapSummary):
    collection_name: str | None = None  # the scope collection's name
    root_id: str
    nodes: list[NodeOut]
    citations: list[CitationOut]
    relations: list[RelationOut]
    proposals: list[ProposalOut]


class MapDeleted(BaseModel):
    deleted: bool
    cancelled_runs: list[str]


class NodesDeleted(BaseModel):
    deleted: list[str]


class Deleted(BaseModel):
    deleted: bool


class Revision(BaseModel):
    revision: int


class Undone(BaseModel):
    undone: str | None  # the action undone; null: nothing to undo


class Layout(BaseModel):
    positions: dict[str, Point]


class CitationList(BaseModel):
    citations: list[CitationOut]


class SupportRun(BaseModel):
    """A support check judged by the model: a billed run, followed like any other."""

    run: RunStarted


# ---- credits -----------------------------------------------------------------------------------
class HistoryRow(BaseModel):
    kind: str  # run | grant | adjustment
    id: str
    title: str
    date: str
    amount: int | None
    status: str | None
    charged: int | None
    reserved: int | None
    operation_kind: str | None


class MyCredits(BaseModel):
    balance: int
    held: int
    available: int
    unit: str
    history: list[HistoryRow]


class Granted(BaseModel):
    user_id: str
    amount_micro: int
    created: bool  # False: a grant with this idempotency key was already recorded
    balance: int
    available: int


PriceOut = Price  # the use case's own return type


class PriceList(BaseModel):
    prices: list[PriceOut]


class SpendMismatch(BaseModel):
    """A settled run whose spend rows disagree with its usage."""

    operation_id: str
    status: str
    usage_cost: int
    spent: int
    spend_rows: int
    charged: int | None


class HeldReserve(BaseModel):
    operation_id: str
    held: int


class Reconciliation(BaseModel):
    ok: bool
    runs_checked: int
    spend_mismatches: list[SpendMismatch]
    held_after_finalize: list[HeldReserve]
    stale_runs: list[str]


# ---- Zotero -------------------------------------------------------------------------------------
class ZoteroSyncResult(BaseModel):
    """The outcome of the last sync (fields an older sync did not record take their defaults)."""

    outcome: str  # unchanged | synced | busy | error | rate_limited
    version: int = 0
    requests: int = 0
    items_changed: int = 0
    items_deleted: int = 0
    collections_changed: int = 0
    documents_added: int = 0
    documents_updated: int = 0
    documents_removed: int = 0
    files_downloaded: int = 0
    problems: int = 0
    restarts: int = 0
    full_resync: bool = False
    seconds: float = 0.0
    error: str | None = None
    retry_in_s: float | None = None


class ZoteroProblem(BaseModel):
    """An item whose PDF could not be brought in, and why."""

    item_key: str
    attachment_key: str
    title: str
    filename: str | None
    code: str
    message: str | None


class ZoteroLibraryOut(BaseModel):
    id: str
    api: str
    library_type: str
    library_id: str
    name: str
    permissions: dict[str, bool]
    status: str
    version: int | None
    last_sync_at: str | None
    last_result: ZoteroSyncResult | None
    last_error: str | None
    progress: dict[str, Any]
    items: int
    collections: int
    documents: dict[str, int]
    problem_count: int
    created_at: str
    problems: list[ZoteroProblem] = []  # in GET /zotero/libraries/<id> only


class ZoteroLibraryList(BaseModel):
    libraries: list[ZoteroLibraryOut]
