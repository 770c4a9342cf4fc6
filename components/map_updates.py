"""Living maps in the map editor: the "N new papers may change this map" badge, the "Watch for
new papers" switch, an update proposal's preview (each claim, where it goes, from which paper,
with a tick box; accept all, the ticked ones, or reject) and a node's "superseded by" lines."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import ObjectVar

from state.mindmap import MapState


def new_papers_badge() -> rx.Component:
    """Opens the proposal drawer; shown while update proposals are pending."""
    return rx.cond(
        MapState.new_papers > 0,
        rx.button(
            rx.icon("file-plus", size=14),
            MapState.new_papers,
            rx.cond(MapState.new_papers == 1, " new paper may change this map", " new papers may change this map"),
            size="1",
            variant="soft",
            color_scheme="amber",
            on_click=MapState.set_proposals_open(True),
            id="new-papers-badge",
        ),
    )


def watch_switch() -> rx.Component:
    return rx.tooltip(
        rx.hstack(
            rx.switch(checked=MapState.watch_new_papers, on_change=MapState.set_watch, size="1", id="watch-switch"),
            rx.text("Watch for new papers", size="1"),
            align="center",
            spacing="1",
        ),
        content="When a paper relevant to this map finishes indexing, propose where its claims fit.",
    )


def _item(it: ObjectVar[dict[str, Any]]) -> rx.Component:
    key = it["key"].to(str)
    return rx.hstack(
        rx.checkbox(
            checked=~MapState.skipped.contains(key),
            on_change=lambda on: MapState.toggle_item(key, on),
            class_name="update-pick",
        ),
        rx.vstack(
            rx.text(it["text"].to(str), size="2"),
            rx.text(
                rx.text.strong(it["action"].to(str)),
                " ",
                it["where"].to(str),
                " · from ",
                rx.text.em(it["paper"].to(str)),
                size="1",
                color_scheme="gray",
            ),
            spacing="0",
            min_width="0",
        ),
        align="start",
        width="100%",
        class_name="update-item",
    )


def update_card(p: ObjectVar[dict[str, Any]]) -> rx.Component:
    """An update proposal's preview: nothing is written before one of the accept buttons."""
    pid = p["id"].to(str)
    return rx.vstack(
        rx.text(p["papers"].to(str), size="1", class_name="update-papers"),
        rx.text("Preview, ", p["cost"].to(str), " (charged like any run).", size="1", color_scheme="gray"),
        rx.foreach(p["items"].to(list[dict]), _item),
        rx.hstack(
            rx.button(
                "Accept all", size="1", on_click=MapState.accept_items(pid, True), class_name="update-accept-all"
            ),
            rx.button(
                "Accept ticked",
                size="1",
                variant="outline",
                on_click=MapState.accept_items(pid, False),
                class_name="update-accept-some",
            ),
            rx.button(
                "Reject",
                size="1",
                variant="soft",
                color_scheme="gray",
                on_click=MapState.decide(pid, False),
                class_name="update-reject",
            ),
            wrap="wrap",
        ),
        spacing="2",
        width="100%",
        class_name="update-proposal",
    )


def challenge_lines() -> rx.Component:
    """The selected node's 'Superseded/Contradicted by <paper> (evidence arrived <date>)'."""
    return rx.foreach(
        MapState.sel_challenges,
        lambda line: rx.callout(line, icon="triangle-alert", color_scheme="orange", size="1", class_name="challenged"),
    )
