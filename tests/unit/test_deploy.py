"""deploy/compose.yaml: parses; every Bayes service's environment names settings that exist
and whose values pass validation; the shape docs/deploy.md describes (web ×2 with Reflex's
Redis state manager, worker ×2, one-shot migrations first, no shared volume)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose.yaml"
# Variables read by libraries, not by bayes_app.settings.
EXTERNAL = {
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "REFLEX_REDIS_URL",
    "REFLEX_USE_NPM",
    "REFLEX_TELEMETRY_ENABLED",
    "PYTHONUNBUFFERED",
    "GRANIAN_WORKERS",
}
SAMPLE = {
    "POSTGRES_PASSWORD": "pw",
    "MINIO_ROOT_USER": "bayes",
    "MINIO_ROOT_PASSWORD": "secret-pw",
    "BAYES_SECRET_KEY": "k" * 48,
    "BAYES_ADMIN_PASSWORD": "a-long-admin-password-42",
    "REDIS_PASSWORD": "redis-pw",
    "QDRANT_API_KEY": "qdrant-key",
}


def _interpolate(value: str) -> str:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?message} with sample secrets."""

    def sub(m: re.Match) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3) or ""
        if name in SAMPLE:
            return SAMPLE[name]
        return arg if op == ":-" else ""

    return re.sub(r"\$\{([A-Z0-9_]+)(?:(:[-?])([^}]*))?\}", sub, value)


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def _bayes_services(compose: dict) -> dict[str, dict]:
    return {n: s for n, s in compose["services"].items() if s.get("image") == "bayes:latest"}


def _aliases() -> set[str]:
    from bayes_app.settings import Settings

    return {f.validation_alias for f in Settings.model_fields.values() if isinstance(f.validation_alias, str)}


def test_every_variable_is_a_real_setting_and_valid(compose):
    from bayes_app.settings import Settings, load_settings

    services = _bayes_services(compose)
    assert {"migrate", "web1", "web2", "worker1", "worker2"} <= set(services)
    aliases = _aliases()
    for name, svc in services.items():
        env = {k: _interpolate(str(v)) for k, v in svc["environment"].items()}
        unknown = set(env) - aliases - EXTERNAL
        assert not unknown, f"{name}: {sorted(unknown)} are not settings (bayes_app/settings.py)"
        s = load_settings(**{k: v for k, v in env.items() if k in aliases})  # SettingsError if invalid
        assert isinstance(s, Settings)
        assert s.storage_url, name
        assert s.qdrant_url, name
        assert s.redis_url, name
        assert s.database_url, name
        assert s.database_url.startswith("postgresql+psycopg://")
        assert s.secret() == SAMPLE["BAYES_SECRET_KEY"]  # one key everywhere: sessions work on any web


def test_shape_matches_the_docs(compose):
    services = _bayes_services(compose)
    shared = ["DATABASE_URL", "REDIS_URL", "QDRANT_URL", "BAYES_STORAGE_URL", "BAYES_SECRET_KEY"]
    first = services["migrate"]["environment"]
    for name, svc in services.items():
        for key in shared:
            assert svc["environment"][key] == first[key], (name, key)
        assert not [v for v in svc.get("volumes", []) if not str(v).startswith("/tmp")], (
            f"{name} mounts a volume: processes must not need a shared disk"
        )
    for web in ("web1", "web2"):
        env = services[web]["environment"]
        assert env["REFLEX_REDIS_URL"].startswith("redis://")
        assert env["REFLEX_REDIS_URL"] != env["REDIS_URL"]
        assert "reflex" in services[web]["command"]
    for worker in ("worker1", "worker2"):
        assert services[worker]["command"][:2] == ["dramatiq", "jobs"]
    for name in ("web1", "web2", "worker1", "worker2"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["migrate"]["command"][-1] == "setup"
    assert services["migrate"]["restart"] == "no"
    redis_cmd = compose["services"]["redis"]["command"]
    assert "--appendonly" in redis_cmd
    assert redis_cmd[redis_cmd.index("--appendonly") + 1] == "yes"
    for infra in ("postgres", "redis", "qdrant", "minio", "proxy"):
        assert infra in compose["services"]


def test_redis_and_qdrant_require_credentials(compose):
    """No infrastructure service answers without a secret: Redis runs with requirepass, Qdrant with
    an API key, and every Bayes process is given both (a missing secret stops `compose up`)."""
    redis_cmd = [_interpolate(str(c)) for c in compose["services"]["redis"]["command"]]
    assert redis_cmd[redis_cmd.index("--requirepass") + 1] == SAMPLE["REDIS_PASSWORD"]
    qdrant_env = compose["services"]["qdrant"]["environment"]
    assert _interpolate(qdrant_env["QDRANT__SERVICE__API_KEY"]) == SAMPLE["QDRANT_API_KEY"]
    for name, svc in _bayes_services(compose).items():
        env = {k: _interpolate(str(v)) for k, v in svc["environment"].items()}
        assert env["REDIS_URL"].startswith(f"redis://:{SAMPLE['REDIS_PASSWORD']}@"), name
        assert env.get("QDRANT_API_KEY") == SAMPLE["QDRANT_API_KEY"], name
        if "REFLEX_REDIS_URL" in env:
            assert env["REFLEX_REDIS_URL"].startswith(f"redis://:{SAMPLE['REDIS_PASSWORD']}@"), name
    example = (ROOT / "deploy" / ".env.example").read_text()
    assert "REDIS_PASSWORD=" in example
    assert "QDRANT_API_KEY=" in example
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "ip_hash" in nginx
    assert "web1:3000" in nginx
    assert "web2:3000" in nginx
    assert "Upgrade" in nginx


def test_the_checks_catch_a_misspelt_setting():
    assert "BAYES_STORAGE_URI" not in _aliases() | EXTERNAL
    assert "BAYES_STORAGE_URL" in _aliases()
    assert "BAYES_S3_ENDPOINT_URL" in _aliases()
    assert _interpolate("${X:-fallback}/${POSTGRES_PASSWORD:?set}") == "fallback/pw"
