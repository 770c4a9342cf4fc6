"""Error callouts that say why a run was refused and what to do about it."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import StringVar

from state.auth import AuthState

# The ledger's refusal text (bayes_app/credits/ledger.py InsufficientCredits) starts with this.
NO_CREDITS = "Not enough credits"


def credits_hint() -> rx.Component:
    """What to do when credits run out: admins grant themselves some, users ask an admin."""
    return rx.cond(
        AuthState.is_admin,
        rx.text(
            "You are an administrator: ",
            rx.link("grant credits on the Admin page", href="/admin#grant", id="credits-hint-link"),
            " (your own e-mail works too).",
            size="2",
            class_name="credits-hint",
        ),
        rx.text(
            "Ask an administrator for credits. Your balance and history are on the ",
            rx.link("Credits page", href="/credits", id="credits-hint-link"),
            ".",
            size="2",
            class_name="credits-hint",
        ),
    )


def error_callout(message: StringVar, id_: str, **props: Any) -> rx.Component:
    """A red callout for `message`; a credits refusal also says what to do next."""
    return rx.cond(
        message != "",
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle-alert")),
            rx.vstack(
                rx.callout.text(message),
                rx.cond(message.contains(NO_CREDITS), credits_hint()),
                spacing="1",
                align="start",
            ),
            color_scheme="red",
            id=id_,
            **props,
        ),
    )
