"""Sign-in and registration pages."""

from __future__ import annotations

import reflex as rx

from bayes_app.accounts.passwords import PASSWORD_RULES
from components.native_form import keep_fields_on_error, native_form
from components.shell import form_messages
from state.auth import MESSAGES, AuthState


def _card(title: str, *children: rx.Component) -> rx.Component:
    return rx.center(
        rx.card(
            rx.vstack(
                rx.hstack(rx.icon("brain-circuit", size=26), rx.heading("Bayes", size="6"), align="center"),
                rx.text("Research maps where every claim cites its page.", color_scheme="gray", size="2"),
                rx.heading(title, size="5", id="page-title"),
                *children,
                spacing="3",
                width="100%",
            ),
            width="100%",
            max_width="380px",
            padding="1.5em",
        ),
        min_height="90vh",
        padding="1em",
    )


def _field(label: str, name: str, kind: str = "text", **props) -> rx.Component:
    return rx.vstack(
        rx.text(label, size="2", weight="medium"),
        rx.input(name=name, id=name, type=kind, required=True, width="100%", **props),
        spacing="1",
        width="100%",
    )


def session_form(action: str, *children: rx.Component, **props) -> rx.Component:
    """A native form posted to a session route, which sets the HttpOnly cookie and redirects."""
    return native_form(f"/api/v1/session/{action}", *children, **props)


def login_page() -> rx.Component:
    return _card(
        "Sign in",
        form_messages(),
        session_form(
            "login",
            rx.vstack(
                _field("E-mail", "email", "email", auto_complete="username", default_value=AuthState.form_email),
                _field("Password", "password", "password", auto_complete="current-password"),
                rx.el.input(type="hidden", name="next", value=AuthState.next_path),
                rx.button("Sign in", type="submit", width="100%", id="submit"),
                spacing="3",
            ),
            id="login-form",
        ),
        rx.text("No account? ", rx.link("Create one", href="/register", id="to-register"), size="2"),
    )


def register_page() -> rx.Component:
    return _card(
        "Create account",
        form_messages(),
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle-alert")),
            rx.callout.text("", data_message=""),
            color_scheme="red",
            id="form-error-live",
            role="alert",
            width="100%",
            display="none",
        ),
        session_form(
            "register",
            rx.vstack(
                _field("E-mail", "email", "email", auto_complete="username", default_value=AuthState.form_email),
                _field("Password", "password", "password", auto_complete="new-password"),
                rx.text(f"Use {PASSWORD_RULES}", size="1", color_scheme="gray", id="password-rules"),
                _field("Repeat password", "confirm", "password", auto_complete="new-password"),
                rx.button("Create account", type="submit", width="100%", id="submit"),
                spacing="3",
            ),
            id="register-form",
            on_mount=keep_fields_on_error("register-form", "form-error-live", MESSAGES, "/maps"),
        ),
        rx.text("Already registered? ", rx.link("Sign in", href="/login", id="to-login"), size="2"),
    )
