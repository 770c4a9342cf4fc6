"""The document viewer: /documents/<id>?page=N&quote=... — the page rendered with the quote
highlighted. The PDF bytes come from the owner-only API route, never from a public URL."""

from __future__ import annotations

import reflex as rx

from components.citation_graph import document_citations_panel
from components.pdf_viewer import pdf_document, pdf_page, pinch_zoom
from components.shell import shell
from state.viewer import BACK_JS, ViewerState


def viewer_page() -> rx.Component:
    return shell(
        "Document",
        rx.cond(
            ViewerState.missing,
            rx.callout("No such document.", icon="file-x", color_scheme="red", id="viewer-missing"),
            rx.vstack(
                rx.hstack(
                    rx.button(
                        rx.icon("arrow-left", size=14),
                        "Back",
                        size="1",
                        variant="ghost",
                        on_click=rx.call_script(BACK_JS),
                        id="viewer-back",
                    ),
                    rx.heading(ViewerState.title, size="4", id="viewer-title"),
                    align="center",
                    spacing="3",
                ),
                rx.hstack(
                    rx.button(
                        rx.icon("chevron-left", size=14),
                        "Previous",
                        size="1",
                        variant="soft",
                        on_click=ViewerState.prev_page,
                        id="prev-page",
                    ),
                    rx.text(
                        "Page ",
                        rx.text.span(ViewerState.page, id="viewer-page"),
                        " of ",
                        ViewerState.num_pages,
                        size="2",
                    ),
                    rx.button(
                        "Next",
                        rx.icon("chevron-right", size=14),
                        size="1",
                        variant="soft",
                        on_click=ViewerState.next_page,
                        id="next-page",
                    ),
                    rx.hstack(
                        rx.icon_button(
                            rx.icon("zoom-out", size=14),
                            size="1",
                            variant="soft",
                            on_click=ViewerState.zoom_out,
                            id="zoom-out",
                            title="Zoom out",
                        ),
                        rx.text(
                            ViewerState.zoom_label, size="1", id="viewer-zoom", min_width="3.5em", text_align="center"
                        ),
                        rx.icon_button(
                            rx.icon("zoom-in", size=14),
                            size="1",
                            variant="soft",
                            on_click=ViewerState.zoom_in,
                            id="zoom-in",
                            title="Zoom in",
                        ),
                        align="center",
                        spacing="1",
                    ),
                    rx.cond(
                        ViewerState.quote_found,
                        rx.text(
                            "Highlighted: “",
                            ViewerState.quote,
                            "”",
                            size="1",
                            color_scheme="gray",
                            max_width="600px",
                            trim="end",
                        ),
                    ),
                    align="center",
                    spacing="3",
                    wrap="wrap",
                ),
                rx.cond(
                    ViewerState.quote_note != "",
                    rx.callout(
                        ViewerState.quote_note,
                        icon="info",
                        size="1",
                        color_scheme=rx.cond(ViewerState.quote_found, "blue", "amber"),
                        id="quote-note",
                    ),
                ),
                rx.cond(ViewerState.load_error != "", rx.callout(ViewerState.load_error, color_scheme="red")),
                rx.cond(
                    ViewerState.file_url != "",
                    rx.box(
                        pinch_zoom(
                            pdf_document(
                                rx.box(
                                    # rendered once the box is measured, so a phone never draws the page
                                    # at the desktop width first
                                    rx.cond(
                                        ViewerState.view_width > 0,
                                        pdf_page(page_number=ViewerState.page, width=ViewerState.page_width),
                                    ),
                                    # pdfium's boxes of the quote in page percentages, drawn over
                                    # the canvas: they scale with it at every zoom and width
                                    rx.foreach(
                                        ViewerState.rects,
                                        lambda r: rx.box(
                                            class_name="pdf-box",
                                            position="absolute",
                                            left=r["left"],
                                            top=r["top"],
                                            width=r["width"],
                                            height=r["height"],
                                        ),
                                    ),
                                    # the user's Zotero annotations, at their rectangles, in their colour
                                    rx.foreach(
                                        ViewerState.zotero_boxes,
                                        lambda r: rx.box(
                                            class_name="zotero-box",
                                            position="absolute",
                                            left=r["left"],
                                            top=r["top"],
                                            width=r["width"],
                                            height=r["height"],
                                            background_color=r["color"],
                                            title=r["comment"],
                                            custom_attrs={"data-annotation": r["key"], "data-color": r["color"]},
                                        ),
                                    ),
                                    position="relative",
                                    width="fit-content",
                                    class_name="pdf-frame",
                                ),
                                file=ViewerState.file_url,
                                on_load_success=ViewerState.loaded,
                                on_load_error=ViewerState.failed,
                            ),
                            on_pinch=ViewerState.pinch_zoom,
                        ),
                        border="1px solid var(--gray-a5)",
                        # the page fits this box's width at 100 %; zoomed in, it pans inside
                        # the box, never the whole page
                        max_width="100%",
                        width="100%",
                        overflow_x="auto",
                        id="pdf-view",
                        data_quote_found=rx.cond(ViewerState.quote_found, "yes", "no"),
                        on_mount=rx.call_script(
                            "document.getElementById('pdf-view').clientWidth", callback=ViewerState.set_view_width
                        ),
                    ),
                ),
                document_citations_panel(),
                rx.el.style(
                    ".pdf-box { background: rgba(255, 213, 0, 0.45); mix-blend-mode: multiply; "
                    "border-radius: 2px; pointer-events: none; z-index: 5; } "
                    ".zotero-box { opacity: 0.35; border-radius: 2px; z-index: 4; "
                    "mix-blend-mode: multiply; pointer-events: none; }"
                ),
                width="100%",
            ),
        ),
    )
