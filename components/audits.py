"""Check-a-draft UI: the drop zone, live progress, the summary, the draft with a chip per
citation (coloured by verdict) and its evidence, suggestions, exports. Draft and paper text are
rendered as plain text only (never as markup)."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import ObjectVar

from components.mindmap import download_link
from state.audits import AuditState

UPLOAD_ID = "draft-upload"
ACCEPT = {
    "text/markdown": [".md", ".markdown"],
    "text/plain": [".txt", ".tex", ".bib"],
    "application/x-tex": [".tex"],
    "application/x-bibtex": [".bib"],
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": [".docx"],
}


def drop_zone() -> rx.Component:
    return rx.upload.root(
        rx.vstack(
            rx.icon("file-check", size=28, color="var(--accent-9)"),
            rx.text("Drop a draft here, or click to choose it", weight="medium"),
            rx.text(
                ".md · .txt · .tex with its .bib · .docx (Zotero citations are matched)", size="1", color_scheme="gray"
            ),
            align="center",
            spacing="1",
        ),
        id=UPLOAD_ID,
        multiple=True,
        max_files=2,
        accept=ACCEPT,
        on_drop=AuditState.handle_upload(rx.upload_files(upload_id=UPLOAD_ID)),  # type: ignore[operator]
        on_drop_rejected=AuditState.files_rejected,
        drag_active_style={"border_color": "var(--accent-9)", "background_color": "var(--accent-a3)"},
        border="2px dashed var(--gray-a7)",
        border_radius="10px",
        padding="1.2em",
        width="100%",
        cursor="pointer",
    )


def scope() -> rx.Component:
    return rx.hstack(
        rx.text("Check against", size="2", color_scheme="gray", as_="label", html_for="audit-scope"),
        rx.select.root(
            rx.select.trigger(id="audit-scope", aria_label="Library scope of the check"),
            rx.select.content(
                rx.select.item("my whole library", value="all"),
                rx.foreach(AuditState.collections, lambda c: rx.select.item(c["name"], value=c["id"])),
            ),
            value=rx.cond(AuditState.collection_id == "", "all", AuditState.collection_id),
            on_change=AuditState.set_collection,
            size="1",
        ),
        align="center",
        spacing="2",
        wrap="wrap",
    )


def progress() -> rx.Component:
    return rx.cond(
        AuditState.running,
        rx.vstack(
            rx.hstack(
                rx.spinner(size="2"),
                rx.text("Checking sentence ", AuditState.done, " of ", AuditState.total, id="audit-progress-text"),
                rx.button(
                    "Stop", size="1", variant="soft", color_scheme="red", on_click=AuditState.cancel, id="audit-cancel"
                ),
                align="center",
                spacing="3",
            ),
            rx.progress(value=AuditState.pct, width="100%", id="audit-progress"),
            width="100%",
        ),
    )


def _stat(label: str, key: str, color: str = "gray") -> rx.Component:
    return rx.vstack(
        rx.text(AuditState.summary.get(key, "0"), size="5", weight="bold", color_scheme=color),
        rx.text(label, size="1", color_scheme="gray"),
        spacing="0",
        align="center",
        min_width="84px",
        class_name=f"audit-stat stat-{key}",
    )


def summary() -> rx.Component:
    return rx.cond(
        AuditState.audit_id != "",
        rx.card(
            rx.vstack(
                rx.hstack(
                    rx.icon("file-text", size=16),
                    rx.text(AuditState.filename, weight="bold", id="audit-filename"),
                    rx.badge(AuditState.status, id="audit-status"),
                    rx.spacer(),
                    rx.cond(
                        ~AuditState.running,
                        rx.hstack(
                            download_link(
                                "Report (Markdown)", AuditState.report_base + ".md", "report.md", "audit-export-md"
                            ),
                            download_link(
                                "Draft with comments (DOCX)",
                                AuditState.report_base + ".docx",
                                "draft-checked.docx",
                                "audit-export-docx",
                            ),
                            spacing="2",
                            wrap="wrap",
                        ),
                    ),
                    align="center",
                    wrap="wrap",
                    width="100%",
                ),
                rx.flex(
                    _stat("sentences", "sentences"),
                    _stat("cited", "cited"),
                    _stat("supported", "supported", "green"),
                    _stat("partly", "partial", "amber"),
                    _stat("flagged", "flagged", "red"),
                    _stat("not in library", "not_in_library"),
                    _stat("suggestions", "suggestions", "blue"),
                    wrap="wrap",
                    gap="2",
                    id="audit-summary",
                ),
                spacing="3",
                width="100%",
            ),
            width="100%",
        ),
    )


def _chip(c: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.popover.root(
        rx.popover.trigger(
            rx.badge(
                c["marker"],
                " · ",
                c["label"],
                color_scheme=c["color"].to(str),
                variant="soft",
                cursor="pointer",
                class_name="audit-chip",
                data_verdict=c["verdict"],
                as_="button",
            ),
        ),
        rx.popover.content(
            rx.vstack(
                rx.text(c["reference"], size="1", color_scheme="gray"),
                rx.hstack(
                    rx.badge(c["label"], color_scheme=c["color"].to(str)),
                    rx.cond(c["score"] != "", rx.text("score ", c["score"], size="1", color_scheme="gray")),
                    align="center",
                ),
                rx.cond(c["reason"] != "", rx.text(c["reason"], size="2")),
                rx.cond(
                    c["quote"] != "",
                    rx.vstack(
                        rx.text(c["title"], " · p. ", c["page"], size="1", weight="bold"),
                        rx.blockquote(c["quote"], size="2", class_name="audit-quote"),
                        rx.link(
                            rx.hstack(rx.icon("file-search", size=14), rx.text("Open at page ", c["page"])),
                            href=c["href"],
                            class_name="audit-evidence-link",
                        ),
                        spacing="1",
                    ),
                    rx.text("Not in your library: add the paper to check this citation.", size="2"),
                ),
                spacing="2",
                max_width="420px",
            ),
            class_name="audit-chip-detail",
        ),
    )


def _suggestion(g: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.hstack(
        rx.icon("lightbulb", size=14, color="var(--blue-9)"),
        rx.vstack(
            rx.text(g["title"], " · p. ", g["page"], " · score ", g["score"], size="1", weight="bold"),
            rx.text(g["quote"], size="1", color_scheme="gray"),
            rx.link("Open at page ", g["page"], href=g["href"], size="1", class_name="audit-suggestion-link"),
            spacing="0",
        ),
        align="start",
        class_name="audit-suggestion",
    )


def _sentence(s: ObjectVar[dict[str, Any]]) -> rx.Component:
    return rx.box(
        rx.hstack(
            rx.text(s["index"], size="1", color_scheme="gray", min_width="1.8em"),
            rx.vstack(
                rx.text(s["text"], size="2", class_name="audit-sentence-text"),
                rx.flex(
                    rx.foreach(s["chips"].to(list[dict[str, str]]), _chip),
                    rx.cond(
                        s["uncited"] == "1",
                        rx.badge("finding without a citation", color_scheme="orange", variant="outline"),
                    ),
                    wrap="wrap",
                    gap="1",
                ),
                rx.foreach(s["suggestions"].to(list[dict[str, str]]), _suggestion),
                spacing="1",
                width="100%",
            ),
            align="start",
            width="100%",
        ),
        padding="0.5em",
        border_left=rx.cond(s["flagged"] == "1", "3px solid var(--red-9)", "3px solid transparent"),
        class_name=rx.cond(s["flagged"] == "1", "audit-sentence flagged", "audit-sentence"),
        width="100%",
    )


def draft_view() -> rx.Component:
    return rx.cond(
        AuditState.audit_id != "",
        rx.vstack(
            rx.hstack(
                rx.heading("Draft", size="4"),
                rx.spacer(),
                rx.text("Only problems", size="2", as_="label", html_for="audit-only-problems"),
                rx.switch(
                    checked=AuditState.only_problems, on_change=AuditState.toggle_problems, id="audit-only-problems"
                ),
                align="center",
                width="100%",
            ),
            rx.foreach(AuditState.shown, _sentence),
            rx.cond(
                AuditState.missing.length() > 0,  # type: ignore[attr-defined]
                rx.vstack(
                    rx.heading("Not in your library", size="3"),
                    rx.foreach(
                        AuditState.missing, lambda m: rx.text(m["reference"], size="1", class_name="audit-missing")
                    ),
                    spacing="1",
                    id="audit-missing",
                ),
            ),
            spacing="2",
            width="100%",
            id="audit-draft",
        ),
    )


def history() -> rx.Component:
    def row(r: ObjectVar[dict[str, str]]) -> rx.Component:
        return rx.hstack(
            rx.link(
                r["filename"],
                on_click=AuditState.open_audit(r["id"]),  # type: ignore[operator]
                size="2",
                cursor="pointer",
            ),
            rx.badge(r["status"], size="1"),
            rx.text(r["created_at"], size="1", color_scheme="gray"),
            rx.icon_button(
                rx.icon("trash-2", size=12),
                size="1",
                variant="ghost",
                color_scheme="gray",
                on_click=AuditState.delete(r["id"]),  # type: ignore[operator]
                aria_label="Delete this check",
            ),
            align="center",
            wrap="wrap",
            class_name="audit-history-row",
        )

    return rx.cond(
        AuditState.history.length() > 0,  # type: ignore[attr-defined]
        rx.vstack(
            rx.heading("Earlier checks", size="3"), rx.foreach(AuditState.history, row), spacing="1", width="100%"
        ),
    )
