"""Shared fixtures: real Redis, real PostgreSQL 15 + SQLite, the app stack, Chromium."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import httpx._transports.default as _httpx_transport
import pytest
from argon2 import profiles

from bayes_app import registry
from bayes_app.accounts import passwords
from tests.support import ordering
from tests.support.procs import AppStack, PgCluster, RedisServer, stack_env, stack_port

registry.register()  # run kinds and hooks, as the web and worker processes do at start
# Users made directly in tests get Argon2's cheapest parameters (argon2-cffi's profile for tests):
# a hash carries its parameters, so the apps verify them as cheaply, while every password the
# apps hash themselves (sign-up, changes, admins) uses the shipped ones. ~0.2 s of CPU saved per
# user made and per sign-in, hundreds of times a run.
passwords.configure_hashing(2, profiles.CHEAPEST)
# httpx builds a TLS context for every client, loading the CA bundle (~24 ms of CPU), even for the
# http:// URLs the suite talks to; tests make thousands (health polls, one client per request).
# The same arguments give an identical context, so the test processes build each kind once.
_httpx_transport.create_ssl_context = functools.lru_cache(maxsize=8)(_httpx_transport.create_ssl_context)

# Users made directly in tests (make_user, service.register) start at 0 credits so balance
# assertions stay exact; the app stacks themselves drop BAYES_* and so run with the shipped
# default starter grant (tests/browser/test_first_run_ui.py relies on that).
os.environ.setdefault("BAYES_SIGNUP_CREDITS", "0")

ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "stack-secret-pass-42"
APP_MODEL = "gpt-4o-mini"


def pytest_sessionstart(session):
    # One frontend build per run, copied to every stack port (tests/support/frontend.py): the
    # controlling process drops an earlier run's before its test processes start stacks, unless
    # `make test` is building this run's beside its set-up (TESTS_FRONTEND_PREBUILD=1).
    if not hasattr(session.config, "workerinput") and os.environ.get("TESTS_FRONTEND_PREBUILD") != "1":
        from tests.support.frontend import forget_template

        forget_template()


def pytest_collection_modifyitems(items):
    # One pass on both cores (Makefile `test`: `-n 2 --dist loadfile --no-loadscope-reorder`), a
    # whole file per worker (module fixtures are built once), files by stage and longest first:
    # tests/support/ordering.py. Markers by what a test needs: `browser` (tests/browser), and
    # `slow` for every test that boots the app (the shared `app_stack`, or a `stack` of its own);
    # a slow test that fails is run once more (`flaky`, pytest-rerunfailures; `-rfER` names it in
    # the summary).
    for it in items:
        if "tests/browser/" in it.nodeid.replace("\\", "/"):
            it.add_marker(pytest.mark.browser)
        if (
            it.get_closest_marker("stack")
            or it.get_closest_marker("browser")
            or "app_stack" in getattr(it, "fixturenames", ())
        ):
            it.add_marker(pytest.mark.slow)
            it.add_marker(pytest.mark.flaky(reruns=1))
    items[:] = ordering.order(items, ordering.recorded_durations())


# A test run again after failing (`flaky`, the tests that boot the app) passes quietly; so that a race seen
# once on CI can be read off its log, the first failure's error lines are printed at the end.
_RERUNS: list[tuple[str, str]] = []


def pytest_runtest_logreport(report):
    if report.outcome == "rerun" and report.longrepr is not None:
        lines = report.longreprtext.splitlines()
        errors = [line for line in lines if line.startswith("E ")][:8] or lines[-8:]
        _RERUNS.append((report.nodeid, "\n".join(errors)))


def pytest_terminal_summary(terminalreporter):
    if _RERUNS:
        terminalreporter.section("why the rerun tests failed first")
        for nodeid, errors in _RERUNS:
            terminalreporter.write_line(f"{nodeid}:\n{errors}")


# ---- services ---------------------------------------------------------------------------
@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> RedisServer:
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_cluster() -> PgCluster:
    # Not under pytest's tmp dir: that is private to root, and postgres runs as 'postgres'.
    base = Path(tempfile.mkdtemp(prefix="bayes-pg-"))
    os.chmod(base, 0o755)
    cluster = PgCluster(base / "cluster").start()
    yield cluster
    cluster.stop()
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A database migrated to head once per session: each test's SQLite database is a copy."""
    from bayes_app import db

    path = tmp_path_factory.mktemp("migrated") / "template.db"
    url = f"sqlite:///{path}"
    db.migrate(url)
    db.get_engine(url).dispose()  # the last connection closed: nothing left in a journal
    return path


