"""The map editor's sharing: the caller's role, who else has the map open (presence), the
Share dialog (the owner adds a member by e-mail as viewer or editor, changes a role, removes;
and picks which papers members can open and their runs may read), and leaving the map when it
is deleted or no longer shared with this user.

A mixin of `state.mindmap.MapState` (it uses `map_id`, `_nodes`, `_live()` and `_reset_run`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import reflex as rx

from bayes_app.errors import DomainError
from bayes_app.usecases import maps as app_maps
from bayes_app.usecases.maps import MapNotFound
from state.offloop import off_loop

if TYPE_CHECKING:
    from state.mindmap import MapLiveState

T = TypeVar("T")

GONE_SHARED = "This map is no longer shared with you."
GONE_DELETED = "This map was deleted."


def here(user_id: str, email: str, map_id: str) -> list[str] | None:
    """Beat on the map's presence; the e-mails of the others viewing it (None: access lost)."""
    try:
        return [v.email for v in app_maps.here(user_id, email, map_id) if v.user_id != user_id]
    except MapNotFound:
        return None
    except Exception:  # noqa: BLE001 - Redis restarting: presence is a courtesy, the map goes on
        return []


class MapSharing(rx.State, mixin=True):
    """Role, presence and the Share dialog of the map editor (see the module docstring)."""

    if TYPE_CHECKING:  # what this mixin uses of MapState (and its AuthState), for mypy only
        user_id: str
        map_id: str
        _nodes: dict[str, dict[str, Any]]

        def _load_user(self) -> bool: ...
        def _as_user(
            self, use_case: Callable[..., T], *args: Any, error_var: str | None = None, **kw: Any
        ) -> tuple[T | None, Any]: ...
        def _live(self) -> MapLiveState: ...
        def _reset_run(self) -> None: ...

    my_role: str = ""  # owner | editor | viewer
    gone_message: str = ""  # why the map left the page
    viewing: list[str] = []  # the e-mails of the others who have this map open now
    share_open: bool = False
    share_email: str = ""
    share_role: str = "viewer"
    share_error: str = ""
    share_members: list[dict[str, str]] = []
    # papers members can open and their runs may read (cited, or added here), and the others
    share_docs: list[dict[str, str]] = []
    share_addable: list[dict[str, str]] = []
    share_scoped: bool = False  # a map scoped to a collection: that collection is what they read
    share_pick: str = ""

    @rx.var
    def can_edit(self) -> bool:
        return self.my_role in ("owner", "editor")

    @rx.var
    def is_owner(self) -> bool:
        return self.my_role == "owner"

    @rx.var
    def is_shared_map(self) -> bool:
        return self.my_role in ("editor", "viewer")

    def _gone(self) -> None:
        """The map left this page: deleted, or (for a member) no longer shared with them."""
        if self.my_role in ("editor", "viewer"):
            self.gone_message = GONE_SHARED
        elif self.my_role:
            self.gone_message = GONE_DELETED
        self.missing, self._nodes, self.viewing, self.share_open = True, {}, [], False
        self._live().graph = {"nodes": [], "edges": []}
        self._reset_run()

    # ---- the Share dialog (the owner's) --------------------------------------------------------
    def _load_members(self) -> None:
        out = app_maps.members_of(self.user_id, self.map_id)
        self.share_members = [{"user_id": m.user_id, "email": m.email, "role": m.role} for m in out.members]

    def _share_call(self, fn: Any, *args: Any) -> bool:
        if not self._load_user():
            return False
        try:
            fn(self.user_id, self.map_id, *args)
        except MapNotFound:
            self._gone()
            return False
        except DomainError as err:
            self.share_error = err.message
            return False
        self.share_error = ""
        self._load_members()
        return True

    @rx.event
    @off_loop
    def open_share(self):
        if not self._load_user():
            return None
        self.share_open, self.share_error, self.share_email = True, "", ""
        try:
            self._load_members()
        except MapNotFound:
            self._gone()
            return None
        return type(self).load_share_docs

    def _show_docs(self, out: Any) -> None:
        def row(d: Any) -> dict[str, str]:
            year = f" ({d.year})" if d.year else ""
            return {"id": d.document_id, "title": (d.title or "Untitled") + year, "how": d.how}

        self.share_scoped = bool(out.collection_id)
        self.share_docs = [row(d) for d in out.documents]
        self.share_addable = [row(d) for d in out.addable]
        if self.share_pick not in {d["id"] for d in self.share_addable}:
            self.share_pick = ""

    async def _docs_call(self, fn: Any, *args: Any) -> Any:
        """A share-dialog papers call, its database work in a thread (off the event loop); a
        refusal shows in the dialog's error line."""
        out, refused = await asyncio.to_thread(self._as_user, fn, self.map_id, *args, error_var="share_error")
        if out is not None:
            self._show_docs(out)
        return refused

    @rx.event
    async def load_share_docs(self):
        return await self._docs_call(app_maps.map_documents)

    @rx.event
    def set_share_pick(self, value: str):
        self.share_pick = value

    @rx.event
    async def add_share_doc(self):
        if not self.share_pick:
            self.share_error = "Pick one of your papers to add."
            return None
        return await self._docs_call(app_maps.add_map_document, self.share_pick)

    @rx.event
    async def remove_share_doc(self, document_id: str):
        return await self._docs_call(app_maps.remove_map_document, document_id)

    @rx.event
    def set_share_open(self, value: bool):
        self.share_open = value

    @rx.event
    def set_share_email(self, value: str):
        self.share_email = value

    @rx.event
    def set_share_role(self, value: str):
        self.share_role = value if value in app_maps.GRANTABLE else app_maps.READ

    @rx.event
    @off_loop
    def add_member(self, form: dict | None = None):
        email = ((form or {}).get("email") or self.share_email).strip()
        if not email:
            self.share_error = "Enter the e-mail of the account to share with."
            return
        # Not the form's "role": the select is controlled by `share_role`, so React puts its old
        # value back until the server's update arrives, and a quick Share sent "viewer". The
        # choice itself reached this state first (a tab's events are handled in order).
        role = self.share_role
        if self._share_call(app_maps.add_member, email, role):
            self.share_email = ""

    @rx.event
    @off_loop
    def change_role(self, member_id: str, role: str):
        self._share_call(app_maps.set_member_role, member_id, role)

    @rx.event
    @off_loop
    def remove_member(self, member_id: str):
        self._share_call(app_maps.remove_member, member_id)
