"""Mindmap routes: maps, nodes, citations, proposals, undo, export, and the map's runs.
Another user's map, node, citation or run is always 404."""

from __future__ import annotations

import logging
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from bayes_app.api import schemas
from bayes_app.api.deps import read_model, require_user
from bayes_app.api import responses as R
from bayes_app.api import responses_zotero as RZ
from bayes_app.api.routing import op
from bayes_app.api.errors import ApiError, not_found
from bayes_app.app import maps as app_maps
from bayes_app.app import runs as app_runs
from bayes_app.app import zotero as app_zotero
from bayes_app.maps import citations, export, service

log = logging.getLogger("bayes.api.maps")


async def _do(fn: Any, *args: Any, **kw: Any) -> Any:
    """One domain call in one transaction (the app layer's), off the event loop."""
    return await run_in_threadpool(app_maps.call, fn, *args, **kw)


# ---- maps ------------------------------------------------------------------------------------
async def list_maps(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse({"mindmaps": await _do(service.list_maps, user.id)})


async def create_map(request: Request) -> Response:
    user = await require_user(request)
    body = await read_model(request, schemas.MapCreate)
    title = body.title or body.question
    if not title:
        raise ApiError(400, "missing_fields", "Missing or empty field(s): title.")
    out = await _do(service.create_map, user.id, title, body.question or "")
    return JSONResponse(await _do(service.map_view, user.id, out["id"]), status_code=201)


async def get_map(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(await _do(service.map_view, user.id, request.path_params["map_id"]))


async def patch_map(request: Request) -> Response:
    user = await require_user(request)
    body = await read_model(request, schemas.MapPatch)
    return JSONResponse(await _do(service.rename_map, user.id, request.path_params["map_id"], body.title))


async def delete_map(request: Request) -> Response:
    user = await require_user(request)
    ids = await run_in_threadpool(app_maps.delete_map, user.id, request.path_params["map_id"])
    return JSONResponse({"deleted": True, "cancelled_runs": ids})


async def map_revision(request: Request) -> Response:
    user = await require_user(request, allow_cookie=True)
    return JSONResponse({"revision": await _do(service.revision, user.id, request.path_params["map_id"])})


async def undo(request: Request) -> Response:
    user = await require_user(request)
    action = await _do(service.undo, user.id, request.path_params["map_id"])
    return JSONResponse({"undone": action})


async def layout(request: Request) -> Response:
    user = await require_user(request)
    pos = await _do(service.auto_layout, user.id, request.path_params["map_id"])
    return JSONResponse({"positions": {k: {"x": x, "y": y} for k, (x, y) in pos.items()}})


# ---- nodes -----------------------------------------------------------------------------------
async def create_node(request: Request) -> Response:
    """{"parent_id", "title"?, "kind"?, "body"?} adds a child; {"after_id", …} a sibling."""
    user = await require_user(request)
    body = await read_model(request, schemas.NodeCreate)
    map_id = request.path_params["map_id"]
    if body.after_id:
        out = await _do(service.add_sibling, user.id, map_id, body.after_id, body.title, body.kind, body.body)
    elif body.parent_id:
        out = await _do(service.add_child, user.id, map_id, body.parent_id, body.title,
                        body.kind, body.body)
    else:
        raise ApiError(400, "missing_fields", "Send parent_id (add a child) or after_id (add a sibling).")
    return JSONResponse(out, status_code=201)


async def patch_node(request: Request) -> Response:
    """Edit fields; {"parent_id", "index"?} re-parents."""
    user = await require_user(request)
    body = (await read_model(request, schemas.NodePatch)).given()
    map_id, node_id = request.path_params["map_id"], request.path_params["node_id"]
    out = None
    if "parent_id" in body:
        out = await _do(service.move_node, user.id, map_id, node_id, body["parent_id"], body.get("index"))
    fields = {k: v for k, v in body.items() if k not in ("parent_id", "index")}
    if fields or out is None:
        out = await _do(service.update_node, user.id, map_id, node_id, **fields)
    return JSONResponse(out)


async def delete_node(request: Request) -> Response:
    user = await require_user(request)
    ids = await _do(service.delete_subtree, user.id, request.path_params["map_id"], request.path_params["node_id"])
    return JSONResponse({"deleted": ids})


async def check_support(request: Request) -> Response:
    """Offline: the instant scorer, 200 {"citations"}. With a model: a `check_support` run
    (billed, one credit row), 202 {"run": {"id", "status"}} — follow it like any run."""
    user = await require_user(request)
    map_id, node_id = request.path_params["map_id"], request.path_params["node_id"]
    if app_maps.model_judges_support():
        run = await run_in_threadpool(app_runs.start_map_run, user.id, "check_support", map_id, node_id)
        return JSONResponse({"run": run}, status_code=202)
    out = await _do(citations.check_support, user.id, map_id, node_id)
    return JSONResponse({"citations": out})


# ---- citations -------------------------------------------------------------------------------
async def add_citation(request: Request) -> Response:
    user = await require_user(request)
    body = await read_model(request, schemas.CitationCreate)
    out = await _do(citations.attach_citation, user.id, request.path_params["map_id"],
                    request.path_params["node_id"], body.chunk_id, body.quote)
    return JSONResponse(out, status_code=201)


async def delete_citation(request: Request) -> Response:
    user = await require_user(request)
    await _do(citations.delete_citation, user.id, request.path_params["map_id"], request.path_params["citation_id"])
    return JSONResponse({"deleted": True})


async def accept_rewrite(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse(await _do(citations.accept_rewrite, user.id, request.path_params["map_id"],
                                  request.path_params["citation_id"]))


# ---- proposals -------------------------------------------------------------------------------
async def decide_proposal(request: Request) -> Response:
    user = await require_user(request)
    decision = request.path_params["decision"]
    if decision not in ("accept", "reject"):
        raise not_found("route")
    fn = service.accept_proposal if decision == "accept" else service.reject_proposal
    return JSONResponse(await _do(fn, user.id, request.path_params["map_id"], request.path_params["proposal_id"]))


# ---- export ----------------------------------------------------------------------------------
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


async def export_map(request: Request) -> Response:
    user = await require_user(request, allow_cookie=True)
    map_id, fmt = request.path_params["map_id"], request.path_params["fmt"]
    node_id = request.query_params.get("node_id") or None
    if fmt == "json":
        return JSONResponse(await _do(export.as_json, user.id, map_id))
    if fmt == "md":
        return PlainTextResponse(await _do(export.markdown, user.id, map_id, node_id),
                                 media_type="text/markdown; charset=utf-8",
                                 headers={"Content-Disposition": 'attachment; filename="mindmap.md"'})
    if fmt == "bib":
        return PlainTextResponse(await _do(export.bibtex, user.id, map_id, node_id),
                                 media_type="application/x-bibtex; charset=utf-8",
                                 headers={"Content-Disposition": 'attachment; filename="sources.bib"'})
    if fmt == "docx":
        data = await _do(export.docx_bytes, user.id, map_id, node_id)
        return Response(data, media_type=DOCX,
                        headers={"Content-Disposition": 'attachment; filename="mindmap.docx"'})
    raise ApiError(400, "bad_format", "Export format must be md, docx, bib or json.")


# ---- runs ------------------------------------------------------------------------------------
async def list_runs(request: Request) -> Response:
    user = await require_user(request)
    return JSONResponse({"runs": await run_in_threadpool(app_maps.runs_of, user.id, request.path_params["map_id"])})


async def start_run(request: Request) -> Response:
    """POST /mindmaps/<id>/runs {"kind", "node_id"?, "prompt"?} (same as POST /runs)."""
    user = await require_user(request)
    body = (await read_model(request, schemas.MapRunCreate)).given()
    run = await run_in_threadpool(app_runs.start_map_run, user.id, body.get("kind"), request.path_params["map_id"],
                                  body.get("node_id"), body.get("prompt"))
    return JSONResponse(run, status_code=202)


P = "/mindmaps/{map_id}"
async def send_to_zotero(request: Request) -> Response:
    user = await require_user(request)
    data = (await read_model(request, schemas.ZoteroSend)).given()
    body = await run_in_threadpool(app_zotero.send_map, user.id, request.path_params["map_id"], data)
    return JSONResponse(body)


async def add_zotero_highlights(request: Request) -> Response:
    user = await require_user(request)
    data = (await read_model(request, schemas.ZoteroHighlights)).given()
    body = await run_in_threadpool(app_zotero.add_highlights, user.id, request.path_params["map_id"], data)
    return JSONResponse(body)


routes = [
    op("GET", "/mindmaps", list_maps, "List mindmaps, last edited first", R.MapList),
    op("POST", "/mindmaps", create_map, "Create a mindmap with its root question", R.MapView, status=201, body=schemas.MapCreate),
    op("GET", P, get_map, "The whole map: nodes, citations, relations, pending proposals", R.MapView),
    op("PATCH", P, patch_map, "Rename a map", R.MapSummary, body=schemas.MapPatch),
    op("DELETE", P, delete_map, "Delete a map (runs working on it are stopped)", R.MapDeleted),
    op("POST", P + "/zotero", send_to_zotero, "Send the map to Zotero as notes; sending again updates them",
       RZ.ZoteroSendResult, body=schemas.ZoteroSend),
    op("POST", P + "/zotero/highlights", add_zotero_highlights, "Add my Zotero highlights: one cited claim each",
       RZ.HighlightsAdded, body=schemas.ZoteroHighlights),
    op("GET", P + "/revision", map_revision, "The map's revision counter (changes with every edit)", R.Revision),
    op("POST", P + "/undo", undo, "Undo the user's latest edit on the map", R.Undone),
    op("POST", P + "/layout", layout, "Lay the map out as a tidy tree", R.Layout),
    op("POST", P + "/nodes", create_node, "Add a node", R.NodeOut, status=201, body=schemas.NodeCreate),
    op("PATCH", P + "/nodes/{node_id}", patch_node, "Edit, move, collapse or reposition a node", R.NodeOut, body=schemas.NodePatch),
    op("DELETE", P + "/nodes/{node_id}", delete_node, "Delete a node and its subtree", R.NodesDeleted),
    op("POST", P + "/nodes/{node_id}/check-support", check_support, "Score how well each of the node's citations supports it (202 with a run when a model judges)", R.CitationList,
       also={202: R.SupportRun}),
    op("POST", P + "/nodes/{node_id}/citations", add_citation, "Cite a library passage on a node (the quote must be in the passage)", R.CitationOut, status=201, body=schemas.CitationCreate),
    op("DELETE", P + "/citations/{citation_id}", delete_citation, "Remove a citation", R.Deleted),
    op("POST", P + "/citations/{citation_id}/accept-rewrite", accept_rewrite, "Accept a citation's suggested rewrite of its node", R.NodeOut),
    op("POST", P + "/proposals/{proposal_id}/{decision:str}", decide_proposal, "Accept or reject a regrouping proposal (decision: accept | reject)", R.ProposalOut),
    op("GET", P + "/export.{fmt}", export_map, "Export the map (fmt: json | md | bib | docx; node_id for a branch of md, bib, docx)", R.MapView,
       media=("application/json", "text/markdown", "application/x-bibtex", DOCX), query=schemas.ExportQuery),
    op("GET", P + "/runs", list_runs, "The map's runs", R.RunList),
    op("POST", P + "/runs", start_run, "Start a run on the map (kind: build_map, expand, deepen, counter, restructure, chapters, synthesize, message, check_support)", R.RunStarted, status=202, body=schemas.MapRunCreate),
]
