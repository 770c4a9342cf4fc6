"""SQLModel tables, one module per aggregate. Importing this package registers them all."""

from bayes_app.models.audits import Audit
from bayes_app.models.base import IsoTime, new_id, utcnow
from bayes_app.models.chat import ChatMessage, Conversation, MessageStatus
from bayes_app.models.credits import MICRO, EntryType, LedgerEntry, ModelPrice, PriceBase
from bayes_app.models.library import (
    Chunk,
    Collection,
    DocStatus,
    Document,
    DocumentCitation,
    DocumentCollection,
    DocumentReference,
    PageText,
)
from bayes_app.models.maps import (
    Citation,
    MapEdit,
    MapNode,
    MapProposal,
    Mindmap,
    NodeKind,
    NodeRelation,
    Origin,
    RelationKind,
    SupportLabel,
)
from bayes_app.models.runs import Operation, Run, RunStatus, UsageEvent
from bayes_app.models.sharing import CollectionMember, MapDocument, MapMember, Role
from bayes_app.models.tables import ExtractionTable, TableCell, TableMember
from bayes_app.models.users import ApiToken, User, UserSession
from bayes_app.models.zotero import SyncStatus, ZoteroCollection, ZoteroItem, ZoteroLibrary, ZoteroNote

__all__ = [
    "Audit",
    "ExtractionTable",
    "TableCell",
    "TableMember",
    "ApiToken",
    "ChatMessage",
    "Conversation",
    "MessageStatus",
    "Chunk",
    "Collection",
    "DocStatus",
    "Document",
    "DocumentCitation",
    "DocumentCollection",
    "DocumentReference",
    "PageText",
    "User",
    "UserSession",
    "IsoTime",
    "new_id",
    "utcnow",
    "EntryType",
    "LedgerEntry",
    "MICRO",
    "ModelPrice",
    "PriceBase",
    "Operation",
    "Run",
    "RunStatus",
    "UsageEvent",
    "Citation",
    "MapEdit",
    "MapNode",
    "MapProposal",
    "Mindmap",
    "NodeKind",
    "NodeRelation",
    "Origin",
    "RelationKind",
    "SupportLabel",
    "SyncStatus",
    "ZoteroCollection",
    "ZoteroItem",
    "ZoteroLibrary",
    "ZoteroNote",
    "CollectionMember",
    "MapDocument",
    "MapMember",
    "Role",
]
from bayes_app.models import shown_text as _shown_text
