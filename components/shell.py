"""The signed-in shell: sidebar navigation, user menu, and a guarded content area."""

from __future__ import annotations

import reflex as rx

from components.native_form import native_form
from state.auth import AuthState

NAV = [
    ("Maps", "/maps", "network"),
    ("Ask", "/chat", "message-circle"),
    ("Library", "/library", "library"),
    ("Search", "/search", "search"),
    ("Credits", "/credits", "coins"),
]


def nav_link(label: str, href: str, icon: str) -> rx.Component:
    return rx.link(
        rx.hstack(rx.icon(icon, size=16), rx.text(label), align="center", spacing="2"),
        href=href,
        id=f"nav-{label.lower()}",
        underline="none",
        padding="0.4em 0.6em",
        border_radius="6px",
        _hover={"background": "var(--gray-a3)"},
        width="100%",
    )


def sidebar() -> rx.Component:
    return rx.vstack(
        rx.hstack(rx.icon("brain-circuit", size=22), rx.heading("Bayes", size="5"), align="center"),
        rx.divider(),
        *[nav_link(*item) for item in NAV],
        rx.cond(AuthState.is_admin, nav_link("Admin", "/admin", "shield")),
        rx.spacer(),
        rx.divider(),
        rx.link(rx.text(AuthState.user_email, size="2", id="user-email"), href="/account",
                id="nav-account"),
        native_form("/api/v1/session/logout",
                    rx.button(rx.icon("log-out", size=14), "Log out", type="submit",
                              variant="soft", size="1", id="logout")),
        width="210px",
        min_height="100vh",
        padding="1em",
        border_right="1px solid var(--gray-a5)",
        align="start",
        spacing="2",
    )


def loading() -> rx.Component:
    return rx.center(rx.spinner(size="3"), height="60vh", width="100%")


def shell(title: str, *content: rx.Component) -> rx.Component:
    """A private page: content shows only once the session is verified."""
    return rx.cond(
        AuthState.signed_in,
        rx.hstack(
            sidebar(),
            rx.vstack(
                rx.heading(title, size="7", id="page-title"),
                *content,
                padding="1.5em",
                width="100%",
                align="start",
                spacing="4",
            ),
            spacing="0",
            width="100%",
            align="start",
        ),
        loading(),
    )


def form_messages(state=AuthState) -> rx.Component:
    return rx.fragment(
        rx.cond(state.form_error != "",
                rx.callout(state.form_error, icon="triangle-alert", color_scheme="red",
                           id="form-error", width="100%")),
        rx.cond(state.form_notice != "",
                rx.callout(state.form_notice, icon="check", color_scheme="green",
                           id="form-notice", width="100%")),
    )


def coming_later(what: str) -> rx.Component:
    """Honest placeholder for a page a later milestone fills."""
    return rx.callout(what, icon="info", color_scheme="gray", id="coming-later")
