"""Citation-graph panels: "Cites / Cited by in your library" beside a document, and "Missing
from your library" (a reading list) on the library page. All text is rendered as text."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from state.citations import CitationGraphState as S


def _linked(p: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.hstack(
        rx.link(p["title"], href=p["href"], size="2", class_name="graph-doc-link"),
        rx.text(p["meta"], size="1", color_scheme="gray"),
        spacing="2",
        align="baseline",
        wrap="wrap",
    )


def _list(title: str, items, empty: str, id_: str) -> rx.Component:
    return rx.vstack(
        rx.text(title, size="2", weight="bold"),
        rx.cond(
            items.length() > 0,
            rx.vstack(rx.foreach(items, _linked), spacing="1", width="100%"),
            rx.text(empty, size="1", color_scheme="gray"),
        ),
        spacing="1",
        id=id_,
        min_width="16rem",
        flex="1",
    )


def document_citations_panel() -> rx.Component:
    """The open document's links in the citation graph."""
    return rx.card(
        rx.flex(
            _list(
                "Cites in your library", S.cites, "No paper of your library is in its reference list.", "graph-cites"
            ),
            _list("Cited by in your library", S.cited_by, "No paper of your library cites it.", "graph-cited-by"),
            gap="4",
            wrap="wrap",
            width="100%",
        ),
        width="100%",
        id="document-citations",
    )


def _missing(p: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.box(
        rx.text(p["title"], size="2", weight="medium", class_name="missing-title"),
        rx.text(p["authors"], rx.cond(p["year"] != "", rx.text.span(" · ", p["year"])), size="1", color_scheme="gray"),
        rx.hstack(
            rx.badge(p["count"], size="1", color_scheme="blue", class_name="missing-count"),
            rx.cond(
                p["doi"] != "",
                rx.link(p["doi"], href=p["doi_href"], size="1", is_external=True, class_name="missing-doi"),
            ),
            spacing="2",
            align="center",
            wrap="wrap",
        ),
        class_name="missing-paper",
        padding_y="0.4em",
        border_bottom="1px solid var(--gray-a4)",
        width="100%",
    )


def missing_panel() -> rx.Component:
    """Papers several of the user's papers cite that the library lacks, most cited first."""
    return rx.cond(
        S.missing_papers.length() > 0,  # type: ignore[attr-defined]
        rx.card(
            rx.vstack(
                rx.heading("Missing from your library", size="3"),
                rx.text(
                    "Papers that at least two of your papers cite, most cited first.", size="1", color_scheme="gray"
                ),
                rx.foreach(S.missing_papers, _missing),
                spacing="1",
                width="100%",
            ),
            width="100%",
            id="missing-papers",
        ),
    )
