"""Account page state: the user's API tokens."""

from __future__ import annotations

import reflex as rx
from reflex.experimental.client_state import ClientStateVar

from bayes_app.usecases import accounts
from state.auth import AuthState
from state.offloop import off_loop

# A new token lives only in the browser: it reaches the page once, as a script pushed over the
# socket, and is never a field of the page state (which outlives a logout until reset).
NEW_TOKEN = ClientStateVar.create("new_api_token", default="", global_ref=True)


class AccountState(AuthState):
    """API tokens: list, create (the raw token is shown once), revoke."""

    tokens: list[dict[str, str]] = []
    token_error: str = ""

    def _refresh(self) -> None:
        self.tokens = [
            {
                "id": t.id,
                "name": t.name,
                "created": t.created_at.strftime("%Y-%m-%d %H:%M"),
                "expires": t.expires_at.strftime("%Y-%m-%d"),
                "state": "revoked" if t.revoked else "active",
            }
            for t in accounts.tokens(self.user_id)
        ]

    @rx.event
    @off_loop
    def load(self):
        if self._load_user():
            self._refresh()
        return NEW_TOKEN.push("")

    @rx.event
    @off_loop
    def create_token(self, form: dict):
        if not self._load_user():
            return rx.redirect("/login")
        name = " ".join(str(form.get("name") or "").split())
        if not name:
            self.token_error = "Give the token a name, for example the script or tool that will use it."
            return NEW_TOKEN.push("")
        self.token_error = ""
        raw = accounts.create_token(self.user_id, name).token
        self._refresh()
        return NEW_TOKEN.push(raw)

    @rx.event
    @off_loop
    def sign_out_everywhere(self):
        """End every browser session of this user, this one included, and revoke every API token."""
        if self._load_user():
            accounts.sign_out_everywhere(self.user_id)
        # the guard of the login page finds no session any more and resets this tab's state
        return rx.redirect("/login?notice=signed_out_everywhere")

    @rx.event
    @off_loop
    def revoke(self, token_id: str):
        _, refused = self._as_user(accounts.revoke_token, token_id)
        if refused:
            return refused
        self._refresh()
        return None
