"""What a table column is: a question with a type, checked before anything is stored."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bayes_app.errors import DomainError

TYPES = ("number", "yes_no", "choice", "text")
MAX_COLUMNS = 30
MAX_QUESTION_CHARS = 500
MAX_CHOICES = 20
_KEY = re.compile(r"^[a-z0-9_][a-z0-9_-]{0,39}$")


class TableError(DomainError):
    """A refusal about a table, in the user's words."""


@dataclass(frozen=True)
class Column:
    """One column: `key` names it in cells and exports, `question` is what it asks of each paper."""

    key: str
    question: str
    type: str
    choices: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "question": self.question, "type": self.type, "choices": list(self.choices)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Column:
        return cls(data["key"], data["question"], data["type"], tuple(data.get("choices") or ()))


def check_column(key: str, question: str, type_: str, choices: list[str] | None) -> Column:
    """A valid column, or TableError (400) saying what to fix."""
    key = (key or "").strip()
    if not _KEY.match(key):
        raise TableError(
            "bad_column",
            f"Column key {key!r} must be 1–40 lower-case letters, digits, '_' or '-' (e.g. 'participants').",
            400,
        )
    question = " ".join((question or "").split())
    if not question:
        raise TableError("bad_column", f"Column {key!r} needs a question.", 400)
    if len(question) > MAX_QUESTION_CHARS:
        raise TableError(
            "bad_column", f"Column {key!r}: the question is longer than {MAX_QUESTION_CHARS} characters.", 400
        )
    if type_ not in TYPES:
        raise TableError(
            "bad_column_type", f"Column {key!r} has an unknown type {type_!r}; use one of {', '.join(TYPES)}.", 400
        )
    opts = tuple(" ".join(str(c).split()) for c in (choices or []) if str(c).strip())
    if type_ == "choice":
        if len(opts) < 2:
            raise TableError("bad_column", f"Column {key!r} is a choice: give at least two options.", 400)
        if len(opts) > MAX_CHOICES or len({o.lower() for o in opts}) != len(opts):
            raise TableError("bad_column", f"Column {key!r}: give 2–{MAX_CHOICES} different options.", 400)
    elif opts:
        raise TableError("bad_column", f"Column {key!r}: only a 'choice' column takes options.", 400)
    return Column(key, question, type_, opts)


def check_columns(raw: list[Column]) -> list[Column]:
    """The columns of a new table: at least one, unique keys, at most MAX_COLUMNS."""
    if not raw:
        raise TableError("no_columns", "A table needs at least one column (a question for every paper).", 400)
    if len(raw) > MAX_COLUMNS:
        raise TableError("too_many_columns", f"A table holds at most {MAX_COLUMNS} columns.", 400)
    keys = [c.key for c in raw]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise TableError("duplicate_column", f"Column keys must differ; repeated: {', '.join(dupes)}.", 400)
    return raw
