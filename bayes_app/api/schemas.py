"""Request bodies of the HTTP API, as typed models.

Every model refuses unknown fields and wrong types (a list is never a title, a string never
a number); numbers are finite and within ranges. Domain rules (which kinds exist, who owns
what) stay in the domain; these models only guarantee the shapes the domain is given.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

Id = Annotated[StrictStr, Field(min_length=1, max_length=100)]
Text = Annotated[StrictStr, Field(max_length=20_000)]
Title = Annotated[StrictStr, Field(max_length=1_000)]
Coordinate = Annotated[float, Field(allow_inf_nan=False, ge=-1e7, le=1e7)]


class Body(BaseModel):
    """Base of every request body: unknown fields are an error, values are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)

    def given(self) -> dict[str, Any]:
        """Only the fields the client sent (PATCH semantics)."""
        return self.model_dump(exclude_unset=True)


# ---- auth --------------------------------------------------------------------------------
class TokenRequest(Body):
    email: Annotated[StrictStr, Field(min_length=1, max_length=320)]
    password: Annotated[StrictStr, Field(min_length=1, max_length=1_024)]
    name: Annotated[StrictStr, Field(max_length=100)] | None = None


# ---- library -----------------------------------------------------------------------------
class DocumentPatch(Body):
    title: Title | None = None
    authors: (
        list[Annotated[StrictStr, Field(max_length=500)]] | Annotated[StrictStr, Field(max_length=5_000)] | None
    ) = None
    year: Annotated[StrictInt, Field(ge=1000, le=2999)] | Annotated[StrictStr, Field(max_length=4)] | None = None
    doi: Annotated[StrictStr, Field(max_length=300)] | None = None
    collection_ids: Annotated[list[Id], Field(max_length=500)] | None = None


class CollectionBody(Body):
    name: Annotated[StrictStr, Field(min_length=1, max_length=200)]


# ---- maps --------------------------------------------------------------------------------
class MapCreate(Body):
    title: Title | None = None
    question: Title | None = None
    collection_id: str | None = None  # scope the map's runs to one of your collections or one shared with you


class MapPatch(Body):
    title: Title


class WatchBody(Body):
    watch_new_papers: bool


class ProposalDecision(Body):
    items: list[int] | None = None  # an update proposal: the item numbers to accept (None: all)


class Position(Body):
    x: Coordinate
    y: Coordinate


class NodeCreate(Body):
    parent_id: Id | None = None
    after_id: Id | None = None
    title: Title = ""
    kind: Annotated[StrictStr, Field(max_length=40)] | None = None
    body: Text = ""


class NodePatch(Body):
    title: Title | None = None
    body: Text | None = None
    kind: Annotated[StrictStr, Field(max_length=40)] | None = None
    collapsed: StrictBool | None = None
    position: Position | None = None
    confidence: Annotated[float, Field(allow_inf_nan=False, ge=0, le=1)] | None = None
    parent_id: Id | None = None
    index: Annotated[StrictInt, Field(ge=0, le=100_000)] | None = None


class CitationCreate(Body):
    chunk_id: Id
    quote: Text | None = None


# ---- runs --------------------------------------------------------------------------------
class Scope(Body):
    document_ids: Annotated[list[Id], Field(max_length=500)] = []
    collection_ids: Annotated[list[Id], Field(max_length=500)] = []


class RunCreate(Body):
    kind: Annotated[StrictStr, Field(max_length=40)] | None = None
    prompt: Text | None = None
    scope: Scope | None = None
    conversation_id: Id | None = None
    edit_message_id: Id | None = None
    mindmap_id: Id | None = None
    node_id: Id | None = None


class MapRunCreate(Body):
    kind: Annotated[StrictStr, Field(max_length=40)]
    prompt: Text | None = None
    node_id: Id | None = None


class ConversationPatch(Body):
    title: Annotated[StrictStr, Field(max_length=500)] | None = None
    scope: Scope | None = None


# ---- credits -----------------------------------------------------------------------------
class Grant(Body):
    user_id: Id | None = None
    email: Annotated[StrictStr, Field(max_length=320)] | None = None
    credits: Annotated[float, Field(allow_inf_nan=False, gt=0, le=1e9)] | None = None
    amount_micro: Annotated[StrictInt, Field(gt=0, le=10**15)] | None = None
    key: Annotated[StrictStr, Field(max_length=200)] | None = None
    note: Annotated[StrictStr, Field(max_length=500)] | None = None


