"""Citation-graph routes: a document's citations in the library, and the papers the library,
a collection or a map cites but lacks."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from bayes_app.api.deps import CurrentUser, StrictJSONRoute
from bayes_app.usecases import citations as app_cit
from bayes_app.usecases.citations import DocumentCitations, MissingPaper

router = APIRouter(route_class=StrictJSONRoute)


class MissingList(BaseModel):
    count: int
    papers: list[MissingPaper]


@router.get(
    "/documents/{document_id}/citations",
    response_model=DocumentCitations,
    summary="The library documents a document cites and is cited by",
)
def document_citations(user: CurrentUser, document_id: str) -> DocumentCitations:
    """The library documents this document cites (`cites`) and those citing it (`cited_by`)."""
    return app_cit.document_citations(user.id, document_id)


@router.get(
    "/library/missing",
    response_model=MissingList,
    summary="Papers cited by ≥ 2 library documents that are missing from the library",
)
def library_missing(
    user: CurrentUser,
    collection: Annotated[str | None, Query(description="Only references of this collection's documents.")] = None,
) -> MissingList:
    papers = app_cit.missing(user.id, collection or None)
    return MissingList(count=len(papers), papers=papers)


@router.get(
    "/mindmaps/{map_id}/missing",
    response_model=MissingList,
    summary="Papers cited by ≥ 2 of a map's cited papers that are missing from the library",
)
def map_missing(user: CurrentUser, map_id: str) -> MissingList:
    papers = app_cit.map_missing(user.id, map_id)
    return MissingList(count=len(papers), papers=papers)
