"""The user's Credits page state: balance, available, held and the history (one row per run)."""

from __future__ import annotations

import reflex as rx

from bayes_app.usecases import credits
from bayes_app.usecases.views import MICRO, display_credits, display_date, format_credits
from state.auth import AuthState
from state.offloop import off_loop


def buys_line(typical: dict[str, int]) -> str:
    """ "One credit buys about 125 questions or 3 map runs." from the typical charges (what
    these runs cost here lately); a run dearer than a credit is told by its cost."""
    buys: list[str] = []
    costs: list[str] = []
    for kind, one, many in (("ask", "A question", "questions"), ("build_map", "A map run", "map runs")):
        cost = typical.get(kind)
        if cost:
            n = MICRO // cost
            (buys if n >= 1 else costs).append(
                f"about {n:,} {many}" if n >= 1 else f"{one} costs about {display_credits(cost)} credits."
            )
    line = ("One credit buys " + " or ".join(buys) + ".") if buys else ""
    return " ".join([line, *costs]).strip()


class CreditsState(AuthState):
    balance: str = "0"
    available: str = "0"
    held: str = "0"
    exact: dict[str, str] = {}  # the same three to the micro-credit (a tooltip)
    buys: str = ""  # what a credit buys: a question ≈ …, a map run ≈ …
    history: list[dict[str, str]] = []

    @rx.event
    @off_loop
    def load(self):
        if not self._load_user():
            self.history = []
            return
        mine = credits.my_credits(self.user_id)
        self.balance, self.held, self.available = (
            display_credits(mine.balance),
            display_credits(mine.held),
            display_credits(mine.available),
        )
        self.exact = {k: format_credits(getattr(mine, k)) + " credits" for k in ("balance", "held", "available")}
        self.buys = buys_line(credits.typical_charges())
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
                "amount": display_credits(r.amount) if r.amount is not None else "",
                "amount_exact": format_credits(r.amount) if r.amount is not None else "",
                "date": display_date(r.date),
            }
            for r in mine.history
        ]
