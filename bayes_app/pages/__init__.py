"""One module per page. `register(app)` adds them all with their guards."""

from __future__ import annotations

import reflex as rx

from bayes_app.pages import (
    account,
    admin,
    audits,
    auth,
    chat,
    credits,
    library,
    maps,
    search,
    sections,
    tables,
    viewer,
)
from state.account import AccountState
from state.admin import AdminState
from state.audits import AuditState
from state.auth import AuthState
from state.chat import ChatState
from state.citations import CitationGraphState
from state.credits import CreditsState
from state.library import LibraryState
from state.maps import MapsState
from state.mindmap import MapState
from state.onboarding import GuideState
from state.processes import ProcessesState
from state.search import SearchState
from state.session_guard import SessionGuard
from state.tables import TablesState, TableState
from state.viewer import ViewerState
from state.zotero import ZoteroState


def register(app: rx.App) -> None:
    app.add_middleware(SessionGuard())  # a tab's state never outlives its user (state/session_guard.py)
    app.add_page(auth.login_page, route="/login", title="Sign in · Bayes", on_load=AuthState.redirect_if_signed_in)
    app.add_page(
        auth.register_page, route="/register", title="Create account · Bayes", on_load=AuthState.redirect_if_signed_in
    )
    app.add_page(sections.index_page, route="/", title="Bayes", on_load=AuthState.go_home)
    app.add_page(
        maps.maps_page,
        route="/maps",
        title="Maps · Bayes",
        on_load=[AuthState.require_login, MapsState.load, GuideState.load_guide],
    )
    app.add_page(
        maps.editor_page, route="/maps/[map_ref]", title="Map · Bayes", on_load=[AuthState.require_login, MapState.load]
    )
    app.add_page(
        library.library_page,
        route="/library",
        title="Library · Bayes",
        on_load=[AuthState.require_login, LibraryState.load, ZoteroState.zotero_load, CitationGraphState.load_missing],
    )
    app.add_page(
        search.search_page, route="/search", title="Search · Bayes", on_load=[AuthState.require_login, SearchState.load]
    )
    app.add_page(
        tables.tables_page, route="/tables", title="Tables · Bayes", on_load=[AuthState.require_login, TablesState.load]
    )
    app.add_page(
        tables.table_page,
        route="/tables/[table_id]",
        title="Table · Bayes",
        on_load=[AuthState.require_login, TableState.load],
    )
    app.add_page(
        viewer.viewer_page,
        route="/documents/[document_id]",
        title="Document · Bayes",
        on_load=[AuthState.require_login, ViewerState.load, CitationGraphState.load_document],
    )
    app.add_page(
        audits.audits_page,
        route="/check",
        title="Check a draft · Bayes",
        on_load=[AuthState.require_login, AuditState.load],
    )
    app.add_page(chat.chat_page, route="/chat", title="Ask · Bayes", on_load=[AuthState.require_login, ChatState.load])
    app.add_page(
        chat.chat_page, route="/chat/[chat_id]", title="Ask · Bayes", on_load=[AuthState.require_login, ChatState.load]
    )
    app.add_page(
        account.account_page,
        route="/account",
        title="Account · Bayes",
        on_load=[AuthState.require_login, AccountState.load],
    )
    app.add_page(
        credits.credits_page,
        route="/credits",
        title="Credits · Bayes",
        on_load=[AuthState.require_login, CreditsState.load],
    )
    app.add_page(
        admin.admin_page,
        route="/admin",
        title="Admin · Bayes",
        on_load=[AuthState.require_admin, AdminState.load, ProcessesState.load],
    )
