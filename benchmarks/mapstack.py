"""Shared setup of the mindmap benchmarks: the whole app (`bayes_app.cli run`: web + worker +
index + Redis, offline provider) in a temp dir, a user with credits, Chromium signed in."""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.browser import CHROMIUM_ARGS, login  # noqa: F401  (re-exported)
from tests.support.procs import AppStack, free_port, stack_env

# Records, per canvas node id, the wall-clock ms when its element entered the DOM and when its
# title text last changed (performance.timeOrigin + now(): comparable with time.time()).
OBSERVER_JS = """
() => {
  window.__seen = {}; window.__titled = {};
  const now = () => performance.timeOrigin + performance.now();
  const mark = (el) => { const id = el.getAttribute && el.getAttribute('data-id');
                         if (id && el.classList.contains('react-flow__node') && !(id in window.__seen)) window.__seen[id] = now(); };
  document.querySelectorAll('.react-flow__node').forEach(mark);
  new MutationObserver((muts) => {
    for (const m of muts) {
      for (const n of m.addedNodes) {
        if (n.nodeType !== 1) continue;
        mark(n); n.querySelectorAll && n.querySelectorAll('.react-flow__node').forEach(mark);
      }
      if (m.type === 'characterData' || m.type === 'childList') {
        const t = (m.target.nodeType === 1 ? m.target : m.target.parentElement);
        const node = t && t.closest && t.closest('.react-flow__node');
        if (node) window.__titled[node.getAttribute('data-id')] = [now(), node.querySelector('.mm-title')?.textContent];
      }
    }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
}
"""


# Records, per id seen in a websocket frame from the backend, the wall-clock ms the frame arrived
# (installed before the page loads): splits "commit -> shown" into backend+network vs browser.
WS_TAP_JS = """
(() => {
  window.__wsSeen = {};
  const Native = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Native(...args);
    ws.addEventListener('message', (e) => {
      const t = performance.timeOrigin + performance.now();
      if (typeof e.data !== 'string') return;
      for (const m of e.data.matchAll(/\\\\?"id\\\\?":\\\\?"([0-9a-f-]{32,36})/g)) if (!(m[1] in window.__wsSeen)) window.__wsSeen[m[1]] = t;
    });
    return ws;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
})();
"""


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, int(round(p / 100 * len(s) + 0.5)) - 1))]


def summary(name: str, values: list[float]) -> str:
    return (
        f"{name}: n={len(values)} p50={pct(values, 50):.0f} ms p95={pct(values, 95):.0f} ms "
        f"max={max(values):.0f} ms mean={statistics.mean(values):.0f} ms"
    )


@contextmanager
def app(word_delay_ms: int = 0):
    tmp = Path(tempfile.mkdtemp(prefix="bayes-mapbench-"))
    port = free_port()
    env = stack_env(
        tmp,
        port,
        BAYES_ADMIN_EMAIL="root@example.com",
        BAYES_ADMIN_PASSWORD="Xk4-" + uuid.uuid4().hex[:12],
        BAYES_DEMO="0",
        BAYES_REDIS_PORT=str(free_port()),
        BAYES_OFFLINE_WORD_DELAY_MS=str(word_delay_ms),
    )
    stack = AppStack(data_dir=tmp, env=env, port=port).start()
    try:
        yield stack, f"sqlite:///{tmp / 'bayes.db'}"
    finally:
        stack.stop()


def make_user(db_url: str) -> tuple[str, str, str]:
    from bayes_app.accounts import service
    from bayes_app.credits import ledger
    from bayes_app.db import session_scope
    from bayes_app.models import MICRO

    email, password = f"b{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex[:12]
    with session_scope(db_url) as db:
        user = service.register(db, email, password)
        ledger.grant(db, user, 100 * MICRO, f"grant:{user.id}", "bench")
        return user.id, email, password


def upload_and_index(base: str, email: str, password: str, paths: list[Path]) -> dict:
    import httpx

    c = httpx.Client(base_url=base + "/api/v1", timeout=60)
    h = {
        "Authorization": "Bearer " + c.post("/auth/token", json={"email": email, "password": password}).json()["token"]
    }
    for p in paths:
        c.post("/documents", files={"file": (p.name, p.read_bytes(), "application/pdf")}, headers=h).raise_for_status()
    deadline = time.time() + 600
    while time.time() < deadline:
        docs = c.get("/documents", headers=h).json()["documents"]
        if docs and all(d["status"] == "indexed" for d in docs):
            return h
        time.sleep(1)
    raise RuntimeError("library not indexed")
