"""Sharing use cases (collections; a map's members are in `usecases.maps`), each one transaction."""

from __future__ import annotations

from typing import Any

from bayes_app.db import session_scope
from bayes_app.sharing import collections as shared
from bayes_app.sharing import overview


def collection_members(user_id: str, collection_id: str) -> dict[str, Any]:
    with session_scope() as db:
        return shared.list_members(db, user_id, collection_id)


def add_collection_member(user_id: str, collection_id: str, email: object, role: object) -> dict[str, Any]:
    with session_scope() as db:
        return shared.add_member(db, user_id, collection_id, email, role)


def remove_collection_member(user_id: str, collection_id: str, member_id: str) -> None:
    with session_scope() as db:
        shared.remove_member(db, user_id, collection_id, member_id)


def shared_collections(user_id: str) -> list[dict[str, Any]]:
    with session_scope() as db:
        return shared.shared_with(db, user_id)


def all_shares() -> list[dict[str, Any]]:
    """For the admin dashboard: who shares what with whom (the caller must be an admin)."""
    with session_scope() as db:
        return overview.shares(db)
