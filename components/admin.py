"""Pieces of the admin credit dashboard."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx
from reflex.vars import ArrayVar, ObjectVar

from bayes_app.usecases.views import RunStatus
from state.admin import AdminState

RUN_STATUSES = (*RunStatus.ACTIVE, RunStatus.STOPPED, *RunStatus.OUTCOMES)


def table(
    id_: str,
    headers: list[str],
    rows: ArrayVar[list[dict[str, str]]],
    row_fn: Callable[[Any], rx.Component],
    empty: str,
) -> rx.Component:
    return rx.cond(
        rows.length() > 0,
        rx.table.root(
            rx.table.header(rx.table.row(*[rx.table.column_header_cell(h) for h in headers])),
            rx.table.body(rx.foreach(rows, row_fn)),
            id=id_,
            width="100%",
            size="1",
        ),
        rx.text(empty, size="2", color_scheme="gray", id=f"{id_}-empty"),
    )


def section(title: str, *children: rx.Component, **props) -> rx.Component:
    return rx.card(
        rx.vstack(rx.heading(title, size="4"), *children, width="100%", align="start"), width="100%", **props
    )


def cells(*values) -> list[rx.Component]:
    return [rx.table.cell(v) for v in values]


# ---- balances / reserves -----------------------------------------------------------------
def balances() -> rx.Component:
    return section(
        "Balances per user",
        table(
            "admin-balances",
            ["User", "Balance", "Held", "Available"],
            AdminState.balances,
            lambda b: rx.table.row(
                rx.table.cell(b["email"]),
                *[
                    rx.table.cell(rx.text(b[k], title=b[f"{k}_exact"], class_name=f"balance-{k}"))
                    for k in ("balance", "held", "available")
                ],
            ),
            "No credit activity yet.",
        ),
    )


def reserves() -> rx.Component:
    return section(
        "Reserves held now",
        table(
            "admin-reserves",
            ["Run", "User", "Status", "Held"],
            AdminState.reserves,
            lambda r: rx.table.row(
                *cells(r["title"], r["owner"], r["status"]), rx.table.cell(rx.text(r["held"], title=r["held_exact"]))
            ),
            "No reserves are held.",
        ),
    )


# ---- charts --------------------------------------------------------------------------------
def _bar_chart(data: ArrayVar[list[dict[str, Any]]], x_key: str, id_: str) -> rx.Component:
    return rx.box(
        rx.recharts.bar_chart(
            rx.recharts.cartesian_grid(stroke_dasharray="3 3"),
            rx.recharts.x_axis(data_key=x_key),
            rx.recharts.y_axis(),
            rx.recharts.graphing_tooltip(),
            rx.recharts.bar(data_key="credits", fill="var(--accent-9)", name="credits"),
            data=data,
            width="100%",
            height=220,
        ),
        id=id_,
        width="100%",
    )


def _kind_chart() -> rx.Component:
    """Spend per run kind: one bar per kind (every kind, spent on or not), labelled with the
    rounded amount, so a kind that cost little still reads as "< 0.01", not as a missing bar."""
    return rx.box(
        rx.recharts.bar_chart(
            rx.recharts.cartesian_grid(stroke_dasharray="3 3"),
            rx.recharts.x_axis(type_="number"),
            rx.recharts.y_axis(data_key="kind", type_="category", width=150, interval=0),
            rx.recharts.graphing_tooltip(),
            rx.recharts.bar(
                rx.recharts.label_list(data_key="label", position="right", font_size=12),
                data_key="credits",
                fill="var(--accent-9)",
                name="credits",
                min_point_size=2,
            ),
            data=AdminState.spend_by_kind,
            layout="vertical",
            width="100%",
            height=300,
            margin={"right": 48},
        ),
        id="chart-spend-kind",
        width="100%",
    )


def charts() -> rx.Component:
    return rx.grid(
        section(
            "Spend per day (credits, last 30 days)",
            rx.cond(
                AdminState.spend_by_day.length() > 0,
                _bar_chart(AdminState.spend_by_day, "day", "chart-spend-day"),
                rx.text("No spend yet.", size="2", color_scheme="gray"),
            ),
        ),
        section(
            "Spend per operation kind (credits, last 30 days)",
            rx.cond(
                AdminState.spend_by_day.length() > 0,
                _kind_chart(),
                rx.text("No spend yet.", size="2", color_scheme="gray"),
            ),
        ),
        columns=rx.breakpoints(initial="1", md="2"),
        spacing="4",
        width="100%",
    )


# ---- run drill-down ------------------------------------------------------------------------
def _run_row(r: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        *cells(r["title"], r["kind"], r["status"], r["owner"]),
        rx.table.cell(rx.text(r["charged"], title=r["charged_exact"])),
        rx.table.cell(r["date"]),
        rx.table.cell(
            rx.button("Usage", size="1", variant="soft", on_click=AdminState.show_run(r["id"]), class_name="show-run")
        ),
        class_name="recent-run",
    )


def _usage_row(u: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        *cells(u["step"], u["model"], u["attempt"], u["seq"], u["input"], u["cached"], u["output"], u["cost"]),
        rx.table.cell(rx.cond(u["estimated"] != "", rx.badge("estimated", color_scheme="amber"), "")),
        class_name="usage-row",
    )


def drill_down() -> rx.Component:
    return section(
        "Runs",
        rx.hstack(
            rx.select.root(
                rx.select.trigger(placeholder="All users", id="runs-user"),
                rx.select.content(
                    rx.select.item("All users", value="all"),
                    rx.foreach(AdminState.users, lambda u: rx.select.item(u["email"], value=u["id"])),
                ),
                value=AdminState.runs_user,
                on_change=AdminState.filter_runs_user,
                size="1",
            ),
            rx.select.root(
                rx.select.trigger(placeholder="Any status", id="runs-status"),
                rx.select.content(
                    rx.select.item("Any status", value="all"),
                    *[rx.select.item(s.title(), value=s) for s in RUN_STATUSES],
                ),
                value=AdminState.runs_status,
                on_change=AdminState.filter_runs_status,
                size="1",
            ),
            spacing="2",
            wrap="wrap",
        ),
        table(
            "admin-runs",
            ["Run", "Kind", "Status", "User", "Charged", "Date", ""],
            AdminState.recent_runs,
            _run_row,
            "No runs match.",
        ),
        rx.cond(
            AdminState.runs_more,
            rx.button("Show more runs", size="1", variant="soft", on_click=AdminState.more_runs, id="runs-more"),
        ),
        rx.hstack(
            rx.input(
                placeholder="Run id",
                value=AdminState.run_id,
                on_change=AdminState.set_run_id,
                id="run-id",
                width="22em",
                max_width="100%",
            ),
            rx.button("Show usage", on_click=AdminState.show_run(""), id="show-run"),
            align="center",
            wrap="wrap",
        ),
        rx.cond(
            AdminState.run_error != "",
            rx.callout(AdminState.run_error, color_scheme="red", icon="triangle-alert", id="run-error"),
        ),
        rx.cond(
            AdminState.run_info.contains("id"),
            rx.vstack(
                rx.text(
                    rx.text.strong(AdminState.run_info["title"]),
                    " · ",
                    AdminState.run_info["status"],
                    " ",
                    AdminState.run_info["reason"],
                    " · ",
                    AdminState.run_info["owner"],
                    " · reserved ",
                    AdminState.run_info["reserved"],
                    " · charged ",
                    AdminState.run_info["charged"],
                    id="run-info",
                ),
                table(
                    "run-usage",
                    ["Step", "Model", "Attempt", "Seq", "Input", "Cached", "Output", "Cost", ""],
                    AdminState.run_usage,
                    _usage_row,
                    "This run recorded no usage.",
                ),
                width="100%",
            ),
        ),
        id="admin-drilldown",
    )


# ---- reconciliation ------------------------------------------------------------------------
def _issue_list(title: str, items: ArrayVar[list[str]]) -> rx.Component:
    return rx.cond(
        items.length() > 0,
        rx.vstack(
            rx.text(title, weight="bold", size="2"),
            rx.foreach(items, lambda i: rx.text(i, size="1", font_family="monospace")),
            spacing="1",
        ),
    )


def reconciliation() -> rx.Component:
    return section(
        "Reconciliation",
        rx.callout(
            rx.cond(AdminState.recon_ok, "OK: ledger and usage agree", "Problems found"),
            icon=rx.cond(AdminState.recon_ok, "check", "triangle-alert"),
            color_scheme=rx.cond(AdminState.recon_ok, "green", "red"),
            id="recon-status",
            width="100%",
        ),
        rx.hstack(
            rx.text("Runs checked: ", rx.text.strong(AdminState.recon_checked, id="recon-checked")),
            rx.text("Mismatches: ", rx.text.strong(AdminState.recon_mismatches.length())),
            rx.text("Held after finalize: ", rx.text.strong(AdminState.recon_held.length())),
            rx.text("Stale runs: ", rx.text.strong(AdminState.recon_stale.length())),
            spacing="4",
            wrap="wrap",
        ),
        _issue_list("Spend ≠ usage", AdminState.recon_mismatches),
        _issue_list("Reserve still held after finalize", AdminState.recon_held),
        _issue_list("Not terminal, older than the reaper limit", AdminState.recon_stale),
        rx.hstack(
            rx.button("Check again", on_click=AdminState.run_reconciliation, id="recon-run", size="1"),
            rx.text(AdminState.recon_at, size="1", color_scheme="gray"),
            align="center",
        ),
        id="admin-reconciliation",
    )


# ---- grant ---------------------------------------------------------------------------------
def grant_form() -> rx.Component:
    return section(
        "Grant credits",
        rx.form(
            rx.hstack(
                # a picker: the field suggests every user's e-mail as you type (or pick from the list)
                rx.input(
                    name="email",
                    placeholder="user e-mail",
                    id="grant-email",
                    list="grant-users",
                    auto_complete="off",
                    width="16em",
                    max_width="100%",
                    required=True,
                ),
                rx.el.datalist(
                    rx.foreach(AdminState.users, lambda u: rx.el.option(value=u["email"])), id="grant-users"
                ),
                rx.input(name="credits", placeholder="credits", id="grant-credits", width="8em", required=True),
                rx.input(name="note", placeholder="note (optional)", id="grant-note", width="16em"),
                rx.button("Grant", type="submit", id="grant-submit"),
                wrap="wrap",
                align="center",
            ),
            on_submit=AdminState.grant_credits,
            reset_on_submit=True,
            width="100%",
        ),
        rx.cond(
            AdminState.grant_error != "",
            rx.callout(AdminState.grant_error, color_scheme="red", icon="triangle-alert", id="grant-error"),
        ),
        rx.cond(
            AdminState.grant_notice != "",
            rx.callout(AdminState.grant_notice, color_scheme="green", icon="check", id="grant-notice"),
        ),
        id="grant",
        scroll_margin_top="1em",
    )


# ---- model connection ------------------------------------------------------------------------
def model_connection() -> rx.Component:
    """The configured model, how to connect one, and a check that says whether it answers."""
    return section(
        "Model connection",
        rx.text(AdminState.model_setup, size="2", id="model-setup"),
        rx.text(
            "Without a model Bayes runs in offline mode: search, reading and highlights work fully; answers "
            "and maps quote your papers' own sentences instead of writing prose. To connect a model set "
            "OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL for any OpenAI-compatible server (Ollama, "
            "llama.cpp, vLLM) and BAYES_MODEL_DEFAULT to its model name, restart Bayes, and give the "
            "model a price below (0 is fine).",
            size="2",
            color_scheme="gray",
        ),
        rx.button(
            rx.icon("plug-zap", size=14),
            "Check model connection",
            on_click=AdminState.check_model,
            loading=AdminState.model_checking,
            id="model-check",
        ),
        rx.cond(
            AdminState.model_check_done,
            rx.cond(
                AdminState.model_check_ok,
                rx.callout(AdminState.model_check_message, color_scheme="green", icon="check", id="model-check-result"),
                rx.callout(
                    AdminState.model_check_message,
                    color_scheme="red",
                    icon="triangle-alert",
                    id="model-check-result",
                    class_name="model-check-failed",
                ),
            ),
        ),
        id="model-connection",
    )


# ---- prices --------------------------------------------------------------------------------
def _price_row(p: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        *cells(p["model"], p["input"], p["cached"], p["output"], p["updated"]),
        rx.table.cell(rx.button("Edit", size="1", variant="soft", on_click=AdminState.edit_price(p["model"]))),
        class_name="price-row",
    )


def price_editor() -> rx.Component:
    return section(
        "Model prices (credits per million tokens)",
        table(
            "admin-prices",
            ["Model", "Input", "Cached input", "Output", "Updated", ""],
            AdminState.prices,
            _price_row,
            "No model has a price: no model can be used.",
        ),
        rx.hstack(
            rx.input(
                placeholder="model",
                value=AdminState.price_model,
                on_change=AdminState.set_price_model,
                id="price-model",
                width="14em",
            ),
            rx.input(
                placeholder="input",
                value=AdminState.price_input,
                on_change=AdminState.set_price_input,
                id="price-input",
                width="7em",
            ),
            rx.input(
                placeholder="cached",
                value=AdminState.price_cached,
                on_change=AdminState.set_price_cached,
                id="price-cached",
                width="7em",
            ),
            rx.input(
                placeholder="output",
                value=AdminState.price_output,
                on_change=AdminState.set_price_output,
                id="price-output",
                width="7em",
            ),
            rx.button("Save price", on_click=AdminState.save_price, id="price-save"),
            wrap="wrap",
            align="center",
        ),
        rx.cond(
            AdminState.price_error != "",
            rx.callout(AdminState.price_error, color_scheme="red", icon="triangle-alert", id="price-error"),
        ),
        rx.cond(
            AdminState.price_notice != "",
            rx.callout(AdminState.price_notice, color_scheme="green", icon="check", id="price-notice"),
        ),
    )


def shares() -> rx.Component:
    """Who shares which map or collection with whom (sharing, docs/sharing.md)."""
    return section(
        "Sharing",
        table(
            "admin-shares",
            ["Kind", "Map or collection", "Owner", "Shared with", "Role", "Since (UTC)"],
            AdminState.shares,
            lambda r: rx.table.row(
                *cells(r["kind"], r["title"], r["owner"], r["member"], r["role"], r["since"]), class_name="admin-share"
            ),
            "Nothing is shared.",
        ),
    )
