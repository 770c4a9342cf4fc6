"""The Library page: upload, live ingestion status, collections, metadata."""

from __future__ import annotations

import reflex as rx

from components.citation_graph import missing_panel
from components.library import collections_panel, documents_table, drop_zone, edit_dialog, ocr_choice, upload_results
from components.shell import shell
from components.zotero import zotero_section


def library_page() -> rx.Component:
    return shell(
        "Library",
        drop_zone(),
        ocr_choice(),
        upload_results(),
        zotero_section(),
        collections_panel(),
        documents_table(),
        missing_panel(),
        edit_dialog(),
    )
