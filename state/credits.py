"""The user's Credits page state: balance, available, held and the history (one row per run)."""

from __future__ import annotations

import reflex as rx

from bayes_app.usecases import credits
from bayes_app.usecases.views import display_credits, format_credits
from state.auth import AuthState
from state.offloop import off_loop


class CreditsState(AuthState):
    balance: str = "0"
    available: str = "0"
    held: str = "0"
    history: list[dict[str, str]] = []

    @rx.event
    @off_loop
    def load(self):
        if not self._load_user():
            self.history = []
            return
        mine = credits.my_credits(self.user_id)
        self.balance, self.held, self.available = (
            format_credits(mine.balance),
            format_credits(mine.held),
            format_credits(mine.available),
        )
        self.history = [
            {
                "id": r.id,
                "kind": r.kind,
                "title": r.title,
                "status": r.status or ("Granted" if r.kind == "grant" else "Adjusted"),
                "charged": display_credits(r.charged)
                if r.charged is not None
                else ("pending" if r.kind == "run" else ""),
                "charged_exact": format_credits(r.charged) if r.charged is not None else "",
                "amount": format_credits(r.amount) if r.amount is not None else "",
                "date": r.date[:16].replace("T", " "),  # ISO 8601: minutes
            }
            for r in mine.history
        ]
