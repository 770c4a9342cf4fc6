"""The Search page: hybrid search with filters; each hit opens the PDF at its page."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import ObjectVar

from components.shell import shell
from state.search import SearchState


def _segment(s: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.cond(s["em"] == "1", rx.el.mark(s["text"], class_name="term"), rx.text.span(s["text"]))


def _result(r: ObjectVar[dict[str, Any]]) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.text(r["title"], weight="bold", class_name="result-title"),
                rx.text(r["year"], color_scheme="gray", size="2"),
                rx.badge("p. ", r["page"], class_name="result-page"),
                rx.cond(
                    r["role_label"] != "",
                    rx.badge(r["role_label"], color_scheme="violet", variant="soft", class_name="result-role"),
                ),
                align="center",
                wrap="wrap",
            ),
            rx.cond(
                r["section"] != "", rx.text(r["section"], size="1", color_scheme="gray", class_name="result-section")
            ),
            rx.text(r["authors"], size="1", color_scheme="gray"),
            rx.text(rx.foreach(r["segments"].to(list[dict[str, str]]), _segment), size="2", class_name="result-text"),
            rx.link(
                rx.hstack(rx.icon("file-search", size=14), rx.text("Open at page ", r["page"])),
                href=r["href"],
                class_name="open-at-page",
            ),
            spacing="1",
            align="start",
        ),
        width="100%",
        class_name="search-result",
    )


def search_page() -> rx.Component:
    return shell(
        "Search",
        rx.form(
            rx.hstack(
                rx.input(
                    name="q",
                    value=SearchState.query,
                    on_change=SearchState.set_query,
                    placeholder="Search your papers (any language)",
                    id="search-q",
                    width="420px",
                ),
                rx.select.root(
                    rx.select.trigger(placeholder="All collections"),
                    rx.select.content(
                        rx.select.item("All collections", value="all"),
                        rx.foreach(SearchState.collections, lambda c: rx.select.item(c["name"], value=c["id"])),
                    ),
                    on_change=SearchState.set_collection,
                    name="collection",
                ),
                rx.select.root(
                    rx.select.trigger(placeholder="All documents"),
                    rx.select.content(
                        rx.select.item("All documents", value="all"),
                        rx.foreach(SearchState.documents, lambda d: rx.select.item(d["title"], value=d["id"])),
                    ),
                    on_change=SearchState.set_document,
                    name="document",
                ),
                rx.button("Search", type="submit", id="search-go"),
                wrap="wrap",
            ),
            on_submit=SearchState.submit,
        ),
        rx.cond(SearchState.error != "", rx.callout(SearchState.error, color_scheme="red")),
        rx.cond(
            SearchState.searched & (SearchState.results.length() == 0),  # type: ignore[attr-defined]
            rx.text("No passages found.", color_scheme="gray", id="no-results"),
        ),
        rx.cond(
            SearchState.weak,
            rx.callout(
                "No strong matches; closest passages:", icon="search-x", color_scheme="amber", id="weak-results"
            ),
        ),
        rx.vstack(rx.foreach(SearchState.results, _result), width="100%", id="results"),
    )
