"""Account operations against real SQLite and PostgreSQL databases (each test runs on both)."""

from datetime import timedelta

import pytest
from sqlmodel import func, select

from bayes_app.accounts import service
from bayes_app.accounts.service import AccountError
from bayes_app.models import ApiToken, User, utcnow


def test_register_and_authenticate(dbs):
    user = service.register(dbs, "Alice@Example.com", "tangerine-sky-42")
    dbs.commit()
    assert user.email == "alice@example.com"
    assert not user.is_admin
    assert service.authenticate(dbs, "alice@example.com", "tangerine-sky-42").id == user.id
    with pytest.raises(AccountError) as err:
        service.authenticate(dbs, "alice@example.com", "wrong-password-1")
    assert err.value.status == 401
    with pytest.raises(AccountError) as err:
        service.authenticate(dbs, "nobody@example.com", "tangerine-sky-42")
    assert err.value.code == "invalid_credentials"  # same answer: no account enumeration


def test_duplicate_email_creates_nothing(dbs):
    service.register(dbs, "bob@example.com", "tangerine-sky-42")
    dbs.commit()
    with pytest.raises(AccountError) as err:
        service.register(dbs, "BOB@example.com", "another-pass-77")
    assert err.value.code == "email_taken"
    assert err.value.status == 409
    dbs.rollback()
    assert len(dbs.exec(select(User)).all()) == 1


@pytest.mark.parametrize(
    ("email", "password", "code"),
    [
        ("not-an-email", "tangerine-sky-42", "invalid_email"),
        ("carol@example.com", "short", "weak_password"),
        ("carol@example.com", "", "weak_password"),
    ],
)
def test_bad_registration_input(dbs, email, password, code):
    with pytest.raises(AccountError) as err:
        service.register(dbs, email, password)
    assert err.value.code == code
    dbs.rollback()
    assert dbs.exec(select(User)).first() is None


def test_sessions_expire_and_end_on_logout_and_password_change(dbs):
    user = service.register(dbs, "dan@example.com", "tangerine-sky-42")
    token = service.create_session(dbs, user, timedelta(hours=1))
    dbs.commit()
    assert service.user_for_session(dbs, token).id == user.id
    assert service.user_for_session(dbs, token + "x") is None
    service.end_session(dbs, token)
    dbs.commit()
    assert service.user_for_session(dbs, token) is None

    t2 = service.create_session(dbs, user, timedelta(hours=1))
    dbs.commit()
    service.change_password(dbs, user.id, "tangerine-sky-42", "new-mango-pass-9")
    dbs.commit()
    assert service.user_for_session(dbs, t2) is None  # other sessions are signed out
    expired = service.create_session(dbs, user, timedelta(seconds=-1))
    dbs.commit()
    assert service.user_for_session(dbs, expired) is None


def test_change_password_rules(dbs):
    user = service.register(dbs, "zed@example.com", "tangerine-sky-42")
    dbs.commit()
    with pytest.raises(AccountError, match="current password"):
        service.change_password(dbs, user.id, "wrong-password", "new-mango-pass-9")
    with pytest.raises(AccountError) as err:
        service.change_password(dbs, user.id, "tangerine-sky-42", "short")
    assert err.value.code == "weak_password"
    service.change_password(dbs, user.id, "tangerine-sky-42", "new-mango-pass-9")
    dbs.commit()
    assert service.authenticate(dbs, "zed@example.com", "new-mango-pass-9")


def test_api_tokens_revoke_expire_and_isolation(dbs):
    a = service.register(dbs, "fay@example.com", "tangerine-sky-42")
    b = service.register(dbs, "gus@example.com", "tangerine-sky-43")
    row, token = service.create_api_token(dbs, a, timedelta(days=1), "cli")
    dbs.commit()
    assert dbs.exec(select(ApiToken)).one().token_hash != token  # only the hash is stored
    user, _ = service.user_for_api_token(dbs, token)
    assert user.id == a.id
    with pytest.raises(AccountError) as err:  # B cannot revoke A's token: it is "not found"
        service.revoke_api_token(dbs, b.id, row.id)
    assert err.value.status == 404
    service.revoke_api_token(dbs, a.id, row.id)
    dbs.commit()
    assert service.user_for_api_token(dbs, token) is None

    row2, token2 = service.create_api_token(dbs, a, timedelta(days=1))
    row2.expires_at = utcnow() - timedelta(seconds=1)
    dbs.add(row2)
    dbs.commit()
    assert service.user_for_api_token(dbs, token2) is None


def test_ensure_admin_is_idempotent(dbs):
    user, generated = service.ensure_admin(dbs, "root@example.com", None)
    dbs.commit()
    assert user.is_admin
    assert generated
    assert len(generated) >= 12
    assert service.authenticate(dbs, "root@example.com", generated)
    again, generated2 = service.ensure_admin(dbs, "root@example.com", None)
    dbs.commit()
    assert again.id == user.id
    assert generated2 is None  # never regenerated or printed again
    assert service.authenticate(dbs, "root@example.com", generated)


