"""Real services for tests: redis-server, a throwaway PostgreSQL 15 cluster, the app stack."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def _port_block() -> range:
    """This test process's own block of ports, below the kernel's ephemeral range.

    A port taken from the ephemeral range (bind to 0) is free only until the server binds
    it seconds later; meanwhile any outgoing connection on the machine may be given it. Ports
    below that range are never handed out, and each xdist worker draws from its own block."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    n = int(worker) if worker.isdigit() else 0
    size = 2000
    start = max(1024, low - size * (n % 6 + 1))
    return range(start, start + size)


_PORTS = _port_block()
# The first port of the block is the app stacks' (`stack_port`); the rest are handed out once.
_STACK_PORT = _PORTS[0]
_next_port = [os.getpid() % len(_PORTS)]  # another session does not begin where this one began


def _bindable(port: int, reuse: bool = False) -> bool:
    """No one listens on `port`; with `reuse`, connections of a server that just stopped
    (TIME_WAIT) do not count, as for a server binding with SO_REUSEADDR (uvicorn, granian)."""
    for host in ("0.0.0.0", "127.0.0.1"):
        with socket.socket() as s:
            if reuse:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def free_port() -> int:
    """A port no one listens on, from this worker's block (never reused within a session)."""
    for _ in range(len(_PORTS)):
        port = _PORTS[_next_port[0] % len(_PORTS)]
        _next_port[0] += 1
        if port != _STACK_PORT and _bindable(port):
            return port
    raise RuntimeError(f"no free port in {_PORTS}")


def stack_port() -> int:
    """The port of the app stacks this test process boots: the same port every time, so a stack
    whose pages did not change serves the previous stack's frontend build instead of building it
    again (bayes_app/procs/web.py: the port is part of the build, 35-55 s on this machine). Stacks
    tests start themselves run before the shared app (tests/support/ordering.py orders them first) and one at a
    time, so in practice one build serves all of a worker's stacks. A fresh port if something else
    holds it (the shared app, when a test starts a stack of its own beside it)."""
    return _STACK_PORT if _bindable(_STACK_PORT, reuse=True) else free_port()


class Fatal(Exception):
    """Raised by a wait_for predicate to stop waiting at once."""


