"""The library chat: ask questions, watch thinking → sources → answer, stop, see the cost."""

from __future__ import annotations

import reflex as rx

from components.chat import composer, conversation_list, live_answer, message, other_version
from components.shell import shell, stack_on_phone
from state.chat import ChatState


def chat_page() -> rx.Component:
    return shell(
        "Ask",
        stack_on_phone(
            conversation_list(),
            rx.vstack(
                rx.hstack(
                    rx.heading(rx.cond(ChatState.title != "", ChatState.title, "New chat"), size="4", id="chat-title"),
                    rx.cond(
                        ChatState.offline,
                        rx.badge(
                            "offline mode",
                            color_scheme="orange",
                            id="offline-badge",
                            title="No language model is configured: answers are sentences quoted from your library.",
                        ),
                    ),
                    rx.spacer(),
                    rx.cond(
                        ChatState.conversation_id != "",
                        rx.alert_dialog.root(
                            rx.alert_dialog.trigger(
                                rx.icon_button(
                                    rx.icon("trash-2", size=14), variant="ghost", color_scheme="red", id="chat-delete"
                                )
                            ),
                            rx.alert_dialog.content(
                                rx.alert_dialog.title("Delete this chat?"),
                                rx.alert_dialog.description("Its messages are removed; a running answer stops."),
                                rx.hstack(
                                    rx.alert_dialog.cancel(rx.button("Keep", variant="soft")),
                                    rx.alert_dialog.action(
                                        rx.button(
                                            "Delete",
                                            color_scheme="red",
                                            on_click=ChatState.delete_conversation,
                                            id="chat-delete-confirm",
                                        )
                                    ),
                                    justify="end",
                                ),
                            ),
                        ),
                    ),
                    width="100%",
                    align="center",
                ),
                other_version(),
                rx.vstack(
                    rx.foreach(ChatState.messages, message),
                    live_answer(),
                    width="100%",
                    spacing="4",
                    id="chat-messages",
                ),
                composer(),
                width="100%",
                min_width="0",
                spacing="4",
                align="start",
            ),
            width="100%",
            align_items="start",
            gap="1.5em",
        ),
    )
