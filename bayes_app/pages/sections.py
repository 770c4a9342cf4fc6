"""The landing route: a spinner while `AuthState.go_home` sends the user on."""

from __future__ import annotations

import reflex as rx


def index_page() -> rx.Component:
    return rx.center(rx.spinner(size="3"), height="60vh")
