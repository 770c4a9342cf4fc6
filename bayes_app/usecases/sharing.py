"""Sharing use cases (collections; a map's members are in `usecases.maps`), each one transaction."""

from __future__ import annotations

from bayes_app.db import session_scope
from bayes_app.sharing import collections as shared
from bayes_app.sharing import overview
from bayes_app.usecases.schemas.sharing import MemberList, MemberOut, SharedCollectionRow, ShareRow


def collection_members(user_id: str, collection_id: str) -> MemberList:
    """The collection's members (its owner only)."""
    with session_scope() as db:
        return MemberList.model_validate(shared.list_members(db, user_id, collection_id))


def add_collection_member(user_id: str, collection_id: str, email: object, role: object) -> MemberOut:
    """The owner shares the collection read-only with the account of `email`."""
    with session_scope() as db:
        return MemberOut.model_validate(shared.add_member(db, user_id, collection_id, email, role))


def remove_collection_member(user_id: str, collection_id: str, member_id: str) -> None:
    """The owner removes a member, or a member leaves."""
    with session_scope() as db:
        shared.remove_member(db, user_id, collection_id, member_id)


def shared_collections(user_id: str) -> list[SharedCollectionRow]:
    """The collections others shared with the user."""
    with session_scope() as db:
        return [SharedCollectionRow.model_validate(c) for c in shared.shared_with(db, user_id)]


def all_shares() -> list[ShareRow]:
    """For the admin dashboard: who shares what with whom (the caller must be an admin)."""
    with session_scope() as db:
        return [ShareRow.model_validate(s) for s in overview.shares(db)]
