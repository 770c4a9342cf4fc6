"""Chat building blocks: conversation list, messages (thinking, answer, sources), composer."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ArrayVar, ObjectVar

from components.refusal import error_callout
from components.safe_markdown import safe_markdown
from state.chat import ChatState, Message, Source


def conversation_list() -> rx.Component:
    return rx.vstack(
        rx.button(
            rx.icon("plus", size=14),
            "New chat",
            on_click=ChatState.new_chat,
            id="chat-new",
            width="100%",
            variant="soft",
        ),
        rx.foreach(
            ChatState.conversations,
            lambda c: rx.link(
                rx.text(c["title"], size="2", trim="end"),
                href="/chat/" + c["id"],
                class_name="chat-conversation",
                underline="none",
                padding="0.3em 0.5em",
                border_radius="6px",
                width="100%",
                background=rx.cond(c["id"] == ChatState.conversation_id, "var(--accent-a3)", "transparent"),
            ),
        ),
        width=rx.breakpoints(initial="100%", md="220px"),
        min_width=rx.breakpoints(initial="0", md="220px"),
        max_height=rx.breakpoints(initial="9.5em", md="none"),
        overflow_y="auto",
        spacing="1",
        align="start",
        id="chat-conversations",
    )


def sources(
    items: ArrayVar[list[Source]], id_: str | None = None, heading: str = "Sources", class_name: str = "chat-sources"
) -> rx.Component:
    return rx.cond(
        items.length() > 0,
        rx.vstack(
            rx.text(heading, size="2", weight="bold", color_scheme="gray"),
            rx.foreach(
                items,
                lambda s: rx.card(
                    rx.vstack(
                        rx.hstack(
                            rx.badge("[" + s.n + "]", variant="soft"),
                            rx.text(s.title, size="2", weight="medium", trim="end", flex="1 1 10em", min_width="0"),
                            # chips never break inside ("p. 9" wrapped a letter a line on phones)
                            rx.text(
                                "p. " + s.page,
                                size="1",
                                color_scheme="gray",
                                white_space="nowrap",
                                class_name="source-page",
                            ),
                            rx.cond(
                                s.language != "",
                                rx.badge(
                                    s.language,
                                    size="1",
                                    variant="soft",
                                    color_scheme="gray",
                                    class_name="source-language",
                                    title="The passage's language (quoted as written)",
                                ),
                            ),
                            rx.cond(
                                s.highlighted,
                                rx.badge(
                                    "you highlighted this",
                                    size="1",
                                    variant="soft",
                                    color_scheme="amber",
                                    class_name="source-highlighted",
                                ),
                            ),
                            rx.link(
                                "Open at page",
                                href=s.href,
                                size="2",
                                class_name="chat-open-source",
                                white_space="nowrap",
                                margin_left="auto",
                            ),
                            width="100%",
                            align="center",
                            wrap="wrap",
                        ),
                        rx.text(s.quote, size="1", color_scheme="gray"),
                        spacing="1",
                        width="100%",
                    ),
                    class_name="chat-source",
                    width="100%",
                    size="1",
                ),
            ),
            spacing="2",
            width="100%",
            id=id_,
            class_name=class_name,
        ),
    )


def answer_sources(
    cited: ArrayVar[list[Source]], retrieved: ArrayVar[list[Source]], id_: str | None = None
) -> rx.Component:
    """What the answer cites, then what the search found that it does not cite (folded)."""
    return rx.vstack(
        sources(cited, id_),
        rx.cond(
            retrieved.length() > 0,
            rx.el.details(
                rx.el.summary(
                    rx.text(
                        "Also retrieved, not cited (",
                        retrieved.length().to_string(),
                        ")",
                        size="1",
                        color_scheme="gray",
                        as_="span",
                    )
                ),
                sources(retrieved, None, "Retrieved, not cited", "chat-retrieved"),
                class_name="chat-retrieved-box",
                width="100%",
            ),
        ),
        spacing="2",
        width="100%",
    )


def thinking(text: rx.Var[str] | str, open_: bool | rx.Var[bool] = False) -> rx.Component:
    return rx.cond(
        text != "",
        rx.el.details(
            rx.el.summary(rx.text("Thinking", size="2", color_scheme="gray", as_="span")),
            rx.text(text, size="2", color_scheme="gray", white_space="pre-wrap", class_name="chat-thinking-text"),
            open=open_,
            class_name="chat-thinking",
        ),
    )


def other_version() -> rx.Component:
    """After an edit of an earlier question: the exchanges it put aside are one click away
    (clicking again returns to the edited version)."""
    return rx.cond(
        (ChatState.other_version > 0) & (ChatState.live_run_id == ""),
        rx.callout.root(
            rx.callout.icon(rx.icon("history", size=16)),
            rx.callout.text(
                "An edit put ",
                rx.cond(
                    ChatState.other_version == 1,
                    "1 earlier question",
                    rx.text.span(ChatState.other_version, " earlier questions"),
                ),
                " and the answers aside. ",
                rx.button(
                    "Show that version instead",
                    on_click=ChatState.switch_version,
                    size="1",
                    variant="soft",
                    id="chat-switch-version",
                    margin_left="0.5em",
                ),
            ),
            size="1",
            color="gray",
            variant="surface",
            width="100%",
            id="chat-other-version",
        ),
    )


def _edit_warning() -> rx.Component:
    """Asking an earlier question again puts what followed it aside: say how much, first."""
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title("Ask this question again?"),
            rx.alert_dialog.description(
                rx.text(
                    "The conversation restarts from this question: ",
                    rx.cond(
                        ChatState.edit_drops == 1,
                        "the 1 later question and its answer",
                        rx.text.span("the ", ChatState.edit_drops, " later questions and their answers"),
                    ),
                    " will be put aside. You can bring them back afterwards.",
                    id="chat-edit-warning-text",
                )
            ),
            rx.hstack(
                rx.alert_dialog.cancel(
                    rx.button(
                        "Keep editing",
                        variant="soft",
                        color_scheme="gray",
                        on_click=ChatState.keep_editing,
                        id="chat-edit-keep",
                    )
                ),
                rx.alert_dialog.action(
                    rx.button("Ask again", color_scheme="red", on_click=ChatState.confirm_edit, id="chat-edit-confirm")
                ),
                spacing="3",
                justify="end",
                margin_top="1em",
            ),
        ),
        open=ChatState.edit_drops > 0,
    )


def _user_message(m: ObjectVar[Message]) -> rx.Component:
    return rx.cond(
        ChatState.edit_id == m.id,
        rx.vstack(
            rx.text_area(
                value=ChatState.edit_text, on_change=ChatState.set_edit_text, width="100%", id="chat-edit-input"
            ),
            rx.hstack(
                rx.button("Save and ask again", on_click=ChatState.save_edit, id="chat-edit-save", size="1"),
                rx.button("Cancel", on_click=ChatState.cancel_edit, variant="soft", size="1"),
            ),
            _edit_warning(),
            width="100%",
        ),
        rx.hstack(
            rx.spacer(),
            rx.icon_button(
                rx.icon("pencil", size=12),
                size="1",
                variant="ghost",
                class_name="chat-edit",
                on_click=ChatState.start_edit(m.id, m.content),
                disabled=ChatState.running,
                title="Edit and ask again",
            ),
            rx.box(
                rx.text(m.content, white_space="pre-wrap"),
                background="var(--accent-a3)",
                padding="0.5em 0.8em",
                border_radius="10px",
                max_width="80%",
                class_name="chat-question",
            ),
            width="100%",
            align="start",
        ),
    )


def _assistant_message(m: ObjectVar[Message]) -> rx.Component:
    return rx.vstack(
        thinking(m.thinking),
        rx.cond(
            m.status == "running",
            rx.fragment(),  # the live block below shows it
            rx.box(safe_markdown(m.content), class_name="chat-answer", width="100%"),
        ),
        rx.cond(
            m.grounding_label != "",
            rx.callout(
                m.grounding_label, icon="triangle_alert", color_scheme="orange", size="1", class_name="chat-grounding"
            ),
        ),
        rx.cond(m.status == "running", rx.fragment(), answer_sources(m.sources, m.retrieved)),
        rx.hstack(
            rx.cond(
                m.status_label != "",
                rx.badge(
                    m.status_label,
                    class_name="chat-status",
                    color_scheme=rx.cond(
                        m.status == "complete", "green", rx.cond(m.status == "running", "blue", "orange")
                    ),
                ),
            ),
            rx.cond(
                m.cost != "",
                rx.text("Cost: ", m.cost, size="1", color_scheme="gray", class_name="chat-cost", title=m.cost_exact),
            ),
            rx.cond(m.memory != "", rx.text(m.memory, size="1", color_scheme="gray", class_name="chat-memory")),
            spacing="3",
            align="center",
        ),
        width="100%",
        align="start",
        spacing="2",
        class_name="chat-message-assistant",
    )


def message(m: ObjectVar[Message]) -> rx.Component:
    return rx.cond(m.role == "user", _user_message(m), _assistant_message(m))


def live_answer() -> rx.Component:
    return rx.cond(
        ChatState.running,
        rx.vstack(
            thinking(ChatState.live_thinking, open_=ChatState.live_text == ""),
            rx.cond(
                ChatState.live_tools.length() > 0,
                rx.hstack(
                    rx.foreach(ChatState.live_tools, lambda t: rx.badge(t, variant="outline", size="1")),
                    class_name="chat-tools",
                    wrap="wrap",
                ),
            ),
            answer_sources(ChatState.live_sources, ChatState.live_retrieved, id_="chat-live-sources"),
            rx.box(safe_markdown(ChatState.live_text), id="chat-live-answer", width="100%"),
            rx.cond(
                ChatState.live_grounding != "",
                rx.callout(
                    ChatState.live_grounding,
                    icon="triangle_alert",
                    color_scheme="orange",
                    size="1",
                    id="chat-live-grounding",
                ),
            ),
            rx.hstack(
                rx.spinner(size="1"),
                rx.text(
                    rx.cond(ChatState.live_status != "", ChatState.live_status, "Answering…"),
                    size="2",
                    color_scheme="gray",
                    id="chat-live-status",
                ),
                rx.button(
                    rx.icon("square", size=12),
                    "Stop",
                    on_click=ChatState.stop,
                    color_scheme="red",
                    variant="soft",
                    size="1",
                    id="chat-stop",
                ),
                align="center",
            ),
            width="100%",
            align="start",
            spacing="2",
            id="chat-live",
        ),
    )


def composer() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.text("Pinned to:", size="2", color_scheme="gray"),
            rx.cond(
                ChatState.pinned.length() > 0,
                rx.foreach(
                    ChatState.pinned,
                    lambda p: rx.badge(
                        p["name"],
                        rx.icon("x", size=10, cursor="pointer", on_click=ChatState.unpin(p["id"])),
                        variant="soft",
                        class_name="chat-pin",
                    ),
                ),
                rx.text("the whole library", size="2", color_scheme="gray"),
            ),
            rx.select.root(
                rx.select.trigger(placeholder="Pin a document or collection", id="chat-pin-select"),
                rx.select.content(
                    rx.select.group(
                        rx.select.label("Documents"),
                        rx.foreach(
                            ChatState.documents, lambda d: rx.select.item(d["name"], value="document:" + d["id"])
                        ),
                    ),
                    rx.select.group(
                        rx.select.label("Collections"),
                        rx.foreach(
                            ChatState.collections, lambda c: rx.select.item(c["name"], value="collection:" + c["id"])
                        ),
                    ),
                ),
                value="",
                on_change=ChatState.pin,
                size="1",
            ),
            align="center",
            wrap="wrap",
            spacing="2",
        ),
        rx.hstack(
            rx.input(
                value=ChatState.draft,
                on_change=ChatState.set_draft,
                on_key_down=ChatState.send_on_enter,
                placeholder="Ask your library…",
                width="100%",
                id="chat-input",
                size="3",
            ),
            rx.button("Ask", on_click=ChatState.send, id="chat-send", size="3", disabled=ChatState.running),
            width="100%",
        ),
        error_callout(ChatState.error, "chat-error", size="1"),
        width="100%",
    )
