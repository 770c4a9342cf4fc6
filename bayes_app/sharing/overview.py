"""The admin's view of sharing: who shares which map or collection with whom, in which role."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from bayes_app.models import Collection, CollectionMember, MapMember, Mindmap, User


def shares(db: Session, limit: int = 500) -> list[dict[str, Any]]:
    """Every share, newest first: kind (map | collection), title, owner, member, role, since."""
    owner, member = aliased(User), aliased(User)
    # sqlmodel's select() is typed for at most four columns: five are fine at run time
    maps = db.exec(
        select(  # type: ignore[call-overload]
            Mindmap.title, owner.email, member.email, MapMember.role, MapMember.created_at
        )
        .join(MapMember, col(MapMember.map_id) == col(Mindmap.id))
        .join(owner, owner.id == Mindmap.owner_id)
        .join(member, member.id == MapMember.user_id)
        .order_by(col(MapMember.created_at).desc())
        .limit(limit)
    )
    cols = db.exec(
        select(  # type: ignore[call-overload]
            Collection.name, owner.email, member.email, CollectionMember.role, CollectionMember.created_at
        )
        .join(CollectionMember, col(CollectionMember.collection_id) == col(Collection.id))
        .join(owner, owner.id == Collection.owner_id)
        .join(member, member.id == CollectionMember.user_id)
        .order_by(col(CollectionMember.created_at).desc())
        .limit(limit)
    )
    rows = [("map", *r) for r in maps] + [("collection", *r) for r in cols]
    rows.sort(key=lambda r: r[5], reverse=True)
    return [
        {"kind": k, "title": t, "owner": o, "member": m, "role": role, "since": since.isoformat()}
        for k, t, o, m, role, since in rows[:limit]
    ]
