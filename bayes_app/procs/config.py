"""supervisord.conf for `make run`: where its files live and what it runs, with which policy.

Every program is restarted whenever it exits (`autorestart=true`); one that dies within
`startsecs` of its start counts as a failed start and is retried after 1 s, 2 s, 3 s, …
(`startretries` times, then FATAL, which /api/v1/health reports). Stopping sends the signal to
the program's whole process group and SIGKILLs what is left after `stopwaitsecs`, so Ctrl-C
leaves nothing behind.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bayes_app.settings import PROJECT_ROOT, Settings

# A worker process that exits with this code was recycled on purpose (memory ceiling):
# supervisord records the exit as expected; the health report does not count it as a crash.
RECYCLE_EXIT_CODE = 75
# supervisord's `startsecs` for a worker: an exit sooner than this after its start is a failed
# start (BACKOFF), whatever the exit code
WORKER_STARTSECS = 2
RPC_USER = "bayes"
_SOCKET_MAX = 100  # AF_UNIX paths are limited to 108 bytes


@dataclass(frozen=True)
class Paths:
    dir: Path
    conf: Path
    socket: Path
    log: Path
    events: Path
    pid: Path


def paths(data_path: Path) -> Paths:
    d = data_path / "supervisor"
    sock = d / "supervisord.sock"
    if len(str(sock)) > _SOCKET_MAX:
        digest = hashlib.sha256(str(data_path).encode()).hexdigest()[:16]
        sock = Path(tempfile.gettempdir()) / f"bayes-supervisor-{digest}.sock"
    return Paths(
        dir=d,
        conf=d / "supervisord.conf",
        socket=sock,
        log=d / "supervisord.log",
        events=d / "events.jsonl",
        pid=d / "supervisord.pid",
    )


def rpc_password(secret: str) -> str:
    """The XML-RPC password, derived from the app secret so web can compute it too."""
    return hmac.new(secret.encode(), b"bayes-supervisor-rpc", hashlib.sha256).hexdigest()[:32]


@dataclass(frozen=True)
class Program:
    name: str
    command: str
    priority: int  # started in ascending, stopped in descending order
    startsecs: int = 3
    startretries: int = 10
    stopwaitsecs: int = 10
    numprocs: int = 1
    exitcodes: str = "0"
    # Stop signal to the whole process group, or only to the program (which then stops its
    # own children); the SIGKILL after `stopwaitsecs` always reaches the group.
    stopasgroup: bool = True


def redis_conf(settings: Settings) -> Path:
    """The local redis-server's config file (mode 600): its generated `requirepass`, which
    must not appear on a command line that every local user can list."""
    path = settings.data_path / "redis" / "redis.conf"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(f"requirepass {settings.redis_password()}\n")
    os.chmod(path, 0o600)
    return path


def programs(settings: Settings, *, dev: bool = False) -> list[Program]:
    """The processes `make run` supervises (no redis / index when REDIS_URL / QDRANT_URL is set)."""
    bin_dir = Path(sys.executable).parent
    py = shlex.quote(sys.executable)
    reflex = shlex.quote(str(bin_dir / "reflex"))
    dramatiq = shlex.quote(str(bin_dir / "dramatiq"))
    out: list[Program] = []
    if settings.runs_local_redis:
        redis_dir = settings.data_path / "redis"
        redis_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        conf = redis_conf(settings)
        out.append(
            Program(
                "redis",
                f"redis-server {shlex.quote(str(conf))} --port {settings.redis_port} --bind 127.0.0.1"
                f" --protected-mode yes --dir {shlex.quote(str(redis_dir))} --appendonly yes --save ''"
                " --loglevel warning",
                priority=10,
                startsecs=1,
            )
        )
    if settings.runs_local_index:
        index_dir = shlex.quote(str(settings.data_path / "index"))
        _ = settings.effective_qdrant_api_key  # generated into the data dir on first use
        key_file = shlex.quote(str(settings.data_path / "index_api_key"))
        out.append(
            Program(
                "index",
                f"{py} -m bayes_app.search.index_server --path {index_dir}"
                f" --host 127.0.0.1 --port {settings.index_port} --api-key-file {key_file}",
                priority=20,
                startsecs=2,
                stopwaitsecs=20,
            )
        )
    watch = f" --watch {shlex.quote(str(PROJECT_ROOT / 'bayes_app'))}" if dev else ""
    # One Dramatiq process per worker: Dramatiq's own pool shuts everything down when one of
    # its processes dies, so the supervisor restarts each worker on its own instead.
    out.append(
        Program(
            "worker",
            f"{dramatiq} jobs --processes 1 --threads {settings.worker_threads} --worker-shutdown-timeout 5000{watch}",
            priority=30,
            startsecs=WORKER_STARTSECS,
            stopwaitsecs=15,
            numprocs=settings.worker_processes,
            exitcodes=f"0,{RECYCLE_EXIT_CODE}",
            # Dramatiq's main process forwards SIGTERM to its worker process; a second SIGTERM
            # from the group signal makes that process `sys.exit` from the signal handler while
            # its worker threads run on, so it hung until the SIGKILL (15 s) on every stop.
            stopasgroup=False,
        )
    )
    if dev:
        web = f"{reflex} run --env dev --frontend-port {settings.port} --backend-port 8000"
    else:
        web = f"{py} -m bayes_app.procs.web {settings.port}"  # reflex run --env prod, built only when changed
    out.append(Program("web", web, priority=40, startsecs=5, stopwaitsecs=15))
    return out


def _esc(value: str) -> str:
    return value.replace("%", "%%")  # supervisord expands %(name)s in values


def render(settings: Settings, *, dev: bool = False) -> str:
    """The whole supervisord.conf (nodaemon: `make run` stays in the foreground)."""
    p = paths(settings.data_path)
    password = rpc_password(settings.secret())
    lines = [
        "; Generated by `python -m bayes_app.cli run` at every start; edits are overwritten.",
        "[supervisord]",
        "nodaemon=true",
        *([f"user={getpass.getuser()}"] if os.geteuid() == 0 else []),  # says "root is meant"
        f"logfile={_esc(str(p.log))}",
        "logfile_maxbytes=5MB",
        "logfile_backups=2",
        "loglevel=info",
        f"pidfile={_esc(str(p.pid))}",
        f"childlogdir={_esc(str(p.dir))}",
        f"directory={_esc(str(PROJECT_ROOT))}",
        "",
        "[unix_http_server]",
        f"file={_esc(str(p.socket))}",
        "chmod=0700",
        f"username={RPC_USER}",
        f"password={password}",
        "",
        "[rpcinterface:supervisor]",
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface",
        "",
        "[supervisorctl]",
        f"serverurl=unix://{_esc(str(p.socket))}",
        f"username={RPC_USER}",
        f"password={password}",
        "",
        # Records exits and stops what a dead program left behind; it starts first, stops last.
        "[eventlistener:watchdog]",
        f"command={_esc(shlex.quote(sys.executable))} -m bayes_app.procs.listener",
        "events=PROCESS_STATE",
        "buffer_size=1000",
        "priority=1",
        "autorestart=true",
        "startsecs=1",
        "stopasgroup=true",
        "killasgroup=true",
        "stderr_logfile=/dev/stdout",
        "stderr_logfile_maxbytes=0",
        "",
    ]
    for prog in programs(settings, dev=dev):
        lines += [f"[program:{prog.name}]", f"command={_esc(prog.command)}"]
        if prog.numprocs > 1 or prog.name == "worker":
            lines += ["process_name=%(program_name)s_%(process_num)d", f"numprocs={prog.numprocs}"]
        lines += [
            f"priority={prog.priority}",
            "autostart=true",
            "autorestart=true",
            f"startsecs={prog.startsecs}",
            f"startretries={prog.startretries}",
            f"exitcodes={prog.exitcodes}",
            "stopsignal=TERM",
            f"stopwaitsecs={prog.stopwaitsecs}",
            f"stopasgroup={str(prog.stopasgroup).lower()}",
            "killasgroup=true",
            "umask=077",  # data files stay private (as `cli run` sets for itself)
            "redirect_stderr=true",
            "stdout_logfile=/dev/stdout",
            "stdout_logfile_maxbytes=0",
            "",
        ]
    return "\n".join(lines)
