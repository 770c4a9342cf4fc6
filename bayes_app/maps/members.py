"""A map's members: share with an account by e-mail as viewer or editor, change the role,
remove; the maps shared with a user. The caller must be authorized as the map's owner first
(`access.authorize(..., Role.OWNER)`) — except that a member may leave (`remove_member` of
themselves)."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from bayes_app.db import atomic
from bayes_app.maps.access import _touch
from bayes_app.maps.errors import MapNotFound
from bayes_app.maps.views import _iso, map_summary
from bayes_app.models import MapMember, Mindmap, Role, User
from bayes_app.sharing.people import SharingError, check_role, user_by_email


def member_view(member: MapMember, email: str) -> dict[str, Any]:
    return {"user_id": member.user_id, "email": email, "role": member.role, "added_at": _iso(member.created_at)}


def owner_view(db: Session, m: Mindmap) -> dict[str, Any]:
    owner = db.get(User, m.owner_id)
    return {"user_id": m.owner_id, "email": owner.email if owner else "", "role": Role.OWNER, "added_at": None}


def list_members(db: Session, map_id: str) -> list[dict[str, Any]]:
    """The map's members (not the owner), first added first."""
    rows = db.exec(
        select(MapMember, User.email)
        .join(User, col(User.id) == col(MapMember.user_id))
        .where(MapMember.map_id == map_id)
        .order_by(col(MapMember.created_at))
    )
    return [member_view(m, email) for m, email in rows]


def add_member(db: Session, owner_id: str, map_id: str, email: object, role: object) -> dict[str, Any]:
    """Share the map with the account of `email`. 404 `user_not_found`, 400 for the owner or a
    bad role, 409 when the account is a member already."""
    role = check_role(role)
    user = user_by_email(db, email)
    if user.id == owner_id:
        raise SharingError("owner_not_member", "You own this map; share it with someone else.")
    if db.get(MapMember, (map_id, user.id)) is not None:
        raise SharingError("already_member", "This account is a member already; change its role instead.", 409)
    with atomic(db):
        member = MapMember(map_id=map_id, user_id=user.id, role=role, added_by=owner_id)
        db.add(member)
        _touch(db, map_id)
    return member_view(member, user.email)


def _member(db: Session, map_id: str, user_id: str) -> MapMember:
    member = db.get(MapMember, (map_id, user_id), populate_existing=True)
    if member is None:
        raise MapNotFound("member")
    return member


def set_role(db: Session, map_id: str, user_id: str, role: object) -> dict[str, Any]:
    """Change a member's role (takes effect on their next request)."""
    role = check_role(role)
    member = _member(db, map_id, user_id)
    with atomic(db):
        member.role = role
        db.add(member)
        _touch(db, map_id)
    email = db.get(User, user_id)
    return member_view(member, email.email if email else "")


def remove_member(db: Session, map_id: str, user_id: str) -> None:
    """Remove a member: their next request on the map answers 404, their open page leaves it."""
    member = _member(db, map_id, user_id)
    with atomic(db):
        db.delete(member)
        _touch(db, map_id)


def shared_with(db: Session, user_id: str) -> list[dict[str, Any]]:
    """The maps others shared with the user, last edited first: summary + role + owner's e-mail."""
    rows = db.exec(
        select(Mindmap, MapMember.role, User.email)
        .join(MapMember, col(MapMember.map_id) == col(Mindmap.id))
        .join(User, col(User.id) == col(Mindmap.owner_id))
        .where(MapMember.user_id == user_id)
        .order_by(col(Mindmap.updated_at).desc())
    )
    return [{**map_summary(m), "role": role, "owner_email": email} for m, role, email in rows]


__all__ = ["Role", "add_member", "list_members", "remove_member", "set_role", "shared_with"]
