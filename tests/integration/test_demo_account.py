"""`make run`'s demo account: made once, on the first start, with the bundled papers queued for
ingestion and a password that signs in; a second start leaves it as it is. (The stack tests run
with BAYES_DEMO=0: their runs would queue behind the demo's ingestion.)"""

from __future__ import annotations

import pytest
from sqlmodel import select


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_demo_account_is_made_once_with_the_bundled_papers_queued(db_url, configure, tmp_path):
    configure(DATABASE_URL=db_url, BAYES_DATA_DIR=str(tmp_path / "data"), BAYES_STORAGE_URL="")
    from bayes_app.accounts import service
    from bayes_app.db import session_scope
    from bayes_app.library import demo
    from bayes_app.models import DocStatus, Document, User

    password = demo.ensure_demo()
    assert password
    with session_scope() as db:
        user = service.authenticate(db, demo.DEMO_EMAIL, password)
        docs = db.exec(select(Document).where(Document.owner_id == user.id)).all()
        assert sorted(d.filename for d in docs) == sorted(demo.DEMO_FILES)
        assert {d.status for d in docs} == {DocStatus.QUEUED}  # the worker's reaper sends them
    assert demo.ensure_demo() is None  # a second start: no new password, no second copy
    with session_scope() as db:
        assert len(db.exec(select(User).where(User.email == demo.DEMO_EMAIL)).all()) == 1
        assert len(db.exec(select(Document).where(Document.owner_id == user.id)).all()) == len(demo.DEMO_FILES)
