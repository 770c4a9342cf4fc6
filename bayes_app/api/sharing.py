"""Sharing routes: a map's members (owner shares by e-mail as viewer or editor, changes a role,
removes; a member may leave), a node's history, and read-only collection members.
A non-member gets 404; a member whose role is too low 403 `forbidden_role`."""

from __future__ import annotations

from fastapi import APIRouter

from bayes_app.api import schemas
from bayes_app.api.deps import AdminUser, CurrentUser, StrictJSONRoute
from bayes_app.usecases import maps as app_maps
from bayes_app.usecases import schemas as R
from bayes_app.usecases import sharing as app_sharing
from bayes_app.usecases.schemas import sharing as RS

router = APIRouter(route_class=StrictJSONRoute)
M = "/mindmaps/{map_id}/members"
C = "/collections/{collection_id}/members"


# ---- map members -----------------------------------------------------------------------------
@router.get(M, response_model=RS.MemberList, summary="The map's owner and members (any member may look)")
def list_members(user: CurrentUser, map_id: str) -> RS.MemberList:
    return app_maps.members_of(user.id, map_id)


@router.post(M, status_code=201, response_model=RS.MemberOut, summary="Share the map with an account (owner only)")
def add_member(user: CurrentUser, map_id: str, body: schemas.MemberAdd) -> RS.MemberOut:
    """{"email", "role": "viewer" | "editor"}; unknown e-mail 404 `user_not_found`, the owner 400."""
    return app_maps.add_member(user.id, map_id, body.email, body.role)


@router.patch(M + "/{member_id}", response_model=RS.MemberOut, summary="Change a member's role (owner only)")
def patch_member(user: CurrentUser, map_id: str, member_id: str, body: schemas.MemberPatch) -> RS.MemberOut:
    return app_maps.set_member_role(user.id, map_id, member_id, body.role)


@router.delete(M + "/{member_id}", response_model=R.Deleted, summary="Remove a member (owner), or leave (the member)")
def remove_member(user: CurrentUser, map_id: str, member_id: str) -> R.Deleted:
    app_maps.remove_member(user.id, map_id, member_id)
    return R.Deleted(deleted=True)


@router.get(
    "/mindmaps/{map_id}/nodes/{node_id}/history",
    response_model=RS.NodeHistory,
    summary="Who changed the node, what each edit set and what was there before (newest first)",
)
def get_node_history(user: CurrentUser, map_id: str, node_id: str) -> RS.NodeHistory:
    changes = app_maps.node_history(user.id, map_id, node_id)
    return RS.NodeHistory(changes=changes)


@router.get(
    "/mindmaps/{map_id}/history",
    response_model=RS.MapHistory,
    summary="The map's changes, newest first: who, when, which nodes (owner and editors)",
)
def get_map_history(user: CurrentUser, map_id: str) -> RS.MapHistory:
    return RS.MapHistory(changes=app_maps.map_history(user.id, map_id))


@router.post(
    "/mindmaps/{map_id}/history/{edit_id}/revert",
    response_model=RS.Reverted,
    summary="Revert one change of the map's history (owner: any; editor: their own)",
)
def revert_edit(user: CurrentUser, map_id: str, edit_id: str) -> RS.Reverted:
    return RS.Reverted(reverted=app_maps.revert(user.id, map_id, edit_id))


@router.get(
    "/mindmaps/{map_id}/documents",
    response_model=RS.MapDocuments,
    summary="The papers the map's members can open and their runs may read (owner only)",
)
def list_map_documents(user: CurrentUser, map_id: str) -> RS.MapDocuments:
    return app_maps.map_documents(user.id, map_id)


@router.post(
    "/mindmaps/{map_id}/documents",
    status_code=201,
    response_model=RS.MapDocuments,
    summary="Make one of your papers readable to the map's members and their runs (owner only)",
)
def add_map_document(user: CurrentUser, map_id: str, body: schemas.MapDocumentAdd) -> RS.MapDocuments:
    return app_maps.add_map_document(user.id, map_id, body.document_id)


@router.delete(
    "/mindmaps/{map_id}/documents/{document_id}",
    response_model=RS.MapDocuments,
    summary="Take an added paper back from the map's members (owner only)",
)
def remove_map_document(user: CurrentUser, map_id: str, document_id: str) -> RS.MapDocuments:
    return app_maps.remove_map_document(user.id, map_id, document_id)


@router.get("/mindmaps/{map_id}/presence", response_model=RS.Presence, summary="Who is viewing the map now")
def get_presence(user: CurrentUser, map_id: str) -> RS.Presence:
    return RS.Presence(viewers=app_maps.viewers(user.id, map_id))


@router.post(
    "/mindmaps/{map_id}/presence",
    response_model=RS.Presence,
    summary="I am viewing the map (a heartbeat; it lapses after 10 s); answers who is viewing it",
)
def post_presence(user: CurrentUser, map_id: str) -> RS.Presence:
    return RS.Presence(viewers=app_maps.here(user.id, user.email, map_id))


# ---- collection members ----------------------------------------------------------------------
@router.get(C, response_model=RS.MemberList, summary="The collection's members (owner only)")
def list_collection_members(user: CurrentUser, collection_id: str) -> RS.MemberList:
    return app_sharing.collection_members(user.id, collection_id)


@router.post(C, status_code=201, response_model=RS.MemberOut, summary="Share a collection read-only (owner only)")
def add_collection_member(user: CurrentUser, collection_id: str, body: schemas.MemberAdd) -> RS.MemberOut:
    """{"email", "role": "viewer"}: the member searches it, opens its documents, and uses it as
    the scope of their own Ask and maps."""
    return app_sharing.add_collection_member(user.id, collection_id, body.email, body.role)


@router.delete(C + "/{member_id}", response_model=R.Deleted, summary="Remove a member (owner), or leave (the member)")
def remove_collection_member(user: CurrentUser, collection_id: str, member_id: str) -> R.Deleted:
    app_sharing.remove_collection_member(user.id, collection_id, member_id)
    return R.Deleted(deleted=True)


@router.get("/shared/collections", response_model=RS.SharedCollections, summary="Collections shared with me")
def shared_collections(user: CurrentUser) -> RS.SharedCollections:
    return RS.SharedCollections(collections=app_sharing.shared_collections(user.id))


@router.get(
    "/admin/shares", response_model=RS.ShareList, summary="Who shares which map or collection with whom (admin)"
)
def all_shares(_admin: AdminUser) -> RS.ShareList:
    return RS.ShareList(shares=app_sharing.all_shares())