def wait_for(predicate, timeout: float, interval: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout
    last_err = None
    while time.monotonic() < deadline:
        try:
            result = predicate()
            if result:
                return result
        except Fatal:
            raise
        except Exception as err:  # noqa: BLE001
            last_err = err
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what} (last error: {last_err})")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class RedisServer:
    """A real redis-server on a free port; can be stopped and restarted on the same port."""

    workdir: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None
    persist: bool = False  # append-only file (fsync always): data survives restart()
    # like `make run`'s, it requires a password (from a mode-600 config file, not argv)
    password: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def url(self) -> str:
        return self.url_db(0)

    def url_db(self, db: int) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/{db}"

    def start(self) -> RedisServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        aof = ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else ["--appendonly", "no"]
        conf = self.workdir / "redis.conf"
        conf.write_text(f"requirepass {self.password}\n")
        conf.chmod(0o600)
        self.proc = subprocess.Popen(
            [
                "redis-server",
                str(conf),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                *aof,
                "--dir",
                str(self.workdir),
                "--loglevel",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: _port_open(self.port), 10, what="redis-server")
        return self

    def stop(self, kill: bool = False) -> None:
        """SIGTERM (clean shutdown) or SIGKILL (crash) the server; wait until its port closes."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill() if kill else self.proc.terminate()
            self.proc.wait(10)
        wait_for(lambda: not _port_open(self.port), 10, what="redis-server to stop")

    def restart(self, down_s: float = 0.0, kill: bool = False) -> float:
        """Stop the server, stay down `down_s`, start it again on the same port and data
        dir; returns how long the port was closed (seconds)."""
        self.stop(kill=kill)
        t0 = time.monotonic()
        time.sleep(down_s)
        self.start()
        return time.monotonic() - t0


@dataclass
class PgCluster:
    """A throwaway PostgreSQL cluster made with initdb/pg_ctl under a temp dir."""

    workdir: Path
    port: int = field(default_factory=free_port)

    def _bin(self, name: str) -> str:
        found = shutil.which(name)
        if found:
            return found
        cands = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
        if not cands:
            raise RuntimeError(f"PostgreSQL tool {name} not found (apt-get install postgresql)")
        return str(cands[-1])

    def _run(self, *args: str) -> None:
        cmd = list(args)
        if os.geteuid() == 0:  # initdb/postgres refuse to run as root
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    @property
    def datadir(self) -> Path:
        return self.workdir / "data"

    def start(self) -> PgCluster:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.workdir, "postgres", "postgres")
            os.chmod(self.workdir, 0o755)
        self._run(
            self._bin("initdb"), "-D", str(self.datadir), "-U", "bayes", "--auth=trust", "-E", "UTF8", "--no-sync"
        )
        self._run(
            self._bin("pg_ctl"),
            "-D",
            str(self.datadir),
            "-w",
            "-l",
            str(self.workdir / "pg.log"),
            "-o",
            f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
            "start",
        )
        return self

    def stop(self) -> None:
        with suppress(subprocess.CalledProcessError):
            self._run(self._bin("pg_ctl"), "-D", str(self.datadir), "-m", "immediate", "-w", "stop")

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql+psycopg://bayes@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str, template: str | None = None) -> str:
        """A new database `name`, empty or a copy of `template` (which must have no connections)."""
        import psycopg

        with psycopg.connect(f"postgresql://bayes@127.0.0.1:{self.port}/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return self.url(name)


@dataclass
class AppStack:
    """The whole process set started exactly as `make run` does (bayes_app.cli run)."""

    data_dir: Path
    env: dict
    port: int
    proc: subprocess.Popen | None = None
    log_path: Path | None = None
    _admin_token: str | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 900) -> AppStack:
        from tests.support.frontend import shared_build

        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / "stack.log"
        with shared_build(Path(self.env["REFLEX_WEB_WORKDIR"]), self.port):
            self._start(timeout)
        return self

    def _start(self, timeout: float) -> None:
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bayes_app.cli", "run"],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

        def healthy() -> bool:
            if self.proc.poll() is not None:
                raise Fatal(f"stack exited early:\n{self.log_tail()}")
            r = httpx.get(f"{self.url}/api/v1/health", timeout=5)
            return r.status_code == 200 and r.json()["status"] == "ok"

        try:
            wait_for(healthy, timeout, interval=1, what=f"the app on {self.url}")
        except BaseException:
            print(self.log_tail())
            self.stop()
            raise

    def log_tail(self, n: int = 60) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def stop(self, sig: int = signal.SIGINT) -> int | None:
        """Ctrl-C (or `sig`) the supervisor, as a user would; returns its exit code."""
        if not self.proc or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            return self.proc.wait(10)

    # ---- the supervisor (`bayes_app.procs`) --------------------------------------------------
    def supervisor(self):
        """XML-RPC proxy of this stack's supervisord (`.supervisor.getProcessInfo(...)`...)."""
        from bayes_app.procs.status import rpc

        secret = (self.data_dir / "secret_key").read_text().strip()
        return rpc(self.data_dir, secret, timeout=5).supervisor

    def program_pid(self, name: str) -> int:
        """The pid of a RUNNING program ("web", "index", "redis", "worker:worker_0")."""
        info = self.supervisor().getProcessInfo(name)
        if info["statename"] != "RUNNING" or not info["pid"]:
            raise RuntimeError(f"{name} is {info['statename']}")
        return info["pid"]

    def worker_child(self, name: str = "worker:worker_0") -> int:
        """The pid of the Dramatiq worker process (the child of the `dramatiq` main process)
        that does the work: what the kernel's OOM killer would pick."""
        import psutil

        kids = psutil.Process(self.program_pid(name)).children()
        if not kids:
            raise RuntimeError(f"{name} has no worker process yet")
        return kids[0].pid

    @property
    def index_api_key(self) -> str:
        """The API key `make run` generated for its embedded index (the index requires it)."""
        return (self.data_dir / "index_api_key").read_text().strip()

    def admin_headers(self) -> dict[str, str]:
        """A Bearer token of the stack's administrator (made in its database once)."""
        if self._admin_token is None:
            from datetime import timedelta

            from sqlmodel import select

            from bayes_app.accounts import service
            from bayes_app.db import session_scope
            from bayes_app.models import User

            url = self.env.get("DATABASE_URL") or f"sqlite:///{self.data_dir / 'bayes.db'}"
            with session_scope(url) as db:
                admin = db.exec(select(User).where(User.is_admin == True)).first()
                self._admin_token = service.create_api_token(db, admin, timedelta(days=1), name="tests")[1]
        return {"Authorization": f"Bearer {self._admin_token}"}

    def health(self) -> dict:
        """The full health report (an administrator's view)."""
        return httpx.get(f"{self.url}/api/v1/health", headers=self.admin_headers(), timeout=10).json()


def processes_of(data_dir: Path) -> list:
    """Live processes started for this data dir (their environment names it): after a stop
    this must be empty, whatever restarts happened in between."""
    import psutil

    out = []
    for proc in psutil.process_iter():
        try:
            if (
                proc.environ().get("BAYES_DATA_DIR") == str(data_dir)
                and proc.status() != psutil.STATUS_ZOMBIE
                and proc.pid != os.getpid()
            ):
                out.append(proc)
        except psutil.Error:
            continue
    return out


def web_workdir(port: int) -> Path:
    """The Reflex build directory (`REFLEX_WEB_WORKDIR`) of a stack on `port` booted by this test
    process (xdist worker): one per port, since the build embeds its stack's port and a running
    stack serves from its directory — two stacks never build into one."""
    return ROOT / ".web-tests" / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{port}"


def stack_env(data_dir: Path, port: int, **extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("BAYES_", "DATABASE_URL", "REDIS_URL", "QDRANT_URL", "OPENAI_"))
    }
    env.update(
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        BAYES_DATA_DIR=str(data_dir),
        BAYES_PORT=str(port),
        REFLEX_USE_NPM="1",
        REFLEX_WEB_WORKDIR=str(web_workdir(port)),
        BAYES_INDEX_PORT=str(free_port()),
        REFLEX_TELEMETRY_ENABLED="false",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def start_index(workdir: Path, port: int, log_path: Path) -> subprocess.Popen:
    """The embedded index process (Qdrant REST subset over qdrant-edge) on `port`."""
    with open(log_path, "w") as log_out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bayes_app.search.index_server",
                "--path",
                str(workdir),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=ROOT,
            stdout=log_out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    wait_for(lambda: _port_open(port), 30, what="index server")
    return proc


def start_worker(env: dict, log_path: Path) -> subprocess.Popen:
    """A real `dramatiq jobs` worker process."""
    return subprocess.Popen(
        [str(VENV_BIN / "dramatiq"), "jobs", "--processes", "1", "--threads", "2", "--worker-shutdown-timeout", "2000"],
        cwd=ROOT,
        env=env,
        stdout=open(log_path, "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def restore_env(saved: dict[str, str | None]) -> None:
    """Put back environment variables saved as {name: value or None (was unset)}."""
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@contextmanager
def index_process(tmp: Path) -> Iterator[Path]:
    """A real index process under `tmp`; meanwhile this process's settings (QDRANT_URL,
    BAYES_DATA_DIR) point at it and the search runtime is fresh. Yields `tmp`."""
    from bayes_app import settings
    from bayes_app.search import runtime

    port = free_port()
    proc = start_index(tmp / "index", port, tmp / "index.log")
    saved = {k: os.environ.get(k) for k in ("QDRANT_URL", "BAYES_DATA_DIR")}
    os.environ.update(QDRANT_URL=f"http://127.0.0.1:{port}", BAYES_DATA_DIR=str(tmp))
    settings.get_settings.cache_clear()
    runtime.reset()
    try:
        yield tmp
    finally:
        runtime.reset()
        restore_env(saved)
        settings.get_settings.cache_clear()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
