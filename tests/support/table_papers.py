"""Small generated papers whose sample size, design and finding are known: the extraction
tables' tests fill a table over them and compare."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from tests.support.tiny_pdf import _esc, _pdf


def fund(db_url: str, email: str, credits: int = 10) -> None:
    """Grant `credits` to the account of `email` (a fill reserves credits before it starts)."""
    from sqlmodel import select

    from bayes_app.credits import ledger
    from bayes_app.db import session_scope
    from bayes_app.models import MICRO, User

    with session_scope(db_url) as db:
        user = db.exec(select(User).where(User.email == email)).one()
        ledger.grant(db, user, credits * MICRO, f"grant:{user.id}", "test")


@dataclass(frozen=True)
class LabelledPaper:
    title: str
    abstract: str
    participants: int | None
    randomized: bool
    finding: str  # a phrase of the sentence that states the main finding


def paper_pdf(p: LabelledPaper) -> bytes:
    """A one-page paper: title, author line, "Abstract", the abstract wrapped as a PDF would."""
    lines = [p.title, "A. Author and B. Author, Institute of Examples", "", "Abstract"]
    lines += textwrap.wrap(p.abstract, 88)
    body = ["BT", "/F1 10 Tf", "13 TL", "50 790 Td"]
    body += [f"({_esc(line)}) Tj T*" for line in lines]
    return _pdf(["\n".join([*body, "ET"])])


PAPERS = [
    LabelledPaper(
        "School exercise and adolescent weight",
        "Obesity is a growing problem in adolescents. We conducted a double-blind, cluster randomised "
        "controlled trial in twelve schools. A total of 1,248 adolescents were enrolled, and 612 were "
        "assigned to the exercise programme. In conclusion, the school programme reduced body mass index "
        "by 0.8 units compared with usual care.",
        1248,
        True,
        "reduced body mass index",
    ),
    LabelledPaper(
        "Sleep duration and memory in older adults",
        "Little is known about sleep and memory in older adults. In this prospective cohort study we "
        "followed 3,402 community-dwelling adults aged 65 years or older for ten years. Shorter sleep was "
        "associated with faster cognitive decline in every age group.",
        3402,
        False,
        "Shorter sleep was associated",
    ),
    LabelledPaper(
        "Silver dressings for partial-thickness burns",
        "Burn dressings differ in cost and comfort. This prospective, randomized study compared a silver "
        "dressing with silver sulfadiazine in 84 patients with partial-thickness burns. The silver dressing "
        "was associated with less pain and lower total treatment costs.",
        84,
        True,
        "less pain and lower total treatment costs",
    ),
    LabelledPaper(
        "Coffee intake and atrial fibrillation",
        "Whether coffee raises the risk of arrhythmia is debated. We analysed a case-control sample of "
        "960 patients with atrial fibrillation and 1,920 matched controls. Moderate coffee intake was not "
        "associated with atrial fibrillation.",
        960,
        False,
        "Moderate coffee intake was not associated",
    ),
]
