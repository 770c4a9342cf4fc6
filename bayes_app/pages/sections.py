"""The main sections. Later milestones fill them; the shell, guard and navigation are real."""

from __future__ import annotations

import reflex as rx


def index_page() -> rx.Component:
    return rx.center(rx.spinner(size="3"), height="60vh")


PAGES: list = []  # /maps is bayes_app.pages.maps