def test_signup_credits_are_granted_once_at_registration(dbs, configure):
    from bayes_app.credits import ledger
    from bayes_app.models import MICRO, LedgerEntry

    configure(BAYES_SIGNUP_CREDITS="7")
    user = service.register(dbs, "Fresh@Example.com", "correct-horse-42")
    dbs.commit()
    assert ledger.balance(dbs, user) == 7 * MICRO
    assert ledger.available(dbs, user) == 7 * MICRO
    rows = dbs.exec(select(LedgerEntry).where(LedgerEntry.user_id == user.id)).all()
    assert [(e.entry_type, e.amount, e.idempotency_key, e.note) for e in rows] == [
        ("grant", 7 * MICRO, f"signup:{user.id}", "Signup credits")
    ]
    assert service.grant_signup_credits(dbs, user) is False  # idempotent
    dbs.commit()
    assert ledger.balance(dbs, user) == 7 * MICRO
    [row] = ledger.history(dbs, user)
    assert (row.kind, row.title, row.amount) == ("grant", "Signup credits", 7 * MICRO)
    # a failed registration grants nothing
    with pytest.raises(service.AccountError):
        service.register(dbs, "fresh@example.com", "correct-horse-42")
    dbs.rollback()
    assert dbs.exec(select(func.count()).select_from(LedgerEntry)).one() == 1

    configure(BAYES_SIGNUP_CREDITS="0")
    other = service.register(dbs, "none@example.com", "correct-horse-42")
    dbs.commit()
    assert ledger.balance(dbs, other) == 0
    assert ledger.history(dbs, other) == []
    assert service.grant_signup_credits(dbs, other, 2) is True  # explicit amount


def test_password_change_revokes_every_api_token_of_that_user_only(dbs):
    a = service.register(dbs, "ivy@example.com", "tangerine-sky-42")
    b = service.register(dbs, "jon@example.com", "tangerine-sky-43")
    _, ta = service.create_api_token(dbs, a, timedelta(days=90), "laptop")
    _, tb = service.create_api_token(dbs, b, timedelta(days=90), "laptop")
    dbs.commit()
    service.change_password(dbs, a.id, "tangerine-sky-42", "new-mango-pass-9")
    dbs.commit()
    assert service.user_for_api_token(dbs, ta) is None
    assert service.user_for_api_token(dbs, tb)[0].id == b.id


def test_sign_out_everywhere_ends_every_session_and_token(dbs):
    a = service.register(dbs, "kim@example.com", "tangerine-sky-42")
    b = service.register(dbs, "lee@example.com", "tangerine-sky-43")
    sessions = [service.create_session(dbs, a, timedelta(hours=1)) for _ in range(3)]
    _, token = service.create_api_token(dbs, a, timedelta(days=1))
    other = service.create_session(dbs, b, timedelta(hours=1))
    dbs.commit()
    assert service.end_all_sessions(dbs, a.id) == 3
    assert service.revoke_all_api_tokens(dbs, a.id) == 1
    dbs.commit()
    assert [service.user_for_session(dbs, s) for s in sessions] == [None] * 3
    assert service.user_for_api_token(dbs, token) is None
    assert service.user_for_session(dbs, other).id == b.id  # another user's sessions stay
    assert service.end_all_sessions(dbs, a.id) == 0


def test_registration_refuses_a_lookalike_of_an_existing_address(dbs):
    first = service.register(dbs, "redb-a@example.org", "tangerine-sky-42")
    dbs.commit()
    assert first.email_skeleton  # stored with the account
    for lookalike in ("redb-\u0430@example.org", "redb-a@ex\u0430mple.org", "redb-a@exarnple.org"):
        with pytest.raises(AccountError) as err:
            service.register(dbs, lookalike, "tangerine-sky-43")
        assert err.value.code == "email_lookalike"
        assert err.value.status == 409
        dbs.rollback()
    assert dbs.exec(select(func.count()).select_from(User)).one() == 1
    service.register(dbs, "redb-b@example.org", "tangerine-sky-44")  # a different address is fine
    dbs.commit()


def test_migration_0012_gives_existing_accounts_their_skeleton(tmp_path):
    import sqlalchemy as sa
    from alembic.config import Config

    from alembic import command
    from bayes_app.accounts.identity import skeleton
    from bayes_app.db import PROJECT_ROOT

    url = f"sqlite:///{tmp_path / 'old.db'}"
    cfg = Config(str(PROJECT_ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    cfg.attributes["database_url"] = url
    command.upgrade(cfg, "0010")
    engine = sa.create_engine(url)
    with engine.begin() as c:
        c.execute(
            sa.text(
                "INSERT INTO users (id, email, password_hash, is_admin, created_at, password_changed_at) "
                "VALUES ('u1', 'modern@example.org', 'x', 0, '2026-01-01', '2026-01-01')"
            )
        )
    command.upgrade(cfg, "0012")
    with engine.begin() as c:
        stored = c.execute(sa.text("SELECT email_skeleton FROM users WHERE id = 'u1'")).scalar_one()
    assert stored == skeleton("modern@example.org") == skeleton("rnodern@example.org")
    engine.dispose()
