"""The conversation memory budget: which earlier exchanges go back to the model."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

HISTORY_BUDGET_CHARS = 48_000
# a question that continues the conversation ("And then?", "Why is that?", "What about its recall?")
_FOLLOW_UP = re.compile(
    r"^\s*(?:and|but|so|also|then|why|what about|how about|what else|more)\b|"
    r"\b(?:it|its|they|them|their|this|that|these|those|he|she|the same|above|previous|"
    r"earlier|last answer|you said)\b",
    re.I,
)


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
    relevant: int = -1  # kept exchanges about this question (-1: all of them)

    @property
    def related(self) -> int:
        return len(self.kept) if self.relevant < 0 else self.relevant

    def line(self) -> str:
        """The `memory` line shown under an answer, in plain words ("" for a first question:
        there is nothing to remember)."""
        total = len(self.kept) + self.dropped
        if total == 0 or (self.related == 0 and not self.dropped):
            return ""  # nothing earlier, or nothing earlier about this question: no claim to make
        if self.related == 0:
            return f"The oldest {self.dropped} earlier questions no longer fit what the model can read at once."
        if not self.dropped:
            if self.related < total:
                return (
                    f"This answer took {self.related} of the {total} earlier questions into account "
                    "(the others are about something else)."
                )
            what = "the earlier question" if total == 1 else f"all {total} earlier questions"
            return f"This answer took {what} of the conversation into account."
        return (
            f"This answer took the last {len(self.kept)} of {total} earlier questions into account; "
            f"the oldest {self.dropped} no longer fit what the model can read at once."
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kept": len(self.kept),
            "related": self.related,
            "dropped": self.dropped,
            "used_chars": self.used_chars,
            "budget_chars": self.budget_chars,
            "line": self.line(),
        }


def fit(exchanges: list[Exchange], question: str, budget: int = HISTORY_BUDGET_CHARS) -> Memory:
    """Drop the oldest exchanges until history + the new question fit in `budget` chars."""
    kept = list(exchanges)
    dropped = 0
    used = sum(e.chars for e in kept) + len(question)
    while kept and used > budget:
        used -= kept.pop(0).chars
        dropped += 1
    return Memory(kept, dropped, used, budget, sum(related(e, question) for e in kept))


def related(exchange: Exchange, question: str) -> bool:
    """Whether an earlier exchange bears on `question`: the question continues the conversation
    ("And then?", "Why is that?") or shares a content term with the earlier question or answer."""
    from bayes_app.chat.grounding import content_terms

    if _FOLLOW_UP.search(question):
        return True
    terms = content_terms(question)
    return bool(terms & content_terms(f"{exchange.question} {exchange.answer[:4000]}"))
