"""Maps page state: the user's maps (last edited first), create, rename, delete."""

from __future__ import annotations

import contextlib

import reflex as rx

from bayes_app.errors import DomainError, NotFound
from bayes_app.usecases import maps as app_maps
from bayes_app.usecases.schemas.maps import MapRow
from bayes_app.usecases.schemas.sharing import SharedMapRow
from state.auth import AuthState
from state.offloop import off_loop


def _row(m: MapRow | SharedMapRow) -> dict[str, str]:
    updated = (m.updated_at or "")[:16].replace("T", " ")
    return {
        "id": m.id,
        "title": m.title,
        "nodes": str(m.node_count if isinstance(m, MapRow) else 0),
        "updated": updated,
        "offline": "yes" if m.offline else "",
        # "N new papers may change this map" (pending update proposals)
        "new_papers": str(m.new_papers or "") if isinstance(m, MapRow) else "",
    }


def _shared_row(m: SharedMapRow) -> dict[str, str]:
    return {**_row(m), "owner": m.owner_email or "", "role": m.role or ""}


WHOLE_LIBRARY = "library"  # the select's value for "no collection"


class MapsState(AuthState):
    maps: list[dict[str, str]] = []
    shared: list[dict[str, str]] = []  # maps others shared with me
    new_title: str = ""
    scopes: list[dict[str, str]] = []  # collections a new map may be scoped to (own and shared)
    new_scope: str = WHOLE_LIBRARY
    rename_id: str = ""
    rename_title: str = ""
    delete_id: str = ""
    delete_title: str = ""
    maps_error: str = ""

    def _refresh(self) -> None:
        lists = app_maps.list_maps(self.user_id)
        self.maps = [_row(m) for m in lists.mindmaps]
        self.shared = [_shared_row(m) for m in lists.shared]
        self.scopes = [c.model_dump() for c in app_maps.scope_choices(self.user_id)]

    @rx.event
    @off_loop
    def load(self):
        if not self._load_user():
            return
        self.maps_error, self.rename_id, self.delete_id = "", "", ""
        self._refresh()

    @rx.event
    def set_new_title(self, value: str):
        self.new_title = value

    @rx.event
    def set_new_scope(self, value: str):
        self.new_scope = value

    @rx.event
    @off_loop
    def create(self, form: dict | None = None):
        title = ((form or {}).get("title") or self.new_title).strip()
        scope = None if self.new_scope == WHOLE_LIBRARY else self.new_scope
        m, refused = self._as_user(app_maps.create_map, title, "", scope, error_var="maps_error")
        if refused:
            return refused
        assert m is not None
        self.new_title, self.new_scope = "", WHOLE_LIBRARY
        return rx.redirect(f"/maps/{m.id}")

    @rx.event
    def start_rename(self, map_id: str, title: str):
        self.rename_id, self.rename_title, self.maps_error = map_id, title, ""

    @rx.event
    def set_rename_title(self, value: str):
        self.rename_title = value

    @rx.event
    def cancel_rename(self):
        self.rename_id = ""

    @rx.event
    @off_loop
    def save_rename(self, form: dict | None = None):
        title = (form or {}).get("title") or self.rename_title
        if not self.rename_id or not self._load_user():
            return
        try:
            app_maps.rename_map(self.user_id, self.rename_id, title)
        except NotFound:
            pass
        except DomainError as err:
            self.maps_error = err.message
            return
        self.rename_id = ""
        self._refresh()

    @rx.event
    def ask_delete(self, map_id: str, title: str):
        self.delete_id, self.delete_title = map_id, title

    @rx.event
    def cancel_delete(self):
        self.delete_id = ""

    @rx.event
    @off_loop
    def confirm_delete(self):
        """Delete the map; its running runs are cancelled (resource_deleted) and settled."""
        map_id, self.delete_id = self.delete_id, ""
        if not map_id or not self._load_user():
            return
        with contextlib.suppress(NotFound):  # already gone
            app_maps.delete_map(self.user_id, map_id)
        self._refresh()