Price = Annotated[StrictInt, Field(ge=0, le=10**12)]


class PriceBody(Body):
    input_per_million: Price
    cached_per_million: Price
    output_per_million: Price


# ---- zotero ------------------------------------------------------------------------------
class ZoteroConnect(Body):
    api: Literal["web", "local"] = "web"
    library_type: Annotated[StrictStr, Field(max_length=20)] | None = None
    library_id: Annotated[StrictStr, Field(max_length=40)] | StrictInt | None = None
    api_key: Annotated[StrictStr, Field(max_length=200)] | None = None


class ZoteroSend(Body):
    library_id: Annotated[StrictStr, Field(max_length=32)]
    child_notes: bool = False


class ZoteroHighlights(Body):
    document_ids: Annotated[list[Annotated[StrictStr, Field(max_length=32)]], Field(max_length=1000)] | None = None


# ---- sign-in forms -------------------------------------------------------------------------
class Form(BaseModel):
    """A sign-in form, posted as a form or as a JSON object of strings. Unknown fields are
    ignored (browsers post whatever the page holds); a missing field is empty text."""

    model_config = ConfigDict(extra="ignore", strict=True)


class LoginForm(Form):
    model_config = ConfigDict(json_schema_extra={"required": ["email", "password"]})
    email: StrictStr = ""
    password: StrictStr = ""
    next: StrictStr | None = Field(None, description="Form posts: the page to go to after signing in.")


class RegisterForm(Form):
    model_config = ConfigDict(json_schema_extra={"required": ["email", "password"]})
    email: StrictStr = ""
    password: StrictStr = ""
    confirm: StrictStr | None = Field(None, description="The password again; refused (passwords_differ) if different.")


class PasswordForm(Form):
    model_config = ConfigDict(json_schema_extra={"required": ["old_password", "new_password"]})
    old_password: StrictStr = ""
    new_password: StrictStr = ""
    confirm: StrictStr | None = Field(None, description="The new password again; refused if different.")


# ---- uploads (multipart/form-data; documentation: the handler reads the parts within a bound) ---
Binary = Annotated[bytes, Field(json_schema_extra={"type": "string", "format": "binary"})]


class FileUpload(BaseModel):
    file: Binary = Field(description="The PDF (at most BAYES_MAX_UPLOAD_MB megabytes).")


class DocumentUpload(FileUpload):
    collection_id: StrictStr | None = Field(None, description="Comma-separated ids of collections to file it in.")
    ocr_language: StrictStr | None = Field(
        None,
        description="The language of pages read by OCR: an installed Tesseract language (`eng`, `deu`, `fra`; "
        "others are refused with 422 naming the valid ones), or `auto` (default): the detected language.",
    )


# ---- sharing -----------------------------------------------------------------------------
class MemberAdd(Body):
    email: Annotated[StrictStr, Field(min_length=1, max_length=320)]
    role: Annotated[StrictStr, Field(max_length=20)] = "viewer"


class MapDocumentAdd(Body):
    document_id: Annotated[StrictStr, Field(min_length=1, max_length=32)]


class MemberPatch(Body):
    role: Annotated[StrictStr, Field(max_length=20)]


# ---- tables ------------------------------------------------------------------------------
class TableColumnBody(Body):
    key: Annotated[StrictStr, Field(max_length=100)]
    question: Annotated[StrictStr, Field(max_length=2_000)]
    type: Annotated[StrictStr, Field(max_length=20)]
    choices: Annotated[list[Annotated[StrictStr, Field(max_length=300)]], Field(max_length=50)] | None = None


class TableCreate(Body):
    title: Title
    collection_id: Id | None = None
    document_ids: Annotated[list[Id], Field(max_length=2_000)] | None = None
    columns: Annotated[list[TableColumnBody], Field(max_length=100)]


class TableFill(Body):
    columns: Annotated[list[Annotated[StrictStr, Field(max_length=100)]], Field(max_length=100)] | None = None


class CellPatch(Body):
    document_id: Id
    column: Annotated[StrictStr, Field(min_length=1, max_length=100)]
    value: StrictStr | StrictInt | Annotated[float, Field(allow_inf_nan=False)] | None = None
