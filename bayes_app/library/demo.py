"""The demo account and its library (the bundled open-access papers), made by `make run`;
any user can add the same papers from the first-run guide."""

from __future__ import annotations

import secrets
from pathlib import Path

from sqlmodel import select

from bayes_app.accounts import service
from bayes_app.db import session_scope
from bayes_app.library import uploads
from bayes_app.models import User
from bayes_app.settings import PROJECT_ROOT

DEMO_EMAIL = "demo@example.com"
DEMO_PAPERS = PROJECT_ROOT / "tests" / "fixtures" / "papers"
# Only real, published papers: the folder also holds test fixtures (duplicate-media.pdf is a
# five-page stub of images, a table and LaTeX) that a new user must never meet as a "paper".
DEMO_FILES = ("pasa.pdf", "explanations-molecular-prediction-models.pdf")


def ensure_demo(papers_dir: Path = DEMO_PAPERS) -> str | None:
    """Create the demo user with the bundled papers (queued for ingestion; the worker's
    reaper sends them). Returns the generated password on creation, else None."""
    with session_scope() as db:
        if db.exec(select(User).where(User.email == DEMO_EMAIL)).first() is not None:
            return None
        password = secrets.token_urlsafe(9)
        user_id = service.register(db, DEMO_EMAIL, password).id
    add_demo_papers(user_id, papers_dir)
    return password


def add_demo_papers(user_id: str, papers_dir: Path = DEMO_PAPERS) -> list[uploads.Accepted]:
    """Put the bundled real papers (`DEMO_FILES`) into `user_id`'s library (a paper already
    there is kept as is). The caller enqueues ingestion of the created ones (or the worker's
    reaper does)."""
    out = []
    for pdf in (papers_dir / name for name in DEMO_FILES):
        with open(pdf, "rb") as fh:
            out.append(uploads.accept(user_id, fh, pdf.name))
    return out
