"""The table page's Share section: the owner adds a member by e-mail as viewer or editor and
removes one; a member may leave. A mixin of `state.tables.TableState` (it uses `table_id`,
`role` and `_call`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import reflex as rx

from bayes_app.usecases import tables as app_tables

T = TypeVar("T")


class TableSharing(rx.State, mixin=True):
    """Members of the table (the owner's view) and the add-member form."""

    share_email: str = ""
    share_role: str = "viewer"
    share_error: str = ""
    share_members: list[dict[str, str]] = []

    if TYPE_CHECKING:  # what this mixin uses of TableState, for mypy only
        table_id: str
        role: str

        async def _call(
            self, use_case: Callable[..., T], *args: Any, error_var: str | None = None
        ) -> tuple[T | None, Any]: ...

    @rx.var
    def is_owner(self) -> bool:
        return self.role == "owner"

    @rx.event
    def set_share_email(self, value: str):
        self.share_email = value

    @rx.event
    def set_share_role(self, value: str):
        self.share_role = value if value in ("viewer", "editor") else "viewer"

    async def _load_members(self) -> Any:
        self.share_members = []
        if self.role != "owner":
            return None
        out, ev = await self._call(app_tables.members, self.table_id)
        if ev is not None:
            return ev
        assert out is not None
        self.share_members = [{"user_id": m.user_id, "email": m.email, "role": m.role} for m in out.members]
        return None

    @rx.event
    async def share(self):
        email = self.share_email.strip()
        if not email:
            self.share_error = "Write the e-mail address of a registered user."
            return None
        self.share_error = ""
        _, ev = await self._call(app_tables.share, self.table_id, email, self.share_role, error_var="share_error")
        if ev is not None:
            return ev
        self.share_email = ""
        return await self._load_members()

    @rx.event
    async def unshare(self, member_id: str):
        _, ev = await self._call(app_tables.unshare, self.table_id, member_id)
        if ev is not None:
            return ev
        return await self._load_members()
