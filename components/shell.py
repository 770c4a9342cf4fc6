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
    ("Check", "/check", "file-check"),
    ("Tables", "/tables", "table-2"),
    ("Credits", "/credits", "coins"),
]

# Below 768 px (Reflex breakpoint "md" = 48em) the sidebar becomes a menu drawer. Style props
# take rx.breakpoints (Reflex's media queries); Radix's {"initial": .., "sm": ..} dicts work only
# for Radix props.
DESKTOP = rx.breakpoints(initial="none", md="flex")
MOBILE = rx.breakpoints(initial="flex", md="none")


def stack_on_phone(*children: rx.Component, wide: str = "md", **props) -> rx.Component:
    """Side by side from breakpoint `wide` up, one above the other below it."""
    return rx.box(*children, display="flex", flex_direction=rx.breakpoints(initial="column", **{wide: "row"}), **props)


def nav_link(label: str, href: str, icon: str, prefix: str = "nav") -> rx.Component:
    return rx.link(
        rx.hstack(rx.icon(icon, size=16), rx.text(label), align="center", spacing="2"),
        href=href,
        id=f"{prefix}-{label.lower()}",
        underline="none",
        padding="0.4em 0.6em",
        border_radius="6px",
        _hover={"background": "var(--gray-a3)"},
        width="100%",
    )


def _brand() -> rx.Component:
    return rx.hstack(rx.icon("brain-circuit", size=22), rx.heading("Bayes", size="5"), align="center")


def _email_part(text: rx.Var[str] | str) -> rx.Component:
    return rx.el.span(
        text,
        display="inline-block",
        max_width="100%",
        white_space="nowrap",
        overflow="hidden",
        text_overflow="ellipsis",
        vertical_align="bottom",
    )


def nav_items(prefix: str = "nav") -> list[rx.Component]:
    """The navigation, the signed-in e-mail and Log out (ids prefixed `nav-` on the desktop
    sidebar and `mnav-` in the phone menu, so both can exist in one page)."""
    m = prefix != "nav"
    return [
        *[nav_link(*item, prefix=prefix) for item in NAV],
        nav_link("Account", "/account", "user", prefix=prefix),
        rx.cond(AuthState.is_admin, nav_link("Admin", "/admin", "shield", prefix=prefix)),
        rx.spacer(),
        rx.divider(),
        rx.link(
            # the address breaks only before its "@" (never mid-word); a part wider than the sidebar
            # ends in "…", the whole address on hover
            rx.text(
                _email_part(AuthState.user_email.split("@")[0]),
                rx.cond(
                    AuthState.user_email.contains("@"),  # type: ignore[attr-defined]
                    _email_part("@" + AuthState.user_email.split("@")[1]),
                ),
                size="2",
                id="muser-email" if m else "user-email",
                max_width="100%",
                title=AuthState.user_email,
            ),
            href="/account",
            id=f"{prefix}-email",
        ),
        native_form(
            "/api/v1/session/logout",
            rx.button(
                rx.icon("log-out", size=14),
                "Log out",
                type="submit",
                variant="soft",
                size="1",
                id="mlogout" if m else "logout",
            ),
        ),
    ]


def sidebar() -> rx.Component:
    """Desktop: fixed, full height, scrolls on its own when the window is short."""
    return rx.vstack(
        _brand(),
        rx.divider(),
        *nav_items(),
        display=DESKTOP,
        width="210px",
        min_width="210px",
        height="100vh",
        position="sticky",
        top="0",
        overflow_y="auto",
        padding="1em",
        border_right="1px solid var(--gray-a5)",
        align="start",
        spacing="2",
        id="sidebar",
    )


def topbar() -> rx.Component:
    """Phones: a bar with a menu button that opens the navigation in a drawer."""
    return rx.hstack(
        rx.drawer.root(
            rx.drawer.trigger(
                rx.icon_button(rx.icon("menu", size=20), variant="ghost", size="3", id="nav-menu", aria_label="Menu")
            ),
            rx.drawer.overlay(z_index="50"),
            rx.drawer.portal(
                rx.drawer.content(
                    rx.vstack(
                        rx.hstack(
                            _brand(),
                            rx.spacer(),
                            rx.drawer.close(
                                rx.icon_button(
                                    rx.icon("x", size=18), variant="ghost", id="nav-menu-close", aria_label="Close menu"
                                )
                            ),
                            width="100%",
                            align="center",
                        ),
                        rx.divider(),
                        *nav_items("mnav"),
                        height="100%",
                        align="start",
                        spacing="2",
                        padding="1em",
                    ),
                    background="var(--color-panel-solid)",
                    width="75vw",
                    max_width="280px",
                    height="100%",
                    top="0",
                    left="0",
                    position="fixed",
                    z_index="51",
                    id="nav-drawer",
                ),
            ),
            direction="left",
        ),
        _brand(),
        display=MOBILE,
        position="sticky",
        top="0",
        z_index="10",
        width="100%",
        padding="0.5em 1em",
        align="center",
        background="var(--color-background)",
        border_bottom="1px solid var(--gray-a5)",
        id="topbar",
    )


def loading() -> rx.Component:
    return rx.center(rx.spinner(size="3"), height="60vh", width="100%")


def shell(title: str, *content: rx.Component) -> rx.Component:
    """A private page: content shows only once the session is verified."""
    return rx.cond(
        AuthState.signed_in,
        stack_on_phone(
            sidebar(),
            topbar(),
            rx.vstack(
                rx.heading(title, size={"initial": "6", "sm": "7"}, id="page-title", overflow_wrap="anywhere"),
                *content,
                padding=rx.breakpoints(initial="1em", md="1.5em"),
                width="100%",
                min_width="0",  # a flex child may shrink below its content: no page-wide scrolling
                align="start",
                spacing="4",
            ),
            width="100%",
            align_items="start",
        ),
        loading(),
    )


def form_messages(state=AuthState) -> rx.Component:
    return rx.fragment(
        rx.cond(
            state.form_error != "",
            rx.callout(state.form_error, icon="triangle-alert", color_scheme="red", id="form-error", width="100%"),
        ),
        rx.cond(
            state.form_notice != "",
            rx.callout(state.form_notice, icon="check", color_scheme="green", id="form-notice", width="100%"),
        ),
    )
