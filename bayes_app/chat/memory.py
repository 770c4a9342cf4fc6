"""The conversation memory budget: which earlier exchanges go back to the model."""

from __future__ import annotations

from dataclasses import dataclass

HISTORY_BUDGET_CHARS = 48_000


@dataclass(frozen=True)
class Exchange:
    """One earlier question and its answer."""

    question: str
    answer: str

    @property
    def chars(self) -> int:
        return len(self.question) + len(self.answer)


@dataclass(frozen=True)
class Memory:
    kept: list[Exchange]
    dropped: int  # oldest exchanges left out to fit the budget
    used_chars: int
    budget_chars: int

    def line(self) -> str:
        """The `memory` line shown under an answer, in plain words ("" for a first question:
        there is nothing to remember)."""
        total = len(self.kept) + self.dropped
        if total == 0:
            return ""
        if not self.dropped:
            what = "the earlier question" if total == 1 else f"all {total} earlier questions"
            return f"This answer took {what} of the conversation into account."
        return (f"This answer took the last {len(self.kept)} of {total} earlier questions into account; "
                f"the oldest {self.dropped} no longer fit what the model can read at once.")

    def to_json(self) -> dict:
        return {"kept": len(self.kept), "dropped": self.dropped, "used_chars": self.used_chars,
                "budget_chars": self.budget_chars, "line": self.line()}


def fit(exchanges: list[Exchange], question: str, budget: int = HISTORY_BUDGET_CHARS) -> Memory:
    """Drop the oldest exchanges until history + the new question fit in `budget` chars."""
    kept = list(exchanges)
    dropped = 0
    used = sum(e.chars for e in kept) + len(question)
    while kept and used > budget:
        used -= kept.pop(0).chars
        dropped += 1
    return Memory(kept, dropped, used, budget)
