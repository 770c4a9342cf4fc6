"""Sharing on the map page: the Share dialog (owner), the caller's role on a shared map, and who
else has the map open. E-mails are shown as text, never as markup."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from state.mindmap import MapState as S


def _member_row(m: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.hstack(
        rx.text(m["email"], size="2", class_name="share-member-email", flex="1", min_width="0", trim="both"),
        rx.el.select(
            rx.el.option("Viewer", value="viewer"),
            rx.el.option("Editor", value="editor"),
            value=m["role"],
            on_change=lambda v: S.change_role(m["user_id"], v),
            class_name="share-member-role",
            aria_label="Role",
        ),
        rx.icon_button(
            rx.icon("x", size=14),
            size="1",
            variant="ghost",
            color_scheme="red",
            title="Remove",
            class_name="share-member-remove",
            on_click=S.remove_member(m["user_id"]),
        ),
        align="center",
        width="100%",
        class_name="share-member",
    )


def _doc_row(d: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.hstack(
        rx.text(d["title"], size="2", class_name="share-doc-title", flex="1", min_width="0", trim="both"),
        rx.cond(
            d["how"] == "cited",
            rx.badge("cited", variant="surface", color_scheme="gray", title="The map cites it"),
            rx.icon_button(
                rx.icon("x", size=14),
                size="1",
                variant="ghost",
                color_scheme="red",
                title="Take back",
                class_name="share-doc-remove",
                on_click=S.remove_share_doc(d["id"]),
            ),
        ),
        align="center",
        width="100%",
        class_name="share-doc",
    )


def _papers() -> rx.Component:
    """What members can open and their runs may read: the owner's decision."""
    return rx.vstack(
        rx.text("Papers members can open", size="1", color_scheme="gray", weight="medium"),
        rx.cond(
            S.share_scoped,
            rx.text(
                "This map is scoped to a collection: members open and research that collection.",
                size="2",
                color_scheme="gray",
            ),
            rx.vstack(
                rx.text(
                    "Members' runs read only these; anything else they would cite waits for your approval.",
                    size="1",
                    color_scheme="gray",
                ),
                rx.cond(
                    S.share_docs.length() > 0,
                    rx.vstack(rx.foreach(S.share_docs, _doc_row), width="100%", spacing="1"),
                    rx.text("None yet.", size="2", color_scheme="gray", id="share-docs-none"),
                ),
                rx.cond(
                    S.share_addable.length() > 0,
                    rx.hstack(
                        rx.el.select(
                            rx.el.option("Add one of your papers…", value=""),
                            rx.foreach(S.share_addable, lambda d: rx.el.option(d["title"], value=d["id"])),
                            value=S.share_pick,
                            on_change=S.set_share_pick,
                            id="share-doc-pick",
                            aria_label="Paper to add",
                            style={"flex": "1", "minWidth": "0"},
                        ),
                        rx.button("Add", size="1", variant="soft", on_click=S.add_share_doc, id="share-doc-add"),
                        align="center",
                        width="100%",
                    ),
                ),
                width="100%",
                spacing="2",
            ),
        ),
        margin_top="1em",
        width="100%",
        id="share-docs",
    )


def share_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("Share this map"),
            rx.dialog.description(
                "Viewers read the map, its citations and the cited pages. Editors also edit nodes, "
                "decide proposals and start runs (charged to them, reading only the papers below).",
                size="2",
                color_scheme="gray",
            ),
            rx.form(
                rx.hstack(
                    rx.input(
                        name="email",
                        type="email",
                        placeholder="colleague@example.com",
                        value=S.share_email,
                        on_change=S.set_share_email,
                        id="share-email",
                        flex="1",
                        min_width="12em",
                    ),
                    rx.el.select(
                        rx.el.option("Viewer", value="viewer"),
                        rx.el.option("Editor", value="editor"),
                        value=S.share_role,
                        on_change=S.set_share_role,
                        id="share-role",
                        name="role",
                        aria_label="Role",
                    ),
                    rx.button("Share", type="submit", id="share-add"),
                    align="center",
                    wrap="wrap",
                    width="100%",
                ),
                on_submit=S.add_member,
                margin_top="1em",
            ),
            rx.cond(S.share_error != "", rx.text(S.share_error, color_scheme="red", size="2", id="share-error")),
            rx.vstack(
                rx.text("People with access", size="1", color_scheme="gray", weight="medium"),
                rx.cond(
                    S.share_members.length() > 0,
                    rx.vstack(rx.foreach(S.share_members, _member_row), width="100%", spacing="2"),
                    rx.text("Only you.", size="2", color_scheme="gray", id="share-none"),
                ),
                margin_top="1em",
                width="100%",
                id="share-members",
            ),
            _papers(),
            rx.hstack(rx.dialog.close(rx.button("Done", variant="soft")), justify="end", margin_top="1em"),
            max_width="32em",
        ),
        open=S.share_open,
        on_open_change=S.set_share_open,
    )


def share_bar() -> rx.Component:
    """The owner's Share button, a member's role, and who else is viewing the map."""
    return rx.hstack(
        rx.cond(
            S.viewing.length() > 0,
            rx.hstack(
                rx.icon("eye", size=14, color="var(--gray-11)"),
                rx.foreach(S.viewing, lambda e: rx.badge(e, variant="surface", class_name="map-viewer")),
                align="center",
                spacing="1",
                wrap="wrap",
                id="map-presence",
                title="Also viewing this map now",
            ),
        ),
        rx.cond(
            S.is_owner,
            rx.button(
                rx.icon("user-plus", size=14), "Share", size="1", variant="soft", on_click=S.open_share, id="btn-share"
            ),
            rx.cond(S.is_shared_map, rx.badge("Shared with you · ", S.my_role, color_scheme="blue", id="map-role")),
        ),
        align="center",
        spacing="2",
        wrap="wrap",
    )
