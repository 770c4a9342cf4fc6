"""Library UI: the drop zone, the document table with live progress, the dialogs."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.event import EventSpec
from reflex.vars import ObjectVar

from state.library import LibraryState

UPLOAD_ID = "pdf-upload"


def _rejected(files: rx.Var) -> EventSpec:
    """The names of the files the zone refused, read in the page (the File objects
    themselves do not travel to the server)."""
    from reflex.vars import ArrayVar, ObjectVar

    names = files.to(ArrayVar).map(lambda rf: rf.to(ObjectVar)["file"].to(ObjectVar)["path"].to(str))
    return LibraryState.files_rejected(names)


def drop_zone() -> rx.Component:
    return rx.upload.root(
        rx.vstack(
            rx.icon("upload", size=28, color="var(--accent-9)"),
            rx.text("Drop PDFs here, or click to choose several", weight="medium"),
            rx.text("PDF only · each file is indexed on its own", size="1", color_scheme="gray"),
            align="center",
            spacing="1",
        ),
        id=UPLOAD_ID,
        multiple=True,
        accept={"application/pdf": [".pdf"]},
        max_files=100,
        on_drop=LibraryState.handle_upload(rx.upload_files(upload_id=UPLOAD_ID)),
        on_drop_rejected=_rejected,
        # a file dragged over the zone lights it up
        drag_active_style={"border_color": "var(--accent-9)", "background_color": "var(--accent-a3)"},
        border="2px dashed var(--gray-a7)",
        border_radius="10px",
        padding="1.2em",
        width="100%",
        cursor="pointer",
    )


def ocr_choice() -> rx.Component:
    """The OCR language for the next uploads' scanned pages (default: the detected one)."""
    return rx.hstack(
        rx.text("Scanned pages are read in", size="1", color_scheme="gray", as_="label", html_for="ocr-language"),
        rx.select.root(
            rx.select.trigger(id="ocr-language", aria_label="OCR language for scanned pages"),
            rx.select.content(
                rx.select.item("the detected language", value="auto"),
                rx.foreach(LibraryState.ocr_languages, lambda o: rx.select.item(o[1], value=o[0])),
            ),
            value=LibraryState.ocr_choice,
            on_change=LibraryState.set_ocr_choice,
            size="1",
        ),
        align="center",
        spacing="2",
        wrap="wrap",
        id="ocr-choice",
    )


def upload_results() -> rx.Component:
    def row(r: ObjectVar[dict[str, str]]) -> rx.Component:
        return rx.hstack(
            rx.match(
                r["ok"],
                ("yes", rx.icon("circle-check", color="green", size=16)),
                ("dup", rx.icon("copy", color="orange", size=16)),
                rx.icon("circle-x", color="red", size=16),
            ),
            rx.text(r["file"], weight="medium", size="2"),
            rx.text(r["message"], size="2", color_scheme="gray"),
            class_name="upload-result",
            align="center",
        )

    return rx.vstack(rx.foreach(LibraryState.upload_results, row), id="upload-results", spacing="1")


def status_cell(d: ObjectVar[dict[str, Any]]) -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.badge(
                d["stage"],
                color_scheme=rx.match(d["status"], ("indexed", "green"), ("failed", "red"), "blue"),
                class_name="doc-status",
                data_status=d["status"],
            ),
            rx.cond(d["progress"] != "", rx.text(d["progress"], size="1", color_scheme="gray")),
            align="center",
        ),
        rx.cond(d["active"], rx.progress(value=d["pct"], max=100, width="140px")),
        rx.cond(
            d["error"] != "",
            rx.text(d["error"], size="1", color="var(--red-11)", class_name="doc-error", max_width="320px"),
        ),
        spacing="1",
    )


def _reference(r: ObjectVar[dict[str, str]]) -> rx.Component:
    # Parsed from the PDF: untrusted text, rendered as plain text only.
    return rx.el.li(
        rx.text(
            r["who"],
            " (",
            r["year"],
            "). ",
            rx.text.span(r["title"], weight="medium"),
            rx.cond(r["venue"] != "", rx.text.span(". ", r["venue"])),
            rx.cond(r["doi"] != "", rx.text.span(" doi:", r["doi"])),
            size="1",
        ),
        class_name="reference-entry",
    )


