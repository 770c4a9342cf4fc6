"""The run kind `fill_table`: fill a table's cells paper by paper, live, cancellable.

Offline each value comes from the paper's own sentences (`extract`); with a model, the model
reads the sentences most likely to answer each column (`extract.candidates`) and answers in the
column's type with the id of the sentence its value rests on, so the quote is always a verbatim
sentence. A cell a person edited is never overwritten. Each paper's cells are stored and sent as
one `cells` event, then a `progress` event (done, total).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pydantic import BaseModel

from bayes_app.agents.llm_json import ask_json, is_offline
from bayes_app.llm.tokens import count_tokens
from bayes_app.llm.types import Usage
from bayes_app.models import ExtractionTable
from bayes_app.runs.executor import RunContext
from bayes_app.runs.kinds import RunKind
from bayes_app.tables import evidence, service
from bayes_app.tables.columns import Column
from bayes_app.tables.extract import FOUND, NOT_FOUND, Extracted, candidates, extract_all
from bayes_app.tables.views import cell_view

RESOURCE = "table"
KIND_NAME = "fill_table"
# what one paper costs to read offline is counted as prompt tokens (the sentences read)
PROMPT_BUDGET_PER_PAPER = 1_500

SYSTEM = (
    "You fill one cell of a literature-review table. Read the numbered sentences of one paper and "
    "answer the column's question in the column's type, using only those sentences. Give the id of "
    "the one sentence your answer rests on. If no sentence states the answer, give null for both: "
    "never guess. Types: number (digits only), yes_no (yes, no or unsure), choice (exactly one of "
    "the options), text (one short sentence)."
)


class CellAnswer(BaseModel):
    value: str | None
    sentence: str | None


def _prompt(column: Column, shown: list[evidence.Sentence]) -> str:
    lines = [f"QUESTION: {column.question}", f"TYPE: {column.type}"]
    if column.choices:
        lines.append("OPTIONS: " + " | ".join(column.choices))
    lines.append("SENTENCES:")
    lines += [f"[{i + 1}] (p. {s.page}) {s.text}" for i, s in enumerate(shown)]
    return "\n".join(lines)


def _typed(column: Column, raw: str, quote: str) -> str | int | float | None:
    """The model's value in the column's type, or None when it does not fit or (a number) is
    not in the sentence it cites."""
    raw = " ".join(raw.split())
    if column.type == "number":
        m = re.search(r"-?\d[\d,]*(?:\.\d+)?", raw)
        if not m or m.group(0).replace(",", "") not in quote.replace(",", ""):
            return None
        num = float(m.group(0).replace(",", ""))
        return int(num) if num.is_integer() else num
    if column.type == "yes_no":
        return raw.lower() if raw.lower() in service.YES_NO else None
    if column.type == "choice":
        return next((c for c in column.choices if c.lower() == raw.lower()), None)
    return raw[: service.MAX_TEXT_VALUE] or None


async def _with_model(ctx: RunContext, column: Column, sentences: list[evidence.Sentence]) -> Extracted:
    """The model's value for one column; when its reply is unusable (not JSON, no sentence id,
    a value not in the column's type or a number absent from its sentence) the offline reading
    of the same sentences stands, so a cell never holds an unsupported value."""
    shown = candidates(column, sentences)
    if not shown:
        return Extracted(None, NOT_FOUND)
    offline = extract_all([column], sentences)[column.key]
    data = await ask_json(ctx, "extract", SYSTEM, _prompt(column, shown), CellAnswer, max_tokens=300)
    try:
        answer = CellAnswer.model_validate(data)
    except ValueError:
        return offline
    ref = re.sub(r"\D", "", answer.sentence or "")
    if not answer.value or not ref or not 1 <= int(ref) <= len(shown):
        return offline
    s = shown[int(ref) - 1]
    value = _typed(column, answer.value, s.match)
    return Extracted(value, FOUND, s, 1.0) if value is not None else offline


async def _offline_usage(ctx: RunContext, sentences: list[evidence.Sentence]) -> None:
    read = sum(count_tokens(s.text) for s in sentences[:400])
    await ctx.record_usage(ctx.next_seq(), "extract", Usage(ctx.run.model, read, 0, 0, True), ctx.run.model)


async def fill(ctx: RunContext) -> None:
    """Fill the run's table (`input`: table_id, columns) row by row."""
    table_id: str = ctx.run.input["table_id"]
    keys: list[str] | None = ctx.run.input.get("columns") or None

    def plan() -> tuple[list[Column], list[service.Row]]:
        with ctx.sessions() as db:
            table = db.get(ExtractionTable, table_id)
            if table is None:
                return [], []
            return service.to_fill(db, table, keys)

    columns, rows = await asyncio.to_thread(plan)
    total = len(rows)
    ctx.emit("progress", {"done": 0, "total": total})
    offline = is_offline(ctx)
    for done, row in enumerate(rows, start=1):
        ctx.check_abort()

        def read(document_id: str = row.document_id) -> list[evidence.Sentence]:
            with ctx.sessions() as db:
                return evidence.document_sentences(db, document_id)

        sentences = await asyncio.to_thread(read)
        if offline:
            got = await asyncio.to_thread(extract_all, columns, sentences)
            await _offline_usage(ctx, sentences)
        else:
            got = {c.key: await _with_model(ctx, c, sentences) for c in columns}
        ctx.check_abort()

        def save(document_id: str = row.document_id) -> dict[str, Any]:
            with ctx.sessions() as db:
                written = {
                    key: cell_view(c)
                    for key, g in got.items()
                    if (c := service.write_cell(db, table_id, document_id, key, g, ctx.run.id)) is not None
                }
                db.commit()
                return written

        written = await asyncio.to_thread(save)
        ctx.emit("cells", {"document_id": row.document_id, "cells": written})
        ctx.emit("progress", {"done": done, "total": total})


KIND = RunKind(
    KIND_NAME,
    "Fill table",
    fill,
    resource=RESOURCE,
    whole_map=True,
    prompt_budget=PROMPT_BUDGET_PER_PAPER,
    role="researcher",
)