@pytest.fixture(scope="session")
def migrated_pg(pg_cluster) -> str:
    """The name of a PostgreSQL database migrated to head once per session, the template of
    each test's database (CREATE DATABASE … TEMPLATE: a file copy, no migrations run again)."""
    from bayes_app import db

    name = f"template_{uuid.uuid4().hex[:8]}"
    url = pg_cluster.create_database(name)
    db.migrate(url)
    db.get_engine(url).dispose()  # a template must have no connections while it is copied
    return name


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    """A fresh database migrated to head on each backend (the test runs once per backend): a
    copy of the session's migrated one, so 300 tests do not run every migration each."""
    from bayes_app import db

    if request.param == "sqlite":
        path = tmp_path / "test.db"
        shutil.copyfile(request.getfixturevalue("migrated_sqlite"), path)
        url = f"sqlite:///{path}"
    else:
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        url = cluster.create_database(f"t_{uuid.uuid4().hex[:12]}", template=request.getfixturevalue("migrated_pg"))
    yield url
    db.get_engine(url).dispose()


@pytest.fixture
def dbs(db_url):
    """An open SQLModel session on the fresh database."""
    from sqlmodel import Session

    from bayes_app.db import get_engine

    with Session(get_engine(db_url), expire_on_commit=False) as s:
        yield s


@pytest.fixture
def configure(monkeypatch):
    """Point this process's settings at given env values (clears the settings cache)."""
    from bayes_app import settings

    def apply(**env: str) -> None:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        settings.get_settings.cache_clear()

    yield apply
    settings.get_settings.cache_clear()


# ---- the app ------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def fake_llm():
    """The scripted OpenAI-compatible server the shared app talks to (its own process)."""
    from tests.support.fake_openai import FakeOpenAIProcess

    fake = FakeOpenAIProcess().start()
    yield fake
    fake.stop()


@pytest.fixture(scope="session")
def app_stack(tmp_path_factory, redis_server, fake_llm, fake_zotero) -> AppStack:
    """The app started once per test session through `python -m bayes_app.cli run`, with
    the scripted model server as its provider (`make run`'s offline mode is tested by the
    `stack` tests, which start their own app without a provider)."""
    from bayes_app.credits import pricing
    from bayes_app.db import session_scope

    data_dir = Path(tmp_path_factory.mktemp("app"))
    port = stack_port()
    env = stack_env(
        data_dir,
        port,
        REDIS_URL=redis_server.url,
        BAYES_ADMIN_EMAIL=ADMIN_EMAIL,
        BAYES_ADMIN_PASSWORD=ADMIN_PASSWORD,
        BAYES_MAX_UPLOAD_MB="20",
        BAYES_DEMO="0",
        OPENAI_BASE_URL=fake_llm.base_url,
        OPENAI_API_KEY="sk-test-secret-key-not-for-browsers",
        BAYES_MODEL_DEFAULT=APP_MODEL,
        ZOTERO_API_URL=fake_zotero.base,
    )
    stack = AppStack(data_dir=data_dir, env=env, port=port).start()
    with session_scope(f"sqlite:///{data_dir / 'bayes.db'}") as db:
        pricing.set_price(db, APP_MODEL, 150_000, 75_000, 600_000)
    yield stack
    stack.stop()


@pytest.fixture(scope="session")
def app_db_url(app_stack) -> str:
    return f"sqlite:///{app_stack.data_dir / 'bayes.db'}"


@pytest.fixture
def make_user(app_db_url):
    """Create a user directly in the running app's database; returns (email, password)."""
    from bayes_app.accounts import service
    from bayes_app.db import session_scope

    def create(is_admin: bool = False) -> tuple[str, str]:
        email = f"u{uuid.uuid4().hex[:10]}@example.com"
        password = "pw-" + uuid.uuid4().hex[:12]
        with session_scope(app_db_url) as s:
            service.register(s, email, password, is_admin=is_admin)
        return email, password

    return create


@pytest.fixture
def client(app_stack):
    """An HTTP client for the shared app's /api/v1."""
    import httpx

    with httpx.Client(base_url=app_stack.url + "/api/v1", timeout=60) as c:
        yield c


@pytest.fixture
def user_api(client, make_user):
    """`make()` creates a user and returns a client bound to their bearer token."""
    import httpx

    def make() -> httpx.Client:
        email, pw = make_user()
        tok = client.post("/auth/token", json={"email": email, "password": pw}).json()["token"]
        return httpx.Client(base_url=str(client.base_url), timeout=60, headers={"Authorization": f"Bearer {tok}"})

    return make


@pytest.fixture(scope="session")
def browser():
    from tests.support.browser import chromium

    yield from chromium()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    context.close()


# ---- Zotero ----------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def fake_zotero():
    """The fake Zotero Web API (a real HTTP server in a thread), shared by the session: each
    test adds its own user/group libraries and keys."""
    from tests.support.fake_zotero import FakeZotero

    server = FakeZotero().start()
    yield server
    server.stop()


# ---- object storage --------------------------------------------------------------------------
@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """moto's standalone S3 server (a real HTTP endpoint speaking the S3 protocol)."""
    from tests.support.s3 import S3Server

    server = S3Server(tmp_path_factory.mktemp("s3")).start()
    yield server
    server.stop()
