import pytest

from bayes_app.settings import SettingsError, load_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for k in (
        "BAYES_PORT",
        "DATABASE_URL",
        "REDIS_URL",
        "QDRANT_URL",
        "OPENAI_BASE_URL",
        "BAYES_SECRET_KEY",
        "BAYES_ADMIN_EMAIL",
        "BAYES_ADMIN_PASSWORD",
        "BAYES_DATA_DIR",
    ):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("BAYES_DATA_DIR", str(tmp_path))


def test_defaults(tmp_path):
    s = load_settings()
    assert s.port == 3000
    assert s.effective_database_url == f"sqlite:///{tmp_path / 'bayes.db'}"
    assert s.runs_local_redis
    assert s.effective_redis_url.startswith("redis://:")
    assert s.effective_redis_url.endswith(f"@127.0.0.1:{s.redis_port}/0")  # with its generated password


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BAYES_PORT", "abc"),
        ("BAYES_PORT", "70000"),
        ("DATABASE_URL", "mysql://x/y"),
        ("REDIS_URL", "http://localhost"),
        ("QDRANT_URL", "localhost:6333"),
        ("OPENAI_BASE_URL", "ftp://x"),
        ("BAYES_ADMIN_EMAIL", "not-an-email"),
        ("BAYES_ADMIN_PASSWORD", "short"),
    ],
)
def test_invalid_values_name_the_setting(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as err:
        load_settings()
    assert f"Invalid setting {name}" in str(err.value)


def test_postgres_url_normalised(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@h/db")
    assert load_settings().effective_database_url == "postgresql+psycopg://u:p@h/db"


def test_secret_key_generated_once_into_data_dir(tmp_path):
    s = load_settings()
    key = s.secret()
    assert len(key) > 40
    assert (tmp_path / "secret_key").read_text() == key
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0
    assert load_settings().secret() == key


def test_explicit_secret_key_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("BAYES_SECRET_KEY", "s3cret-from-env")
    assert load_settings().secret() == "s3cret-from-env"
    assert not (tmp_path / "secret_key").exists()


def test_secret_values_do_not_leak_in_repr(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
    monkeypatch.setenv("BAYES_ADMIN_PASSWORD", "an-admin-password-1")
    text = repr(load_settings())
    assert "sk-very-secret" not in text
    assert "an-admin-password-1" not in text


def test_new_accounts_get_a_starter_grant_by_default(monkeypatch):
    monkeypatch.delenv("BAYES_SIGNUP_CREDITS", raising=False)
    assert load_settings().signup_credits == 10
    monkeypatch.setenv("BAYES_SIGNUP_CREDITS", "0")  # still allowed: no grant
    assert load_settings().signup_credits == 0
    monkeypatch.setenv("BAYES_SIGNUP_CREDITS", "-1")
    with pytest.raises(SettingsError):
        load_settings()
