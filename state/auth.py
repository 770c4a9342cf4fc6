"""Sign-in state: the session cookie, the signed-in user, and the account forms."""

from __future__ import annotations

from datetime import timedelta

import reflex as rx

from bayes_app.accounts import service
from bayes_app.accounts.service import AccountError
from bayes_app.db import session_scope
from bayes_app.models import User
from bayes_app.settings import get_settings

SESSION_COOKIE = "bayes_session"
_PUBLIC = ("/login", "/register")


def _safe_next(target: str | None) -> str:
    """Only same-site relative paths are allowed after login (no open redirects)."""
    if not target or not target.startswith("/") or target.startswith("//") or target in _PUBLIC:
        return "/maps"
    return target


class AuthState(rx.State):
    """Who is signed in. The raw session token lives only in the browser cookie."""

    session_token: str = rx.Cookie(
        "", name=SESSION_COOKIE, path="/", max_age=get_settings().session_ttl_hours * 3600,
        same_site="strict",
    )
    user_id: str = ""
    user_email: str = ""
    is_admin: bool = False
    form_error: str = ""
    form_notice: str = ""
    busy: bool = False

    @rx.var
    def signed_in(self) -> bool:
        return self.user_id != ""

    # ---- helpers ------------------------------------------------------------------
    def _load_user(self) -> bool:
        with session_scope() as db:
            user = service.user_for_session(db, self.session_token)
            info = service.UserInfo.of(user) if user else None
        if info is None:
            self.user_id, self.user_email, self.is_admin = "", "", False
            return False
        self.user_id, self.user_email, self.is_admin = info.id, info.email, info.is_admin
        return True

    def _start_session(self, user) -> None:
        ttl = timedelta(hours=get_settings().session_ttl_hours)
        with session_scope() as db:
            self.session_token = service.create_session(db, user, ttl)

    def _here(self) -> str:
        url = self.router.url
        return url.path + (f"?{url.query}" if url.query else "")

    # ---- page guards (on_load) ----------------------------------------------------
    @rx.event
    def require_login(self):
        """on_load of every private page: no live session → the login page."""
        self.form_error = self.form_notice = ""
        if not self._load_user():
            return rx.redirect(f"/login?next={self._here()}")

    @rx.event
    def go_home(self):
        """on_load of '/': the maps for a signed-in user, else the login page."""
        return rx.redirect("/maps" if self._load_user() else "/login")

    @rx.event
    def require_admin(self):
        """on_load of admin pages: refuse non-admins."""
        if not self._load_user():
            return rx.redirect(f"/login?next={self._here()}")
        if not self.is_admin:
            return [rx.toast.error("Administrators only."), rx.redirect("/maps")]

    @rx.event
    def redirect_if_signed_in(self):
        self.form_error = self.form_notice = ""
        self.busy = False
        if self._load_user():
            return rx.redirect("/maps")

    # ---- forms --------------------------------------------------------------------
    @rx.event
    def login(self, form: dict):
        self.form_error = ""
        try:
            with session_scope() as db:
                user = service.authenticate(db, form.get("email", ""), form.get("password", ""))
        except AccountError as err:
            self.form_error = err.message
            return
        self._start_session(user)
        self._load_user()
        return rx.redirect(_safe_next(self.router.url.query_parameters.get("next")))

    @rx.event
    def register(self, form: dict):
        self.form_error = ""
        password = form.get("password", "")
        if password != form.get("confirm", ""):
            self.form_error = "The two passwords differ."
            return
        try:
            with session_scope() as db:
                user = service.register(db, form.get("email", ""), password)
        except AccountError as err:
            self.form_error = err.message
            return
        self._start_session(user)
        self._load_user()
        return rx.redirect("/maps")

    @rx.event
    def logout(self):
        with session_scope() as db:
            service.end_session(db, self.session_token)
        self.session_token = ""
        self.user_id, self.user_email, self.is_admin = "", "", False
        return [rx.remove_cookie(SESSION_COOKIE), rx.redirect("/login")]

    @rx.event
    def change_password(self, form: dict):
        self.form_error = self.form_notice = ""
        if not self._load_user():
            return rx.redirect("/login")
        if form.get("new_password", "") != form.get("confirm", ""):
            self.form_error = "The two new passwords differ."
            return
        try:
            with session_scope() as db:
                service.change_password(db, self.user_id, form.get("old_password", ""),
                                        form.get("new_password", ""))
                user = db.get(User, self.user_id)
        except AccountError as err:
            self.form_error = err.message
            return
        self._start_session(user)  # other sessions end; this browser stays signed in
        self.form_notice = "Password changed. Other browsers have been signed out."
