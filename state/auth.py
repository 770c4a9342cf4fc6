"""Sign-in state: the session cookie, the signed-in user, and the account forms."""

from __future__ import annotations

from collections.abc import Callable
from http.cookies import CookieError, SimpleCookie
from typing import Any, TypeVar
from urllib.parse import quote

import reflex as rx

from bayes_app.errors import DomainError
from bayes_app.usecases import accounts
from bayes_app.usecases.schemas.accounts import UserOut
from bayes_app.usecases.views import PASSWORD_RULES
from state.offloop import off_loop

T = TypeVar("T")

SESSION_COOKIE = "bayes_session"
_PUBLIC = ("/login", "/register")
_NOTICES = ("password_changed", "signed_out_everywhere")

# What the account forms show for the error codes the session routes send back. Only these
# fixed texts are shown: a crafted link cannot put words of its own on the sign-in page.
MESSAGES = {
    "invalid_credentials": "Wrong e-mail or password.",
    "rate_limited": "Too many failed sign-ins. Try again in about {minutes} minute(s).",
    "busy": "The server is busy; try again in a moment.",
    "invalid_email": "That is not a valid e-mail address.",
    "email_taken": "An account with this e-mail already exists.",
    "email_lookalike": "This address looks like an existing account's address (letters from other scripts "
    "that look the same); choose another.",
    "weak_password": f"Choose a stronger password: {PASSWORD_RULES}",
    "passwords_differ": "The two passwords differ.",
    "same_password": "The new password must differ from the current one.",
    "password_changed": "Password changed. Other browsers have been signed out and your API tokens revoked.",
    "signed_out_everywhere": "Signed out everywhere: every browser session has ended and every API token is revoked.",
    "bad_request": "The form could not be read; please try again.",
}


def message_for(code: str, retry: str = "") -> str:
    text = MESSAGES.get(code, "Something went wrong; please try again." if code else "")
    minutes = max(1, round(int(retry) / 60)) if retry.isdigit() else 15
    return text.replace("{minutes}", str(minutes))


def session_token_of(cookie_header: str) -> str:
    """The session token from a Cookie header (the cookie is HttpOnly: only the server sees it)."""
    jar = SimpleCookie()
    try:
        jar.load(cookie_header or "")
    except CookieError:
        return ""
    morsel = jar.get(SESSION_COOKIE)
    return morsel.value if morsel else ""


class AuthState(rx.State):
    """Who is signed in, read on the server from the HttpOnly session cookie that came with
    this page's connection. Signing in and out are HTTP form posts (bayes_app.api.session)."""

    user_id: str = ""
    user_email: str = ""
    is_admin: bool = False
    form_error: str = ""
    form_notice: str = ""
    form_email: str = ""
    next_path: str = ""
    busy: bool = False
    # The user this tab's state was built for, claimed only by the page guard
    # (state/session_guard.py), which resets every user state when the cookie's user changes.
    _owner: str = ""

    @rx.var
    def signed_in(self) -> bool:
        return self.user_id != ""

    # ---- helpers ------------------------------------------------------------------
    def _as_user(
        self, use_case: Callable[..., T], *args: Any, error_var: str | None = None, **kw: Any
    ) -> tuple[T | None, Any]:
        """Call `use_case(user_id, *args)` as the signed-in user: (its result, None), or
        (None, the event to return) — a redirect to sign in, or the refusal (every DomainError
        is one the user can act on: its message is meant to be shown) as a toast, or, with
        `error_var`, in that var of the page (cleared when the call succeeds)."""
        if not self._load_user():
            return None, rx.redirect("/login")
        try:
            out = use_case(self.user_id, *args, **kw)
        except DomainError as err:
            if error_var is None:
                return None, rx.toast.error(err.message)
            setattr(self, error_var, err.message)
            return None, rx.noop()
        if error_var is not None:
            setattr(self, error_var, "")
        return out, None

    def _token(self) -> str:
        return session_token_of(self.router.headers.cookie)

    def _set_user(self, info: UserOut | None) -> None:
        if info is None:
            self.user_id, self.user_email, self.is_admin = "", "", False
        else:
            self.user_id, self.user_email, self.is_admin = info.id, info.email, info.is_admin

    def _load_user(self) -> bool:
        """Who the cookie says is signed in, looked up server-side on every call. A user other
        than the one the page guard built this state for counts as signed out."""
        info = accounts.session_user(self._token())
        if info is not None and info.id != self._owner:
            info = None
        self._set_user(info)
        return info is not None

    def _here(self) -> str:
        url = self.router.url
        return url.path + (f"?{url.query}" if url.query else "")

    # ---- page guards (on_load) ----------------------------------------------------
    def _read_query(self) -> None:
        q = self.router.url.query_parameters
        self.form_error = message_for(q.get("error", ""), q.get("retry", ""))
        self.form_notice = message_for(q.get("notice", "")) if q.get("notice") in _NOTICES else ""
        self.form_email = (q.get("email") or "")[:200]
        self.next_path = accounts.safe_next(q.get("next"))

    @rx.event
    @off_loop
    def require_login(self):
        """on_load of every private page: no live session → the login page."""
        self._read_query()
        if not self._load_user():
            return rx.redirect(f"/login?next={quote(self._here(), safe='/')}")
        return None

    @rx.event
    @off_loop
    def go_home(self):
        """on_load of '/': the maps for a signed-in user, else the login page."""
        return rx.redirect("/maps" if self._load_user() else "/login")

    @rx.event
    @off_loop
    def require_admin(self):
        """on_load of admin pages: refuse non-admins."""
        if not self._load_user():
            return rx.redirect(f"/login?next={quote(self._here(), safe='/')}")
        if not self.is_admin:
            return [rx.toast.error("Administrators only."), rx.redirect("/maps")]
        return None

    @rx.event
    @off_loop
    def redirect_if_signed_in(self):
        self._read_query()
        self.busy = False
        if self._load_user():
            return rx.redirect("/maps")
        return None
