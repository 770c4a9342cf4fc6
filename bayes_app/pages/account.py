"""Account page: change password and manage API tokens."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from bayes_app.pages.auth import session_form
from components.shell import form_messages, shell
from state.account import NEW_TOKEN, AccountState
from state.auth import AuthState


def _password_form() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.heading("Change password", size="4"),
            rx.text(
                "This signs out your other browsers and revokes all your API tokens.",
                size="2",
                color_scheme="gray",
                id="password-effects",
            ),
            form_messages(),
            session_form(
                "password",
                rx.vstack(
                    rx.input(
                        name="old_password",
                        id="old_password",
                        type="password",
                        placeholder="Current password",
                        required=True,
                        width="100%",
                    ),
                    rx.input(
                        name="new_password",
                        id="new_password",
                        type="password",
                        placeholder="New password (10+ characters)",
                        required=True,
                        width="100%",
                    ),
                    rx.input(
                        name="confirm",
                        id="confirm",
                        type="password",
                        placeholder="Repeat new password",
                        required=True,
                        width="100%",
                    ),
                    rx.button("Change password", type="submit", id="change-password"),
                    spacing="2",
                    width="100%",
                ),
                width="100%",
            ),
            width="100%",
        ),
        width="100%",
        max_width="420px",
    )


def _revoke(t: ObjectVar[dict[str, str]]) -> rx.Component:
    """Revoke, after a confirmation naming the token."""
    return rx.alert_dialog.root(
        rx.alert_dialog.trigger(
            rx.button("Revoke", size="1", color_scheme="red", variant="soft", class_name="token-revoke")
        ),
        rx.alert_dialog.content(
            rx.alert_dialog.title("Revoke this token?"),
            rx.alert_dialog.description(
                rx.text("Scripts using “", t["name"], "” stop working at once. This cannot be undone.")
            ),
            rx.hstack(
                rx.alert_dialog.cancel(
                    rx.button("Keep it", variant="soft", color_scheme="gray", id="token-revoke-cancel")
                ),
                rx.alert_dialog.action(
                    rx.button(
                        "Revoke",
                        color_scheme="red",
                        id="token-revoke-confirm",
                        on_click=AccountState.revoke(t["id"]),  # type: ignore[operator]
                    )
                ),
                spacing="3",
                justify="end",
                margin_top="1em",
            ),
        ),
    )


def _token_row(t: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(t["name"]),
        rx.table.cell(t["created"]),
        rx.table.cell(t["expires"]),
        rx.table.cell(t["state"]),
        rx.table.cell(rx.cond(t["state"] == "active", _revoke(t))),
    )


def _tokens() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.heading("API tokens", size="4"),
            rx.text(
                "Use a token as 'Authorization: Bearer <token>' with the /api/v1 HTTP API.",
                size="2",
                color_scheme="gray",
            ),
            rx.form(
                rx.hstack(
                    rx.input(name="name", placeholder="Token name", id="token-name"),
                    rx.button("Create token", type="submit", id="create-token"),
                ),
                on_submit=AccountState.create_token,
                reset_on_submit=True,
            ),
            rx.cond(
                AccountState.token_error != "",
                rx.callout(AccountState.token_error, icon="triangle_alert", color_scheme="red", id="token-error"),
            ),
            rx.cond(
                NEW_TOKEN.value != "",
                rx.callout(
                    rx.text("Copy it now, it is shown only once: ", rx.code(NEW_TOKEN.value, id="new-token")),
                    icon="key",
                    color_scheme="amber",
                ),
            ),
            rx.table.root(
                rx.table.header(
                    rx.table.row(*[rx.table.column_header_cell(h) for h in ("Name", "Created", "Expires", "State", "")])
                ),
                rx.table.body(rx.foreach(AccountState.tokens, _token_row)),
                width="100%",
            ),
            width="100%",
        ),
        width="100%",
        max_width="640px",
    )


def _sign_out_everywhere() -> rx.Component:
    what = (
        "Ends every browser session of this account, this one included, and revokes all your "
        "API tokens: scripts using them stop working at once."
    )
    return rx.card(
        rx.vstack(
            rx.heading("Sign out everywhere", size="4"),
            rx.text(what, size="2", color_scheme="gray"),
            rx.alert_dialog.root(
                rx.alert_dialog.trigger(
                    rx.button("Sign out everywhere", color_scheme="red", variant="soft", id="sign-out-everywhere")
                ),
                rx.alert_dialog.content(
                    rx.alert_dialog.title("Sign out everywhere?"),
                    rx.alert_dialog.description(what),
                    rx.hstack(
                        rx.alert_dialog.cancel(rx.button("Cancel", variant="soft", color_scheme="gray")),
                        rx.alert_dialog.action(
                            rx.button(
                                "Sign out everywhere",
                                color_scheme="red",
                                id="sign-out-everywhere-confirm",
                                on_click=AccountState.sign_out_everywhere,
                            )
                        ),
                        spacing="3",
                        justify="end",
                        margin_top="1em",
                    ),
                ),
            ),
            width="100%",
        ),
        width="100%",
        max_width="640px",
    )


def account_page() -> rx.Component:
    return shell(
        "Account",
        rx.text("Signed in as ", rx.text.strong(AuthState.user_email)),
        _password_form(),
        _tokens(),
        _sign_out_everywhere(),
    )
