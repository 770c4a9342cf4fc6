"""One module per page. `register(app)` adds them all with their guards."""

from __future__ import annotations

import reflex as rx

from bayes_app.pages import account, admin, auth, sections
from state.account import AccountState
from state.admin import AdminState
from state.auth import AuthState


def register(app: rx.App) -> None:
    app.add_page(auth.login_page, route="/login", title="Sign in · Bayes",
                 on_load=AuthState.redirect_if_signed_in)
    app.add_page(auth.register_page, route="/register", title="Create account · Bayes",
                 on_load=AuthState.redirect_if_signed_in)
    app.add_page(sections.index_page, route="/", title="Bayes", on_load=AuthState.go_home)
    for route, page, title in sections.PAGES:
        app.add_page(page, route=route, title=f"{title} · Bayes", on_load=AuthState.require_login)
    app.add_page(account.account_page, route="/account", title="Account · Bayes",
                 on_load=[AuthState.require_login, AccountState.load])
    app.add_page(admin.admin_page, route="/admin", title="Admin · Bayes",
                 on_load=[AuthState.require_admin, AdminState.load])
