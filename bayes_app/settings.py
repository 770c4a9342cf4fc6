"""One typed settings object, read from the environment and an optional `.env` file.

Every setting is documented in the README. Invalid values fail at start with a message
that names the environment variable (see `load_settings`).
"""

from __future__ import annotations

import os
import secrets
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class SettingsError(Exception):
    """A setting has an invalid value; the message names the environment variable."""


Port = Annotated[int, Field(ge=1, le=65535)]
# Roles with their own model setting (BAYES_MODEL_<ROLE>): the Ask agent's thinking phase and
# direct tool calls; the map pipeline's planner (also routing, regrouping, edits), researcher,
# critic and writer (synthesis, answers from the map).
ROLES = ("thinking", "tools", "planner", "researcher", "critic", "writer")


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class Settings(BaseSettings):
    """Bayes configuration. Field aliases are the environment variable names."""

    model_config = SettingsConfigDict(
        env_file=PROJECT_ROOT / ".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=False
    )

    data_dir: Path = Field(Path("var"), validation_alias="BAYES_DATA_DIR")
    database_url: str | None = Field(None, validation_alias="DATABASE_URL")
    redis_url: str | None = Field(None, validation_alias="REDIS_URL")
    redis_port: Port = Field(6390, validation_alias="BAYES_REDIS_PORT")
    qdrant_url: str | None = Field(None, validation_alias="QDRANT_URL")
    # the `api-key` of QDRANT_URL's server; the embedded index gets a generated one
    qdrant_api_key: SecretStr | None = Field(None, validation_alias="QDRANT_API_KEY")
    # ---- file storage (README: "File storage"): unset = <data dir>/files on local disk
    storage_url: str | None = Field(None, validation_alias="BAYES_STORAGE_URL")
    s3_endpoint_url: str | None = Field(None, validation_alias="BAYES_S3_ENDPOINT_URL")
    index_port: Port = Field(6391, validation_alias="BAYES_INDEX_PORT")
    embedding_model: str = Field("minilm", validation_alias="BAYES_EMBEDDING_MODEL")
    embedding_threads: int | None = Field(None, ge=1, le=64, validation_alias="BAYES_EMBEDDING_THREADS")
    # Check a draft: the NLI reader of contradictions (bayes_app/audits/nli.py); off = the lexical model alone
    audit_nli: bool = Field(True, validation_alias="BAYES_AUDIT_NLI")
    # tests only: injected faults ("point:times,…", bayes_app.faults) and Dramatiq's stub broker
    faults_raw: str = Field("", validation_alias="BAYES_FAULTS")
    stub_broker: bool = Field(False, validation_alias="BAYES_STUB_BROKER")
    demo: bool = Field(True, validation_alias="BAYES_DEMO")
    max_upload_mb: int = Field(100, ge=1, le=10_000, validation_alias="BAYES_MAX_UPLOAD_MB")
    openai_base_url: str | None = Field(None, validation_alias="OPENAI_BASE_URL")
    openai_api_key: SecretStr | None = Field(None, validation_alias="OPENAI_API_KEY")
    secret_key: SecretStr | None = Field(None, validation_alias="BAYES_SECRET_KEY")
    admin_email: str = Field("admin@example.com", validation_alias="BAYES_ADMIN_EMAIL")
    admin_password: SecretStr | None = Field(None, validation_alias="BAYES_ADMIN_PASSWORD")
    port: Port = Field(3000, validation_alias="BAYES_PORT")
    # Web server processes of `make run` (they share the pages' state through its local Redis).
    web_workers: int = Field(2, ge=1, le=64, validation_alias="BAYES_WEB_WORKERS")
    worker_processes: int = Field(1, ge=1, le=64, validation_alias="BAYES_WORKER_PROCESSES")
    worker_threads: int = Field(8, ge=1, le=256, validation_alias="BAYES_WORKER_THREADS")
    # Per worker process; 0 turns the guard off. 3 GiB: with the default single worker on a
    # 24 GiB / 2-core machine this leaves > 18 GiB for web, index, Redis and the page cache.
    worker_max_rss_mb: int = Field(3072, ge=0, le=1_000_000, validation_alias="BAYES_WORKER_MAX_RSS_MB")
    ingest_max_crashes: int = Field(3, ge=1, le=100, validation_alias="BAYES_INGEST_MAX_CRASHES")
    session_ttl_hours: int = Field(24 * 7, ge=1, validation_alias="BAYES_SESSION_TTL_HOURS")
    api_token_ttl_days: int = Field(90, ge=1, validation_alias="BAYES_API_TOKEN_TTL_DAYS")
    log_level: str = Field("INFO", validation_alias="BAYES_LOG_LEVEL")
    model_default_name: str | None = Field(None, validation_alias="BAYES_MODEL_DEFAULT")
    model_thinking_name: str | None = Field(None, validation_alias="BAYES_MODEL_THINKING")
    model_tools_name: str | None = Field(None, validation_alias="BAYES_MODEL_TOOLS")
    model_planner_name: str | None = Field(None, validation_alias="BAYES_MODEL_PLANNER")
    model_researcher_name: str | None = Field(None, validation_alias="BAYES_MODEL_RESEARCHER")
    model_critic_name: str | None = Field(None, validation_alias="BAYES_MODEL_CRITIC")
    model_writer_name: str | None = Field(None, validation_alias="BAYES_MODEL_WRITER")
    signup_credits: int = Field(10, ge=0, validation_alias="BAYES_SIGNUP_CREDITS")
    run_reserve_output_tokens: int = Field(2_000, ge=1, validation_alias="BAYES_RUN_RESERVE_OUTPUT_TOKENS")
    worker_poll_ms: int = Field(100, ge=10, le=10_000, validation_alias="BAYES_WORKER_POLL_MS")
    zotero_api_url: str = Field("https://api.zotero.org", validation_alias="ZOTERO_API_URL")
    zotero_local_url: str = Field("http://localhost:23119/api", validation_alias="BAYES_ZOTERO_LOCAL_URL")
    zotero_sync_minutes: float = Field(15, ge=0, le=7 * 24 * 60, validation_alias="BAYES_ZOTERO_SYNC_MINUTES")
    zotero_max_wait_s: float = Field(120, ge=0, le=3600, validation_alias="BAYES_ZOTERO_MAX_WAIT_S")
    zotero_lease_s: float = Field(60, ge=1, le=3600, validation_alias="BAYES_ZOTERO_LEASE_S")
    # ---- security (README: "Security settings") --------------------------------------
    cors_origins_raw: str = Field("", validation_alias="BAYES_CORS_ORIGINS")
    trusted_proxies_raw: str = Field("", validation_alias="BAYES_TRUSTED_PROXIES")
    login_max_failures: int = Field(5, ge=1, le=1000, validation_alias="BAYES_LOGIN_MAX_FAILURES")
    login_window_minutes: int = Field(15, ge=1, le=24 * 60, validation_alias="BAYES_LOGIN_WINDOW_MINUTES")
    password_hash_concurrency: int = Field(2, ge=1, le=64, validation_alias="BAYES_PASSWORD_HASH_CONCURRENCY")
    zotero_local: bool = Field(False, validation_alias="BAYES_ZOTERO_LOCAL")
    max_pages: int = Field(2_000, ge=1, le=1_000_000, validation_alias="BAYES_MAX_PAGES")
    # text bombs: characters taken from one page / one document before it fails
    max_page_chars: int = Field(200_000, ge=1_000, le=100_000_000, validation_alias="BAYES_MAX_PAGE_CHARS")
    max_document_chars: int = Field(10_000_000, ge=1_000, le=2_000_000_000, validation_alias="BAYES_MAX_DOCUMENT_CHARS")
    # the shape of one map (maps/tree.check_shape): adding or moving beyond either is refused
    map_max_depth: int = Field(100, ge=2, le=10_000, validation_alias="BAYES_MAP_MAX_DEPTH")
    map_max_nodes: int = Field(5_000, ge=2, le=1_000_000, validation_alias="BAYES_MAP_MAX_NODES")
    user_quota_mb: int = Field(2_000, ge=0, le=10_000_000, validation_alias="BAYES_USER_QUOTA_MB")
    # stored files no document references are removed by the periodic sweep once this old
    file_sweep_grace_hours: float = Field(24, ge=0, le=24 * 365, validation_alias="BAYES_FILE_SWEEP_GRACE_HOURS")
    # OCR of pages without a text layer (README: "Scanned papers"); 0 turns it off
    ocr: bool = Field(True, validation_alias="BAYES_OCR")
    # fair ingestion (library/fairness.py): documents of one owner read at once; large files
    # (over BAYES_INGEST_LARGE_MB) read at once by all; a waiting one is tried again this often
    ingest_per_user: int = Field(2, ge=1, le=256, validation_alias="BAYES_INGEST_PER_USER")
    ingest_large_slots: int = Field(4, ge=1, le=256, validation_alias="BAYES_INGEST_LARGE_SLOTS")
    ingest_large_mb: float = Field(8, ge=0, le=100_000, validation_alias="BAYES_INGEST_LARGE_MB")
    ingest_wait_ms: int = Field(2_000, ge=100, le=600_000, validation_alias="BAYES_INGEST_WAIT_MS")
    ocr_page_timeout_s: float = Field(60, ge=1, le=3600, validation_alias="BAYES_OCR_PAGE_TIMEOUT_S")
    # the most pixels one page is rendered with for OCR (library/ocr.render_dpi); 36 MP = A2 at 300 dpi
    ocr_max_pixels: int = Field(36_000_000, ge=1_000_000, le=1_000_000_000, validation_alias="BAYES_OCR_MAX_PIXELS")
    # living maps (docs/living-maps.md): a paper touches a map only above this relevance (MiniLM
    # cosine); arrivals are batched for this many seconds (longer while the user's library is still
    # indexing, up to the max); a theme with more claims than the threshold gets a split proposal
    living_relevance_floor: float = Field(0.45, ge=0, le=1, validation_alias="BAYES_LIVING_RELEVANCE_FLOOR")
    living_batch_s: float = Field(30, ge=0, le=3600, validation_alias="BAYES_LIVING_BATCH_S")
    living_batch_max_s: float = Field(1800, ge=0, le=86_400, validation_alias="BAYES_LIVING_BATCH_MAX_S")
    split_threshold: int = Field(12, ge=2, le=1_000, validation_alias="BAYES_SPLIT_THRESHOLD")
    # test/demo knob: pace the offline provider's output (ms per word) to watch slow runs
    offline_word_delay_ms: int = Field(0, ge=0, le=1_000, validation_alias="BAYES_OFFLINE_WORD_DELAY_MS")

    @field_validator("database_url")
    @classmethod
    def _check_db_url(cls, v: str | None) -> str | None:
        if v is None or v == "":
            return None
        if v.startswith("postgres://"):
            v = "postgresql://" + v[len("postgres://") :]
        if v.startswith("postgresql://"):
            v = "postgresql+psycopg://" + v[len("postgresql://") :]
        if not (v.startswith("sqlite:///") or v.startswith("postgresql+psycopg://")):
            raise ValueError("must be sqlite:///<path> or postgresql://user:pass@host/db")
        return v

    @field_validator("redis_url")
    @classmethod
    def _check_redis_url(cls, v: str | None) -> str | None:
        if not v:
            return None
        if not v.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must start with redis://, rediss:// or unix://")
        return v

    @field_validator("zotero_api_url", "zotero_local_url")
    @classmethod
    def _check_zotero_url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return v.rstrip("/")

    @field_validator("storage_url")
    @classmethod
    def _check_storage_url(cls, v: str | None) -> str | None:
        if not v:
            return None
        from bayes_app.library.storage import parse_s3_url

        parse_s3_url(v)
        return v.rstrip("/")

    @field_validator("qdrant_url", "openai_base_url", "s3_endpoint_url")
    @classmethod
    def _check_http_url(cls, v: str | None) -> str | None:
        if not v:
            return None
        if not v.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return v.rstrip("/")

    @field_validator("admin_email")
    @classmethod
    def _check_admin_email(cls, v: str) -> str:
        from bayes_app.accounts.passwords import normalize_email

        return normalize_email(v)

    @field_validator("admin_password")
    @classmethod
    def _check_admin_password(cls, v: SecretStr | None) -> SecretStr | None:
        if v is None or not v.get_secret_value():
            return None
        from bayes_app.accounts.passwords import check_password_strength

        check_password_strength(v.get_secret_value())
        return v

    @field_validator("cors_origins_raw")
    @classmethod
    def _check_cors(cls, v: str) -> str:
        for origin in _split(v):
            if origin == "*" or not origin.startswith(("http://", "https://")) or origin.count("/") != 2:
                raise ValueError(
                    "must be a comma-separated list of origins such as https://lab.example.org (no wildcard, no path)"
                )
        return v

    @field_validator("log_level")
    @classmethod
    def _check_log_level(cls, v: str) -> str:
        v = v.upper()
        if v not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ValueError("must be one of DEBUG, INFO, WARNING, ERROR")
        return v

    # ---- derived values -------------------------------------------------------------
    @property
    def cors_origins(self) -> list[str]:
        """Origins allowed to read the API with credentials (none by default: same origin only)."""
        return [o.rstrip("/") for o in _split(self.cors_origins_raw)]

    @property
    def trusted_proxies(self) -> list[str]:
        """Client addresses whose X-Forwarded-Proto/-Host headers are believed."""
        return _split(self.trusted_proxies_raw)

    @property
    def data_path(self) -> Path:
        """The data directory as an absolute path (relative paths are taken from the project root)."""
        p = self.data_dir.expanduser()
        return p if p.is_absolute() else (PROJECT_ROOT / p)

    @property
    def effective_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_path / 'bayes.db'}"

    @property
    def effective_redis_url(self) -> str:
        """REDIS_URL, else `make run`'s own redis-server with its generated password."""
        return self.redis_url or self.local_redis_url(0)

    def local_redis_url(self, db: int) -> str:
        """A database of `make run`'s own redis-server (0: queue, runs, sessions; 1: page state)."""
        return f"redis://:{self.redis_password()}@127.0.0.1:{self.redis_port}/{db}"

    def redis_password(self) -> str:
        """The local redis-server's `requirepass`, generated once into the data dir (mode 600)."""
        return self._stored_secret("redis_password", 32)

    @property
    def effective_qdrant_api_key(self) -> str | None:
        """QDRANT_API_KEY, else for the embedded index its generated key (data dir, mode 600)."""
        if self.qdrant_api_key is not None and self.qdrant_api_key.get_secret_value():
            return self.qdrant_api_key.get_secret_value()
        return self._stored_secret("index_api_key", 32) if self.runs_local_index else None

    @property
    def effective_qdrant_url(self) -> str:
        return self.qdrant_url or f"http://127.0.0.1:{self.index_port}"

    @property
    def runs_local_index(self) -> bool:
        """True when `make run` must start the embedded index process (no QDRANT_URL)."""
        return self.qdrant_url is None

    @property
    def model_default(self) -> str:
        """The model runs use: BAYES_MODEL_DEFAULT, else gpt-4o-mini with an endpoint, else offline."""
        if self.model_default_name:
            return self.model_default_name
        configured = self.openai_base_url or (self.openai_api_key and self.openai_api_key.get_secret_value())
        return "gpt-4o-mini" if configured else "offline"

    def model_for(self, role: str) -> str:
        """The model of one role (see ROLES); the default model when the role has none configured."""
        if self.model_default == "offline":
            return "offline"
        named = {
            "thinking": self.model_thinking_name,
            "tools": self.model_tools_name,
            "planner": self.model_planner_name,
            "researcher": self.model_researcher_name,
            "critic": self.model_critic_name,
            "writer": self.model_writer_name,
        }.get(role)
        return named or self.model_default

    def role_models(self) -> dict[str, str]:
        """The model of every role, for a run's input (each is priced when the run starts)."""
        return {role: self.model_for(role) for role in ROLES}

    @property
    def files_path(self) -> Path:
        return self.data_path / "files"

    @property
    def runs_local_redis(self) -> bool:
        """True when `make run` must start its own redis-server (no REDIS_URL given)."""
        return self.redis_url is None

    def secret(self) -> str:
        """The app's secret key: BAYES_SECRET_KEY, or one generated once into the data dir."""
        if self.secret_key is not None and self.secret_key.get_secret_value():
            return self.secret_key.get_secret_value()
        return self._stored_secret("secret_key", 48)

    def _stored_secret(self, name: str, nbytes: int) -> str:
        """`<data dir>/<name>`, created once with a random URL-safe value, readable by us only."""
        path = self.data_path / name
        if path.exists():
            return path.read_text().strip()
        path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_urlsafe(nbytes)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first
            return path.read_text().strip()
        try:
            os.write(fd, key.encode())
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        return key


def _describe(err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        name = ".".join(str(p) for p in e.get("loc", ())) or "settings"
        msg = e.get("msg", "invalid value").removeprefix("Value error, ")
        lines.append(f"Invalid setting {name}: {msg}")
    return "\n".join(lines)


def load_settings(**overrides: Any) -> Settings:
    """Read settings from the environment; raise SettingsError naming the bad variable."""
    try:
        return Settings(**overrides)
    except ValidationError as err:
        raise SettingsError(_describe(err)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (cached; call `get_settings.cache_clear()` in tests)."""
    return load_settings()
