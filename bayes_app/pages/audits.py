"""The Check-a-draft page: upload a draft, watch it checked, read the verdicts and export."""

from __future__ import annotations

import reflex as rx

from components import audits as ui
from components.shell import shell
from state.audits import AuditState


def audits_page() -> rx.Component:
    return shell(
        "Check a draft",
        rx.vstack(
            rx.text(
                "Every citation of your draft is checked against the paper it cites in your library; "
                "findings without a citation get the library's best sources.",
                size="2",
                color_scheme="gray",
            ),
            ui.drop_zone(),
            ui.scope(),
            rx.cond(
                AuditState.error != "",
                rx.callout(AuditState.error, icon="triangle-alert", color_scheme="red", id="audit-error"),
            ),
            ui.progress(),
            ui.summary(),
            ui.draft_view(),
            ui.history(),
            spacing="3",
            width="100%",
            max_width="960px",
        ),
    )
