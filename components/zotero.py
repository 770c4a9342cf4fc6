"""Zotero section of the Library page: connected libraries with live progress, connect form."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import ObjectVar

from bayes_app.usecases.views import ZOTERO_LOCAL_LABEL
from state.zotero import ZoteroState


def _problems(z: ObjectVar[dict[str, Any]]) -> rx.Component:
    def row(p: ObjectVar[dict[str, Any]]) -> rx.Component:
        return rx.hstack(
            rx.text(p["title"], weight="medium", size="1"),
            rx.text(p["message"], size="1", color_scheme="gray"),
            class_name="zotero-problem",
            spacing="2",
        )

    return rx.cond(
        z["problem_count"] != "0",
        rx.el.details(
            rx.el.summary(
                rx.text(z["problem_count"], " item(s) without a usable PDF", size="1", as_="span"), cursor="pointer"
            ),
            rx.vstack(rx.foreach(z["problems"].to(list[dict]), row), spacing="1", padding_left="1em"),
            class_name="zotero-problems",
        ),
    )


def _library(z: ObjectVar[dict[str, Any]]) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.icon("library", size=16),
                rx.text(z["name"], weight="bold", class_name="zotero-name"),
                rx.text(z["kind"], size="1", color_scheme="gray"),
                rx.badge(
                    z["status"],
                    class_name="zotero-status",
                    data_status=z["status"],
                    color_scheme=rx.match(z["status"], ("idle", "green"), ("error", "red"), "blue"),
                ),
                rx.spacer(),
                rx.button(
                    rx.icon("refresh-cw", size=14),
                    "Sync now",
                    size="1",
                    variant="soft",
                    class_name="zotero-sync-now",
                    disabled=z["active"].to(bool),
                    on_click=ZoteroState.zotero_sync_now(z["id"]),  # type: ignore[operator]
                ),
                rx.alert_dialog.root(
                    rx.alert_dialog.trigger(
                        rx.button(
                            "Disconnect", size="1", variant="soft", color_scheme="red", class_name="zotero-disconnect"
                        )
                    ),
                    rx.alert_dialog.content(
                        rx.alert_dialog.title("Disconnect this Zotero library?"),
                        rx.alert_dialog.description(
                            "Keep its documents in your library as ordinary documents, or remove them "
                            "(and the collections the sync made)."
                        ),
                        rx.hstack(
                            rx.alert_dialog.cancel(rx.button("Cancel", variant="soft")),
                            rx.alert_dialog.action(
                                rx.button(
                                    "Keep documents",
                                    variant="soft",
                                    class_name="zotero-keep",
                                    on_click=ZoteroState.zotero_disconnect(z["id"], True),  # type: ignore[operator]
                                )
                            ),
                            rx.alert_dialog.action(
                                rx.button(
                                    "Remove documents",
                                    color_scheme="red",
                                    class_name="zotero-remove",
                                    on_click=ZoteroState.zotero_disconnect(z["id"], False),  # type: ignore[operator]
                                )
                            ),
                            justify="end",
                            spacing="2",
                            margin_top="1em",
                        ),
                    ),
                ),
                align="center",
                width="100%",
                spacing="2",
            ),
            rx.text(
                "Last sync ",
                z["last_sync"],
                " · library version ",
                z["version"],
                " · key permissions: ",
                z["permissions"],
                size="1",
                color_scheme="gray",
                class_name="zotero-meta",
            ),
            rx.cond(z["progress"] != "", rx.text(z["progress"], size="1", class_name="zotero-progress")),
            rx.cond(z["result"] != "", rx.text(z["result"], size="1", class_name="zotero-result")),
            rx.text(z["documents"], size="1", class_name="zotero-documents"),
            rx.cond(z["error"] != "", rx.text(z["error"], size="1", color="var(--red-11)", class_name="zotero-error")),
            _problems(z),
            spacing="1",
            width="100%",
        ),
        class_name="zotero-library",
        data_library_id=z["id"],
        width="100%",
    )


def _connect_form() -> rx.Component:
    return rx.form(
        rx.hstack(
            rx.cond(
                ZoteroState.zotero_local_offered,
                rx.select(
                    ["Zotero web API", ZOTERO_LOCAL_LABEL],
                    default_value="Zotero web API",
                    on_change=ZoteroState.set_zotero_api,
                    size="1",
                    id="zotero-api",
                ),
            ),
            rx.cond(
                ZoteroState.zotero_web,
                rx.hstack(
                    rx.select(
                        ["My library", "Group library"],
                        default_value="My library",
                        on_change=ZoteroState.set_zotero_type,
                        size="1",
                        id="zotero-type",
                    ),
                    rx.cond(
                        ZoteroState.zotero_group,
                        rx.input(
                            name="library_id", placeholder="Group id", size="1", width="8em", id="zotero-group-id"
                        ),
                    ),
                    rx.input(
                        name="api_key",
                        type="password",
                        placeholder="Zotero API key",
                        size="1",
                        width="16em",
                        id="zotero-api-key",
                        auto_complete="off",
                    ),
                    spacing="2",
                    align="center",
                ),
            ),
            rx.button("Connect", type="submit", size="1", id="zotero-connect"),
            spacing="2",
            align="center",
            wrap="wrap",
        ),
        on_submit=ZoteroState.zotero_connect,
        reset_on_submit=False,  # a refused key stays in the field to be corrected (cleared once connected)
    )


def _key_help() -> rx.Component:
    """Where a key is made, and what it must allow."""
    return rx.cond(
        ZoteroState.zotero_web,
        rx.text(
            "Make a key at ",
            rx.link("zotero.org/settings/keys", href="https://www.zotero.org/settings/keys", is_external=True),
            ": tick “Allow library access” (reading is enough to sync); add “Allow write access” to send notes "
            "and highlights back; for a group library, give the key access to that group.",
            size="1",
            color_scheme="gray",
            id="zotero-key-help",
        ),
    )


def zotero_section() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.heading("Zotero", size="3"),
            rx.text("Connect once; Bayes then syncs changes on its own.", size="1", color_scheme="gray"),
            align="baseline",
            spacing="2",
        ),
        rx.foreach(ZoteroState.zotero_libraries, _library),
        _connect_form(),
        _key_help(),
        rx.cond(
            ZoteroState.zotero_error != "",
            rx.callout(
                ZoteroState.zotero_error, color_scheme="red", icon="triangle-alert", size="1", id="zotero-error"
            ),
        ),
        id="zotero-section",
        width="100%",
        spacing="2",
    )
