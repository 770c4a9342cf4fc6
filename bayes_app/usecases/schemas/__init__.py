"""The application layer's return types (pydantic models), one module per feature; every name
is also here, so `schemas.DocumentOut` reads as the HTTP API's response model. A domain record
that already has the answer's shape (a credit history row, a Zotero sync result or annotation, a
search hit) is re-exported, not copied; a table's public variant derives from its base
(`Price` from `models.PriceBase`)."""

from __future__ import annotations

from bayes_app.usecases.schemas.accounts import (
    Changed as Changed,
)
from bayes_app.usecases.schemas.accounts import (
    Health as Health,
)
from bayes_app.usecases.schemas.accounts import (
    IssuedToken as IssuedToken,
)
from bayes_app.usecases.schemas.accounts import (
    ModelCheck as ModelCheck,
)
from bayes_app.usecases.schemas.accounts import (
    SessionUser as SessionUser,
)
from bayes_app.usecases.schemas.accounts import (
    Token as Token,
)
from bayes_app.usecases.schemas.accounts import (
    TokenIssued as TokenIssued,
)
from bayes_app.usecases.schemas.accounts import (
    TokenList as TokenList,
)
from bayes_app.usecases.schemas.accounts import (
    TokenRow as TokenRow,
)
from bayes_app.usecases.schemas.accounts import (
    UserOut as UserOut,
)
from bayes_app.usecases.schemas.common import (
    ErrorDetail as ErrorDetail,
)
from bayes_app.usecases.schemas.credits import (
    Granted as Granted,
)
from bayes_app.usecases.schemas.credits import (
    HeldReserve as HeldReserve,
)
from bayes_app.usecases.schemas.credits import (
    HistoryRow as HistoryRow,
)
from bayes_app.usecases.schemas.credits import (
    MyCredits as MyCredits,
)
from bayes_app.usecases.schemas.credits import (
    Price as Price,
)
from bayes_app.usecases.schemas.credits import (
    PriceList as PriceList,
)
from bayes_app.usecases.schemas.credits import (
    PriceOut as PriceOut,
)
from bayes_app.usecases.schemas.credits import (
    Reconciliation as Reconciliation,
)
from bayes_app.usecases.schemas.credits import (
    SpendMismatch as SpendMismatch,
)
from bayes_app.usecases.schemas.library import (
    CollectionList as CollectionList,
)
from bayes_app.usecases.schemas.library import (
    CollectionOut as CollectionOut,
)
from bayes_app.usecases.schemas.library import (
    CollectionRef as CollectionRef,
)
from bayes_app.usecases.schemas.library import (
    CollectionRow as CollectionRow,
)
from bayes_app.usecases.schemas.library import (
    DocumentList as DocumentList,
)
from bayes_app.usecases.schemas.library import (
    DocumentOut as DocumentOut,
)
from bayes_app.usecases.schemas.library import (
    Progress as Progress,
)
from bayes_app.usecases.schemas.library import (
    Reference as Reference,
)
from bayes_app.usecases.schemas.library import (
    ReferenceList as ReferenceList,
)
from bayes_app.usecases.schemas.library import (
    SearchHit as SearchHit,
)
from bayes_app.usecases.schemas.library import (
    UploadedDocument as UploadedDocument,
)
from bayes_app.usecases.schemas.maps import (
    CitationList as CitationList,
)
from bayes_app.usecases.schemas.maps import (
    CitationOut as CitationOut,
)
from bayes_app.usecases.schemas.maps import (
    Deleted as Deleted,
)
from bayes_app.usecases.schemas.maps import (
    Layout as Layout,
)
from bayes_app.usecases.schemas.maps import (
    MapDeleted as MapDeleted,
)
from bayes_app.usecases.schemas.maps import (
    MapList as MapList,
)
from bayes_app.usecases.schemas.maps import (
    MapRow as MapRow,
)
from bayes_app.usecases.schemas.maps import (
    MapSummary as MapSummary,
)
from bayes_app.usecases.schemas.maps import (
    MapView as MapView,
)
from bayes_app.usecases.schemas.maps import (
    NewPapers as NewPapers,
)
from bayes_app.usecases.schemas.maps import (
    NodeOut as NodeOut,
)
from bayes_app.usecases.schemas.maps import (
    NodesDeleted as NodesDeleted,
)
from bayes_app.usecases.schemas.maps import (
    Point as Point,
)
from bayes_app.usecases.schemas.maps import (
    ProposalOut as ProposalOut,
)
from bayes_app.usecases.schemas.maps import (
    RelationOut as RelationOut,
)
from bayes_app.usecases.schemas.maps import (
    Revision as Revision,
)
from bayes_app.usecases.schemas.maps import (
    SupportRun as SupportRun,
)
from bayes_app.usecases.schemas.maps import (
    Undone as Undone,
)
from bayes_app.usecases.schemas.maps import (
    Watch as Watch,
)
from bayes_app.usecases.schemas.runs import (
    ConversationDetail as ConversationDetail,
)
from bayes_app.usecases.schemas.runs import (
    ConversationList as ConversationList,
)
from bayes_app.usecases.schemas.runs import (
    ConversationOut as ConversationOut,
)
from bayes_app.usecases.schemas.runs import (
    MessageOut as MessageOut,
)
from bayes_app.usecases.schemas.runs import (
    RunList as RunList,
)
from bayes_app.usecases.schemas.runs import (
    RunOut as RunOut,
)
from bayes_app.usecases.schemas.runs import (
    RunStarted as RunStarted,
)
from bayes_app.usecases.schemas.runs import (
    RunUsage as RunUsage,
)
from bayes_app.usecases.schemas.runs import (
    ScopeOut as ScopeOut,
)
from bayes_app.usecases.schemas.sharing import (
    MapLists as MapLists,
)
from bayes_app.usecases.schemas.sharing import (
    MemberList as MemberList,
)
from bayes_app.usecases.schemas.sharing import (
    MemberOut as MemberOut,
)
from bayes_app.usecases.schemas.sharing import (
    NodeChange as NodeChange,
)
from bayes_app.usecases.schemas.sharing import (
    NodeHistory as NodeHistory,
)
from bayes_app.usecases.schemas.sharing import (
    Presence as Presence,
)
from bayes_app.usecases.schemas.sharing import (
    SharedCollectionRow as SharedCollectionRow,
)
from bayes_app.usecases.schemas.sharing import (
    SharedCollections as SharedCollections,
)
from bayes_app.usecases.schemas.sharing import (
    SharedMapRow as SharedMapRow,
)
from bayes_app.usecases.schemas.sharing import (
    ShareList as ShareList,
)
from bayes_app.usecases.schemas.sharing import (
    ShareRow as ShareRow,
)
from bayes_app.usecases.schemas.sharing import (
    Viewer as Viewer,
)
from bayes_app.usecases.schemas.zotero import (
    Annotation as Annotation,
)
from bayes_app.usecases.schemas.zotero import (
    AnnotationList as AnnotationList,
)
from bayes_app.usecases.schemas.zotero import (
    HighlightsAdded as HighlightsAdded,
)
from bayes_app.usecases.schemas.zotero import (
    ZoteroLibraryList as ZoteroLibraryList,
)
from bayes_app.usecases.schemas.zotero import (
    ZoteroLibraryOut as ZoteroLibraryOut,
)
from bayes_app.usecases.schemas.zotero import (
    ZoteroProblem as ZoteroProblem,
)
from bayes_app.usecases.schemas.zotero import (
    ZoteroSendFailure as ZoteroSendFailure,
)
from bayes_app.usecases.schemas.zotero import (
    ZoteroSendResult as ZoteroSendResult,
)
from bayes_app.usecases.schemas.zotero import (
    ZoteroSyncResult as ZoteroSyncResult,
)