def references(d: ObjectVar[dict[str, Any]]) -> rx.Component:
    """ "References (N)", expanding to the parsed reference list."""
    return rx.vstack(
        rx.button(
            rx.icon(rx.cond(LibraryState.refs_doc == d["id"], "chevron-down", "chevron-right"), size=12),
            "References (",
            d["refs"],
            ")",
            size="1",
            variant="ghost",
            on_click=LibraryState.toggle_references(d["id"]),
            class_name="doc-references",
        ),
        rx.cond(
            LibraryState.refs_doc == d["id"],
            rx.el.ol(
                rx.foreach(LibraryState.refs, _reference),
                class_name="reference-list",
                style={"max_height": "320px", "overflow_y": "auto", "padding_left": "1.5em", "max_width": "640px"},
            ),
        ),
        spacing="1",
        align="start",
    )


def doc_row(d: ObjectVar[dict[str, Any]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(
            rx.vstack(
                rx.link(d["title"], href="/documents/" + d["id"].to(str), weight="medium", class_name="doc-title"),
                rx.hstack(
                    rx.text(d["authors"], size="1", color_scheme="gray"),
                    rx.cond(
                        d["language"] != "",
                        rx.badge(
                            d["language_name"],
                            size="1",
                            variant="soft",
                            color_scheme="gray",
                            title="Language of the text (detected)",
                            class_name="doc-language",
                        ),
                    ),
                    rx.cond(
                        d["ocr"] != "",
                        rx.badge(
                            d["ocr"],
                            rx.cond(d["ocr_lang"] != "", " (" + d["ocr_lang"].to(str) + ")", ""),
                            size="1",
                            variant="soft",
                            color_scheme="amber",
                            title="Pages without a text layer were read by text recognition (OCR)",
                            class_name="doc-ocr",
                        ),
                    ),
                    spacing="2",
                    align="center",
                ),
                rx.cond(d["refs"] != "0", references(d)),
                spacing="0",
            )
        ),
        rx.table.cell(d["year"], class_name="doc-year", data_label="Year"),
        rx.table.cell(d["pages"], class_name="doc-pages", data_label="Pages"),
        rx.table.cell(rx.text(d["collections"], size="1"), class_name="doc-collections"),
        rx.table.cell(status_cell(d), class_name="doc-status-cell"),
        rx.table.cell(
            rx.hstack(
                rx.icon_button(
                    rx.icon("pencil", size=14),
                    size="1",
                    variant="soft",
                    on_click=LibraryState.open_edit(d),
                    title="Edit details",
                    class_name="doc-edit",
                ),
                rx.icon_button(
                    rx.icon("refresh-cw", size=14),
                    size="1",
                    variant="soft",
                    on_click=LibraryState.reindex(d["id"]),
                    title="Re-index",
                ),
                rx.alert_dialog.root(
                    rx.alert_dialog.trigger(
                        rx.icon_button(
                            rx.icon("trash-2", size=14),
                            size="1",
                            color_scheme="red",
                            variant="soft",
                            title="Delete",
                            class_name="doc-delete",
                        )
                    ),
                    rx.alert_dialog.content(
                        rx.alert_dialog.title("Delete this document?"),
                        rx.alert_dialog.description("Its file, passages and search index entries are removed."),
                        rx.hstack(
                            rx.alert_dialog.cancel(rx.button("Cancel", variant="soft")),
                            rx.alert_dialog.action(
                                rx.button(
                                    "Delete",
                                    color_scheme="red",
                                    class_name="confirm-delete",
                                    on_click=LibraryState.delete_document(d["id"]),
                                )
                            ),
                            justify="end",
                            spacing="2",
                            margin_top="1em",
                        ),
                    ),
                ),
                spacing="1",
            )
        ),
        class_name="doc-row",
        data_doc_id=d["id"],
    )


def documents_table() -> rx.Component:
    return rx.cond(
        LibraryState.has_documents,
        rx.table.root(
            rx.table.header(
                rx.table.row(
                    *[
                        rx.table.column_header_cell(h)
                        for h in ("Document", "Year", "Pages", "Collections", "Status", "")
                    ]
                )
            ),
            rx.table.body(rx.foreach(LibraryState.documents, doc_row)),
            width="100%",
            id="documents",
        ),
        rx.text("No documents yet: drop a few PDFs above.", color_scheme="gray", id="no-documents"),
    )


def edit_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("Document details"),
            rx.cond(
                LibraryState.edit_error != "",
                rx.callout(LibraryState.edit_error, color_scheme="red", icon="triangle-alert"),
            ),
            rx.form(
                rx.vstack(
                    rx.text("Title", size="2"),
                    rx.input(name="title", default_value=LibraryState.edit_title, id="edit-title", width="100%"),
                    rx.text("Authors (comma-separated)", size="2"),
                    rx.input(name="authors", default_value=LibraryState.edit_authors, id="edit-authors", width="100%"),
                    rx.hstack(
                        rx.vstack(
                            rx.text("Year", size="2"),
                            rx.input(name="year", default_value=LibraryState.edit_year, id="edit-year"),
                        ),
                        rx.vstack(
                            rx.text("DOI", size="2"),
                            rx.input(name="doi", default_value=LibraryState.edit_doi, id="edit-doi"),
                        ),
                    ),
                    rx.text("Collection", size="2"),
                    rx.select(
                        LibraryState.collection_options,
                        value=LibraryState.edit_collection,
                        on_change=LibraryState.set_edit_collection,
                        placeholder="(none)",
                        id="edit-collection",
                    ),
                    rx.hstack(
                        rx.button("Cancel", type="button", variant="soft", on_click=LibraryState.close_edit),
                        rx.button("Save", type="submit", id="edit-save"),
                        justify="end",
                        width="100%",
                    ),
                    spacing="2",
                ),
                on_submit=LibraryState.save_edit,
            ),
        ),
        open=LibraryState.edit_id != "",
        on_open_change=lambda _open: LibraryState.close_edit(),
    )


