"""Read-only collection shares: the owner shares a collection with an account by e-mail; the
member searches it, opens its documents and uses it as the scope of their own Ask and maps.
Removal takes effect at once (every check reads the membership row)."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, func, select

from bayes_app.db import atomic
from bayes_app.errors import NotFound
from bayes_app.models import Collection, CollectionMember, DocumentCollection, Role, User
from bayes_app.sharing.people import SharingError, check_role, user_by_email


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def owned_collection(db: Session, owner_id: str, collection_id: str) -> Collection:
    c = db.get(Collection, collection_id)
    if c is None or c.owner_id != owner_id:
        raise NotFound("collection")
    return c


def readable_collection(db: Session, user_id: str, collection_id: str) -> Collection:
    """The collection when it is the user's or shared with them; NotFound otherwise."""
    c = db.get(Collection, collection_id)
    if c is None:
        raise NotFound("collection")
    if c.owner_id != user_id and db.get(CollectionMember, (collection_id, user_id), populate_existing=True) is None:
        raise NotFound("collection")
    return c


def scope_owner(db: Session, user_id: str, collection_ids: list[str] | None) -> str:
    """Whose library a search scope reads: the user's, or — when every named collection was
    shared with them by one owner — that owner's (the search stays inside those collections).
    NotFound for a collection neither theirs nor shared (any more); SharingError 400
    `mixed_scope` when the scope mixes libraries."""
    owners = {readable_collection(db, user_id, c).owner_id for c in collection_ids or []}
    if not owners or owners == {user_id}:
        return user_id
    if len(owners) > 1:
        raise SharingError("mixed_scope", "Search one library at a time: your collections or one shared owner's.")
    return owners.pop()


def _view(m: CollectionMember, email: str) -> dict[str, Any]:
    return {"user_id": m.user_id, "email": email, "role": m.role, "added_at": _iso(m.created_at)}


def list_members(db: Session, owner_id: str, collection_id: str) -> dict[str, Any]:
    c = owned_collection(db, owner_id, collection_id)
    owner = db.get(User, c.owner_id)
    rows = db.exec(
        select(CollectionMember, User.email)
        .join(User, col(User.id) == col(CollectionMember.user_id))
        .where(CollectionMember.collection_id == collection_id)
        .order_by(col(CollectionMember.created_at))
    )
    return {
        "owner": {"user_id": c.owner_id, "email": owner.email if owner else "", "role": Role.OWNER, "added_at": None},
        "members": [_view(m, email) for m, email in rows],
    }


def add_member(db: Session, owner_id: str, collection_id: str, email: object, role: object) -> dict[str, Any]:
    """Share the collection read-only; 404 `user_not_found`, 400 for the owner or a role other than viewer."""
    owned_collection(db, owner_id, collection_id)
    role = check_role(role, (Role.VIEWER,))
    user = user_by_email(db, email)
    if user.id == owner_id:
        raise SharingError("owner_not_member", "You own this collection; share it with someone else.")
    if db.get(CollectionMember, (collection_id, user.id)) is not None:
        raise SharingError("already_member", "This account is a member already.", 409)
    with atomic(db):
        m = CollectionMember(collection_id=collection_id, user_id=user.id, role=role, added_by=owner_id)
        db.add(m)
    return _view(m, user.email)


def remove_member(db: Session, user_id: str, collection_id: str, member_id: str) -> None:
    """The owner removes a member, or a member leaves."""
    if member_id == user_id:
        readable_collection(db, user_id, collection_id)
    else:
        owned_collection(db, user_id, collection_id)
    m = db.get(CollectionMember, (collection_id, member_id))
    if m is None:
        raise NotFound("member")
    with atomic(db):
        db.delete(m)


def shared_with(db: Session, user_id: str) -> list[dict[str, Any]]:
    """The collections others shared with the user, with their owner's e-mail and size."""
    rows = db.exec(
        select(Collection, User.email, func.count(col(DocumentCollection.document_id)))
        .join(CollectionMember, col(CollectionMember.collection_id) == col(Collection.id))
        .join(User, col(User.id) == col(Collection.owner_id))
        .join(DocumentCollection, col(DocumentCollection.collection_id) == col(Collection.id), isouter=True)
        .where(CollectionMember.user_id == user_id)
        .group_by(col(Collection.id), col(User.email))
        .order_by(col(Collection.name))
    )
    return [{"id": c.id, "name": c.name, "owner_email": email, "document_count": n} for c, email, n in rows]
