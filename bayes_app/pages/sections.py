"""The main sections. Later milestones fill them; the shell, guard and navigation are real."""

from __future__ import annotations

import reflex as rx

from components.shell import coming_later, shell


def index_page() -> rx.Component:
    return rx.center(rx.spinner(size="3"), height="60vh")


def maps_page() -> rx.Component:
    return shell("Maps", coming_later(
        "Research mindmaps arrive with the mindmap milestone: ask a question and watch cited "
        "claims appear on the map."))


PAGES = [
    ("/maps", maps_page, "Maps"),
]