def collections_panel() -> rx.Component:
    def item(c: ObjectVar[dict[str, Any]]) -> rx.Component:
        return rx.hstack(
            rx.button(
                c["name"],
                " (",
                c["count"],
                ")",
                size="1",
                variant=rx.cond(LibraryState.filter_collection == c["id"], "solid", "soft"),
                on_click=LibraryState.set_filter(c["id"]),
                class_name="collection-filter",
            ),
            rx.popover.root(
                rx.popover.trigger(
                    rx.icon_button(rx.icon("pencil", size=12), size="1", variant="ghost", title="Rename")
                ),
                rx.popover.content(
                    rx.form(
                        rx.hstack(
                            rx.input(name="name", default_value=c["name"], size="1"),
                            rx.input(name="id", type="hidden", value=c["id"]),
                            rx.button("Rename", size="1", type="submit"),
                        ),
                        on_submit=LibraryState.rename_collection,
                    )
                ),
            ),
            rx.icon_button(
                rx.icon("x", size=12),
                size="1",
                variant="ghost",
                color_scheme="red",
                title="Delete collection (documents stay)",
                on_click=LibraryState.delete_collection(c["id"]),
            ),
            spacing="1",
            align="center",
        )

    return rx.hstack(
        rx.button(
            "All documents",
            size="1",
            variant=rx.cond(LibraryState.filter_collection == "", "solid", "soft"),
            on_click=LibraryState.set_filter(""),
        ),
        rx.foreach(LibraryState.collections, item),
        rx.form(
            rx.hstack(
                rx.input(name="name", placeholder="New collection", size="1", id="new-collection"),
                rx.button("Add", size="1", type="submit", id="add-collection"),
            ),
            on_submit=LibraryState.create_collection,
            reset_on_submit=True,
        ),
        wrap="wrap",
        spacing="2",
        align="center",
        id="collections",
    )
