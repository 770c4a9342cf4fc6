"""Citation-graph routes: a document's citations in the library, and the papers the library,
a collection or a map cites but lacks."""

from __future__ import annotations

from pydantic import BaseModel, Field, StrictStr
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bayes_app.api.deps import require_user
from bayes_app.api.routing import op
from bayes_app.api.schemas import Query
from bayes_app.app import citations as app_cit
from bayes_app.library.citation_graph import DocumentCitations, MissingPaper


class MissingQuery(Query):
    collection: StrictStr | None = Field(None, description="Only references of this collection's documents.")


class MissingList(BaseModel):
    count: int
    papers: list[MissingPaper]


async def document_citations(request: Request) -> Response:
    """The library documents this document cites (`cites`) and those citing it (`cited_by`)."""
    user = await require_user(request)
    view = await run_in_threadpool(app_cit.document_citations, user.id, request.path_params["document_id"])
    return JSONResponse(view.model_dump(mode="json"))


def _missing(papers: list[MissingPaper]) -> Response:
    return JSONResponse({"count": len(papers), "papers": [p.model_dump(mode="json") for p in papers]})


async def library_missing(request: Request) -> Response:
    """Papers cited by at least two library documents that are not in the library."""
    user = await require_user(request)
    papers = await run_in_threadpool(app_cit.missing, user.id, request.query_params.get("collection") or None)
    return _missing(papers)


async def map_missing(request: Request) -> Response:
    """Papers cited by at least two of the papers a map cites that are not in the library."""
    user = await require_user(request)
    return _missing(await run_in_threadpool(app_cit.map_missing, user.id, request.path_params["map_id"]))


routes = [
    op("GET", "/documents/{document_id}/citations", document_citations,
       "The library documents a document cites and is cited by", DocumentCitations),
    op("GET", "/library/missing", library_missing,
       "Papers cited by ≥ 2 library documents that are missing from the library", MissingList, query=MissingQuery),
    op("GET", "/mindmaps/{map_id}/missing", map_missing,
       "Papers cited by ≥ 2 of a map's cited papers that are missing from the library", MissingList),
]
