"""Mindmap routes: maps, nodes, citations, proposals, undo, export, and the map's runs.
Another user's map, node, citation or run is always 404."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from starlette.responses import JSONResponse, PlainTextResponse, Response

from bayes_app.api import schemas
from bayes_app.api.deps import CookieUser, CurrentUser, StrictJSONRoute, media
from bayes_app.api.errors import ApiError, not_found
from bayes_app.usecases import living as app_living
from bayes_app.usecases import maps as app_maps
from bayes_app.usecases import runs as app_runs
from bayes_app.usecases import schemas as R
from bayes_app.usecases import zotero as app_zotero
from bayes_app.usecases.schemas import sharing as RS
from bayes_app.usecases.schemas import zotero as RZ

router = APIRouter(route_class=StrictJSONRoute)
P = "/mindmaps/{map_id}"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


OWN = app_maps.OWN  # the routes only the owner may call (members: 403)


# ---- maps ------------------------------------------------------------------------------------
@router.get("/mindmaps", response_model=RS.MapLists, summary="List mindmaps, last edited first")
def list_maps(user: CurrentUser) -> RS.MapLists:
    return app_maps.list_maps(user.id)


@router.post("/mindmaps", status_code=201, response_model=R.MapView, summary="Create a mindmap with its root question")
def create_map(user: CurrentUser, body: schemas.MapCreate) -> R.MapView:
    title = body.title or body.question
    if not title:
        raise ApiError(400, "missing_fields", "Missing or empty field(s): title.")
    out = app_maps.create_map(user.id, title, body.question or "", body.collection_id)
    return app_maps.map_view(user.id, out.id)


@router.get(P, response_model=R.MapView, summary="The whole map: nodes, citations, relations, pending proposals")
def get_map(user: CurrentUser, map_id: str) -> R.MapView:
    return app_maps.map_view(user.id, map_id)


@router.patch(P, response_model=R.MapSummary, summary="Rename a map")
def patch_map(user: CurrentUser, map_id: str, body: schemas.MapPatch) -> R.MapSummary:
    return app_maps.rename_map(user.id, map_id, body.title)


@router.put(P + "/watch", response_model=R.Watch, summary="Watch for new papers: turn update proposals on or off")
def put_watch(user: CurrentUser, map_id: str, body: schemas.WatchBody) -> R.Watch:
    watching = app_living.set_watch(user.id, map_id, body.watch_new_papers)
    return R.Watch(watch_new_papers=watching)


@router.delete(P, response_model=R.MapDeleted, summary="Delete a map (runs working on it are stopped)")
def delete_map(user: CurrentUser, map_id: str) -> R.MapDeleted:
    ids = app_maps.delete_map(user.id, map_id)
    return R.MapDeleted(deleted=True, cancelled_runs=ids)


@router.get(P + "/revision", response_model=R.Revision, summary="The map's revision counter (changes with every edit)")
def map_revision(user: CookieUser, map_id: str) -> R.Revision:
    return R.Revision(revision=app_maps.revision(user.id, map_id))


@router.post(P + "/undo", response_model=R.Undone, summary="Undo the user's latest edit on the map")
def undo(user: CurrentUser, map_id: str) -> R.Undone:
    return R.Undone(undone=app_maps.undo(user.id, map_id))


@router.post(P + "/layout", response_model=R.Layout, summary="Lay the map out as a tidy tree")
def layout(user: CurrentUser, map_id: str) -> R.Layout:
    return app_maps.auto_layout(user.id, map_id)


# ---- nodes -----------------------------------------------------------------------------------
@router.post(P + "/nodes", status_code=201, response_model=R.NodeOut, summary="Add a node")
def create_node(user: CurrentUser, map_id: str, body: schemas.NodeCreate) -> R.NodeOut:
    """{"parent_id", "title"?, "kind"?, "body"?} adds a child; {"after_id", …} a sibling."""
    if body.after_id:
        return app_maps.add_sibling(user.id, map_id, body.after_id, body.title, body.kind, body.body)
    if body.parent_id:
        return app_maps.add_child(user.id, map_id, body.parent_id, body.title, body.kind, body.body)
    raise ApiError(400, "missing_fields", "Send parent_id (add a child) or after_id (add a sibling).")


@router.patch(P + "/nodes/{node_id}", response_model=R.NodeOut, summary="Edit, move, collapse or reposition a node")
def patch_node(user: CurrentUser, map_id: str, node_id: str, body: schemas.NodePatch) -> R.NodeOut:
    """Edit fields; {"parent_id", "index"?} re-parents."""
    given = body.given()
    out = None
    if "parent_id" in given:
        out = app_maps.move_node(user.id, map_id, node_id, given["parent_id"], given.get("index"))
    fields = {k: v for k, v in given.items() if k not in ("parent_id", "index")}
    if fields or out is None:
        out = app_maps.update_node(user.id, map_id, node_id, **fields)
    return out


@router.delete(P + "/nodes/{node_id}", response_model=R.NodesDeleted, summary="Delete a node and its subtree")
def delete_node(user: CurrentUser, map_id: str, node_id: str) -> R.NodesDeleted:
    return R.NodesDeleted(deleted=app_maps.delete_subtree(user.id, map_id, node_id))


@router.post(
    P + "/nodes/{node_id}/check-support",
    response_model=R.CitationList,
    responses={202: {"model": R.SupportRun, "description": "A model judges: follow the run"}},
    summary="Score how well each of the node's citations supports it (202 with a run when a model judges)",
)
def check_support(user: CurrentUser, map_id: str, node_id: str) -> Any:
    """Offline: the instant scorer, 200 {"citations"}. With a model: a `check_support` run
    (billed, one credit row), 202 {"run": {"id", "status"}} — follow it like any run."""
    if app_maps.model_judges_support():
        run = app_runs.start_map_run(user.id, "check_support", map_id, node_id)
        return JSONResponse(R.SupportRun(run=run).model_dump(mode="json"), status_code=202)
    return R.CitationList(citations=app_maps.check_support(user.id, map_id, node_id))


# ---- citations -------------------------------------------------------------------------------
@router.post(
    P + "/nodes/{node_id}/citations",
    status_code=201,
    response_model=R.CitationOut,
    summary="Cite a library passage on a node (the quote must be in the passage)",
)
def add_citation(user: CurrentUser, map_id: str, node_id: str, body: schemas.CitationCreate) -> R.CitationOut:
    return app_maps.attach_citation(user.id, map_id, node_id, body.chunk_id, body.quote)


@router.delete(P + "/citations/{citation_id}", response_model=R.Deleted, summary="Remove a citation")
def delete_citation(user: CurrentUser, map_id: str, citation_id: str) -> R.Deleted:
    app_maps.delete_citation(user.id, map_id, citation_id)
    return R.Deleted(deleted=True)


@router.post(
    P + "/citations/{citation_id}/accept-rewrite",
    response_model=R.NodeOut,
    summary="Accept a citation's suggested rewrite of its node",
)
def accept_rewrite(user: CurrentUser, map_id: str, citation_id: str) -> R.NodeOut:
    return app_maps.accept_rewrite(user.id, map_id, citation_id)


# ---- proposals -------------------------------------------------------------------------------
@router.post(
    P + "/proposals/{proposal_id}/{decision}",
    response_model=R.ProposalOut,
    summary="Accept or reject a proposal (decision: accept | reject); an update's accept may name its items",
)
def decide_proposal(
    user: CurrentUser,
    map_id: str,
    proposal_id: str,
    decision: str,
    body: schemas.ProposalDecision = schemas.ProposalDecision(),  # no body: the whole proposal
) -> R.ProposalOut:
    if decision not in ("accept", "reject"):
        raise not_found("route")
    if decision == "accept" and body.items is not None:
        return app_living.accept_update(user.id, map_id, proposal_id, body.items)
    fn = app_maps.accept_proposal if decision == "accept" else app_maps.reject_proposal
    return fn(user.id, map_id, proposal_id)


# ---- export ----------------------------------------------------------------------------------
@router.get(
    P + "/export.{fmt}",
    response_model=R.MapView,
    responses={200: media("text/markdown", "application/x-bibtex", "application/x-tex", DOCX)},
    summary="Export the map (fmt: json | md | bib | tex | docx; node_id for a branch; style for md and docx)",
)
def export_map(
    user: CookieUser,
    map_id: str,
    fmt: str,
    node_id: Annotated[str | None, Query(description="Export only this node's branch (md, bib, tex, docx).")] = None,
    style: Annotated[
        str | None, Query(description="Reference style of md and docx: apa, vancouver, ieee, nature, chicago.")
    ] = None,
) -> Any:
    node_id = node_id or None
    try:
        style = app_maps.export_style(style)
    except ValueError as e:
        raise ApiError(400, "bad_style", str(e)) from None
    if fmt == "json":
        return app_maps.export_json(user.id, map_id)
    if fmt == "md":
        return PlainTextResponse(
            app_maps.export_markdown(user.id, map_id, node_id, style),
            media_type="text/markdown; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="mindmap.md"'},
        )
    if fmt == "bib":
        return PlainTextResponse(
            app_maps.export_bibtex(user.id, map_id, node_id),
            media_type="application/x-bibtex; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="sources.bib"'},
        )
    if fmt == "tex":  # \bibliography{sources}: save export.bib beside it as sources.bib
        return PlainTextResponse(
            app_maps.export_latex(user.id, map_id, node_id),
            media_type="application/x-tex; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="mindmap.tex"'},
        )
    if fmt == "docx":
        data = app_maps.export_docx(user.id, map_id, node_id, style)
        return Response(data, media_type=DOCX, headers={"Content-Disposition": 'attachment; filename="mindmap.docx"'})
    raise ApiError(400, "bad_format", "Export format must be md, docx, bib, tex or json.")


# ---- runs ------------------------------------------------------------------------------------
@router.get(P + "/runs", response_model=R.RunList, summary="The map's runs")
def list_runs(user: CurrentUser, map_id: str) -> R.RunList:
    return R.RunList(runs=app_maps.runs_of(user.id, map_id))


@router.post(
    P + "/runs",
    status_code=202,
    response_model=R.RunStarted,
    summary=f"Start a run on the map (kind: {', '.join(app_runs.USER_MAP_KINDS)})",
)
def start_run(user: CurrentUser, map_id: str, body: schemas.MapRunCreate) -> Any:
    """POST /mindmaps/<id>/runs {"kind", "node_id"?, "prompt"?} (same as POST /runs)."""
    return app_runs.start_map_run(user.id, body.kind, map_id, body.node_id, body.prompt)


# ---- Zotero ----------------------------------------------------------------------------------
@router.post(
    P + "/zotero",
    response_model=RZ.ZoteroSendResult,
    summary="Send the map to Zotero as notes; sending again updates them",
)
def send_to_zotero(user: CurrentUser, map_id: str, body: schemas.ZoteroSend) -> Any:
    """The owner's (members: 403 `forbidden_role`): it writes to the caller's Zotero library."""
    app_maps.require(user.id, map_id, OWN)
    return app_zotero.send_map(user.id, map_id, body.given())


@router.post(
    P + "/zotero/highlights",
    response_model=RZ.HighlightsAdded,
    summary="Add my Zotero highlights: one cited claim each",
)
def add_zotero_highlights(user: CurrentUser, map_id: str, body: schemas.ZoteroHighlights) -> Any:
    """The owner's (members: 403 `forbidden_role`): it cites the caller's own library."""
    app_maps.require(user.id, map_id, OWN)
    return app_zotero.add_highlights(user.id, map_id, body.given())
