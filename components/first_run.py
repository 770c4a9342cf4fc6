"""The first-run guide: three steps with a tick each, shown until all three are done."""

from __future__ import annotations

import reflex as rx

from state.onboarding import GuideState


def _step(n: str, done: rx.Var[bool] | bool, title: str, body: rx.Component, id_: str) -> rx.Component:
    return rx.hstack(
        rx.cond(
            done,
            rx.icon("circle-check", color="var(--green-9)", size=22, class_name="step-done"),
            rx.center(
                rx.text(n, size="2", weight="bold"),
                width="22px",
                height="22px",
                border="2px solid var(--gray-8)",
                border_radius="50%",
                flex_shrink="0",
                class_name="step-pending",
            ),
        ),
        rx.vstack(
            rx.text(title, weight="bold", size="3", text_decoration=rx.cond(done, "line-through", "none")),
            body,
            spacing="1",
            align="start",
            min_width="0",
        ),
        align="start",
        spacing="3",
        id=id_,
        width="100%",
        class_name=rx.cond(done, "guide-step guide-step-done", "guide-step"),
    )


def _model_note() -> rx.Component:
    """What offline mode does and how a model is connected (one step, on the Admin page)."""
    how = rx.cond(
        GuideState.is_admin,
        rx.fragment(
            "Connect a model: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server (Ollama, llama.cpp, "
            "vLLM), restart, then ",
            rx.link("Check model connection", href="/admin#model-connection", id="guide-model-check"),
            " on the Admin page.",
        ),
        rx.fragment("An administrator can connect a model (an OpenAI key, or a local server such as Ollama)."),
    )
    return rx.cond(
        GuideState.offline_mode,
        rx.callout(
            rx.text(
                "Offline mode: search and reading work fully; answers and maps quote your papers' own "
                "sentences with their page links instead of writing prose. ",
                how,
                size="2",
            ),
            icon="info",
            color_scheme="gray",
            variant="surface",
            id="guide-offline",
            width="100%",
        ),
        rx.text(
            "A model is connected: answers and maps are written by it, every sentence cited.",
            size="2",
            color_scheme="gray",
            id="guide-model",
        ),
    )


def first_run_guide() -> rx.Component:
    papers = rx.vstack(
        rx.cond(
            GuideState.papers > 0,
            rx.text(
                GuideState.papers,
                " in your library, ",
                GuideState.indexed,
                " indexed so far.",
                size="2",
                color_scheme="gray",
                id="guide-papers-count",
            ),
            rx.text("Bayes answers from your own papers.", size="2", color_scheme="gray"),
        ),
        rx.hstack(
            rx.link(
                rx.button(rx.icon("upload", size=14), "Upload a PDF", size="2", variant="soft"),
                href="/library",
                id="guide-upload",
            ),
            rx.button(
                rx.icon("book-open", size=14),
                "Use the demo papers",
                size="2",
                variant="outline",
                on_click=GuideState.use_demo_papers,
                id="guide-demo",
                title="Three open-access papers (PaSa, a review of explanations of molecular "
                "prediction models, and a short paper with figures)",
            ),
            wrap="wrap",
            spacing="2",
        ),
        rx.cond(
            GuideState.demo_error != "",
            rx.text(GuideState.demo_error, color_scheme="red", size="2", id="guide-demo-error"),
        ),
        spacing="2",
        align="start",
    )
    ask = rx.vstack(
        rx.text("Ask about your papers; the answer cites the passages it used.", size="2", color_scheme="gray"),
        rx.link(
            rx.button(rx.icon("message-circle", size=14), "Ask a question", size="2", variant="soft"),
            href="/chat",
            id="guide-ask",
        ),
        spacing="2",
        align="start",
    )
    build = rx.text(
        "Name a research question in the box below, press New map, then Research: "
        "agents build a mind map of your papers with citations.",
        size="2",
        color_scheme="gray",
    )
    return rx.cond(
        GuideState.show_guide,
        rx.card(
            rx.vstack(
                rx.hstack(
                    rx.icon("sparkles", size=18),
                    rx.heading("Get started", size="4"),
                    rx.spacer(),
                    rx.badge(GuideState.steps_done, " of 3 done", variant="soft", id="guide-progress"),
                    align="center",
                    width="100%",
                ),
                _step("1", GuideState.papers > 0, "Add papers", papers, "guide-step-papers"),
                _step("2", GuideState.asked, "Ask a question", ask, "guide-step-ask"),
                _step("3", GuideState.mapped, "Build a map", build, "guide-step-map"),
                _model_note(),
                spacing="3",
                width="100%",
            ),
            id="first-run-guide",
            width="100%",
            max_width="44em",
        ),
    )
