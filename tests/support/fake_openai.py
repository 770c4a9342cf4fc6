"""A scripted OpenAI-compatible HTTP server for tests (Starlette + uvicorn, 127.0.0.1).

It speaks the real wire protocol of `POST /v1/chat/completions` (SSE when `stream`, a
JSON body otherwise) and `GET /v1/models`. Each request consumes one `Script`:

- by name: header `X-Fake-Script: NAME`, or the marker `NAME` appearing in the last user
  message, selects the first queued script with `match == NAME`;
- otherwise the first queued script without `match` (FIFO);
- otherwise, in-process, `responder(body)` when given (a Script computed from the request, e.g.
  a scripted model that quotes the passages it is sent; None falls through);
- otherwise `default` (a short reply; `None` makes an empty queue a 500).

A script streams reasoning deltas (`reasoning_content`), text deltas, tool-call deltas
(id and name first, arguments in fragments), a finish chunk and, when the request asked
`stream_options.include_usage`, the usage chunk (`choices: []`), at `tokens_per_s`; or it
fails with `status` (+ `Retry-After`), stalls (`stall_s` after `stall_at` deltas), or cuts
the connection after `cut_after` deltas without usage. `refuse_formats` makes the endpoint
refuse some `response_format` kinds (like a server without structured output), before any
script is consumed.

Every request is recorded (body, headers, chunks sent, completed, and whether and when the
client disconnected: `disconnected_at` on the `time.monotonic()` clock, which is
system-wide on Linux and so comparable across processes).

In-process:      with FakeOpenAI() as server: server.script(Script.reply("hi")); server.base_url
Another process: with FakeOpenAIProcess() as server: ...   (same API, over HTTP)
                 python -m tests.support.fake_openai --port P [--script-file F.json]
                 (prints `READY <url>` once listening; --port 0 picks a free port)
                 then POST /_script (a script, a list, or {"scripts": [...]}), GET /_requests,
                 POST /_reset; RemoteFakeOpenAI(url) is the client for that.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import logging
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

_WORD = re.compile(r"\s*\S+\s*|\s+")


# ---- scripts ---------------------------------------------------------------------------------
@dataclass
class ToolCallScript:
    name: str
    arguments: str | dict[str, Any] = "{}"
    id: str | None = None
    fragments: int = 3  # the arguments string is split into this many deltas

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Script:
    """One scripted response (JSON-serialisable, so it can be pushed over HTTP)."""

    text: str | list[str] = ""  # a string is split into word deltas; a list is sent as given
    reasoning: str | list[str] = ""
    tool_calls: list[ToolCallScript] = field(default_factory=list)
    tokens_per_s: float | None = None  # None: as fast as possible
    finish_reason: str | None = None  # default: "tool_calls" with tool calls, else "stop"
    usage: bool = True  # send the usage chunk when the request asks for it
    prompt_tokens: int | None = None  # default: words in the request's messages
    completion_tokens: int | None = None  # default: deltas sent
    cached_tokens: int = 0
    status: int = 200
    retry_after: str | None = None
    error_message: str | None = None
    echo_auth: bool = False  # put the request's Authorization header into the error message
    headers_delay_s: float = 0.0  # wait before sending the response headers
    stall_s: float = 0.0  # send nothing for this long ...
    stall_at: int = 0  # ... after this many deltas
    cut_after: int | None = None  # drop the connection after this many deltas (no usage, no [DONE])
    match: str | None = None
    times: int = 1  # how many requests it answers; -1 = every one
    model: str | None = None  # default: the request's model

    def __post_init__(self) -> None:
        self.tool_calls = [t if isinstance(t, ToolCallScript) else ToolCallScript(**t) for t in self.tool_calls]

    @classmethod
    def thinking(cls, match: str | None = None, text: str = "Let me look this up in the library.", **kw: Any) -> Script:
        """The reply to the Ask agent's first call (phase 1, streamed as reasoning)."""
        return cls(reasoning=text, match=match, **kw)

    @classmethod
    def reply(cls, text: str, **kw: Any) -> Script:
        return cls(text=text, **kw)

    @classmethod
    def error(
        cls, status: int, retry_after: float | str | None = None, message: str | None = None, **kw: Any
    ) -> Script:
        ra = None if retry_after is None else str(retry_after)
        return cls(status=status, retry_after=ra, error_message=message, **kw)

    @classmethod
    def tool_call(cls, name: str, arguments: str | dict[str, Any], **kw: Any) -> Script:
        fragments = kw.pop("fragments", 3)
        call = ToolCallScript(name=name, arguments=arguments, id=kw.pop("call_id", None), fragments=fragments)
        return cls(tool_calls=[call], **kw)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Script:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown script fields: {sorted(unknown)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pieces(value: str | list[str]) -> list[str]:
    return list(value) if isinstance(value, list) else _WORD.findall(value)


def _split(text: str, n: int) -> list[str]:
    n = max(1, min(n, len(text) or 1))
    size = -(-len(text) // n) if text else 0
    return [text[i : i + size] for i in range(0, len(text), size)] if text else [""]


def _last_user_text(body: dict[str, Any]) -> str:
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") == "user":
            c = msg.get("content")
            if isinstance(c, list):
                return " ".join(p.get("text", "") for p in c if isinstance(p, dict))
            return str(c or "")
    return ""


def _prompt_words(body: dict[str, Any]) -> int:
    return sum(len(json.dumps(m.get("content", "")).split()) for m in body.get("messages") or [])


# ---- state ------------------------------------------------------------------------------------
def format_key(body: dict[str, Any]) -> str | None:
    """The kind of `response_format` a request asks for: json_schema, json_object_schema
    (JSON mode with a `schema`, llama-cpp-python's form), json_object, or None."""
    fmt = body.get("response_format")
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_object" and "schema" in fmt:
        return "json_object_schema"
    return str(fmt.get("type"))


class _State:
    def __init__(self, default: Script | None, responder: Any = None) -> None:
        self.lock = threading.Lock()
        self.queue: list[Script] = []
        self.records: list[dict[str, Any]] = []
        self.default = default
        self.responder = responder
        # response formats this endpoint does not take → (status, message), like servers that
        # lack structured output (llama-cpp-python answers json_schema with HTTP 500)
        self.refuse: dict[str, tuple[int, str]] = {}

    def push(self, scripts: list[Script]) -> None:
        with self.lock:
            self.queue.extend(copy.deepcopy(scripts))  # `times` counts down on our copy

    def reset(self) -> None:
        with self.lock:
            self.queue.clear()
            self.records.clear()
            self.refuse.clear()

    def take(self, body: dict[str, Any], headers: dict[str, str]) -> Script | None:
        wanted = headers.get("x-fake-script")
        last_user = _last_user_text(body)
        with self.lock:
            pick = None
            for s in self.queue:
                if s.match is not None and (s.match == wanted or (wanted is None and s.match in last_user)):
                    pick = s
                    break
            if pick is None and wanted is None:
                pick = next((s for s in self.queue if s.match is None), None)
            if pick is None:
                made = self.responder(body) if self.responder is not None else None
                return made if made is not None else copy.deepcopy(self.default)
            if pick.times > 0:
                pick.times -= 1
                if pick.times == 0:
                    self.queue.remove(pick)
            return copy.deepcopy(pick)

    def record(self, path: str, body: Any, headers: dict[str, str]) -> dict[str, Any]:
        rec = {
            "index": 0,
            "path": path,
            "body": body,
            "headers": headers,
            "status": None,
            "received_at": time.monotonic(),
            "received_wall": time.time(),
            "chunks_sent": 0,
            "completed": False,
            "cut": False,
            "disconnected": False,
            "disconnected_at": None,
            "ended_at": None,
        }
        with self.lock:
            rec["index"] = len(self.records)
            self.records.append(rec)
        return rec

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return copy.deepcopy(self.records)


class _Cut(Exception):
    """Raised to make uvicorn drop the connection mid-response."""


class _QuietCut(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, _Cut)


# ---- the app ------------------------------------------------------------------------------------
class _ChatCompletions:
    """Raw ASGI endpoint: full control over chunks, stalls, cuts and disconnect detection."""

    def __init__(self, state: _State) -> None:
        self.state = state

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        raw = b""
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            raw += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        rec = self.state.record(scope["path"], body, headers)
        refused = self.state.refuse.get(format_key(body) or "") if isinstance(body, dict) else None
        if refused is not None:  # refused before any script is consumed
            status, message = refused
            await self._send_json(
                send, status, {"error": {"message": message, "type": "fake_error", "code": str(status)}}
            )
            rec["status"], rec["completed"], rec["ended_at"] = status, True, time.monotonic()
            return
        script = self.state.take(body, headers) if isinstance(body, dict) else None

        disconnected = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            if not rec["completed"]:
                rec["disconnected_at"] = time.monotonic()
                rec["disconnected"] = True
            disconnected.set()

        watcher = asyncio.create_task(watch())
        try:
            await self._respond(script, body, headers, rec, send, disconnected)
        except _Cut:
            rec["cut"] = True
            raise
        finally:
            rec["ended_at"] = time.monotonic()
            watcher.cancel()

    async def _respond(
        self,
        script: Script | None,
        body: dict,
        headers: dict[str, str],
        rec: dict,
        send: Any,
        disconnected: asyncio.Event,
    ) -> None:
        if script is None:
            script = Script.error(500, message="fake_openai: no script queued")
        if await _pause(disconnected, script.headers_delay_s):
            return
        if script.status != 200:
            message = script.error_message or f"scripted error {script.status}"
            if script.echo_auth:
                message += f" (got {headers.get('authorization', '')})"
            err = {"error": {"message": message, "type": "fake_error", "code": str(script.status)}}
            extra = [(b"retry-after", script.retry_after.encode())] if script.retry_after else []
            await self._send_json(send, script.status, err, extra)
            rec["status"] = script.status
            rec["completed"] = True
            return
        reply = _Reply(script, body, rec, send, disconnected)
        if body.get("stream"):
            await reply.stream()
        else:
            await reply.whole(self._send_json)

    @staticmethod
    async def _send_json(
        send: Any, status: int, payload: Any, extra_headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
                + (extra_headers or []),
            }
        )
        await send({"type": "http.response.body", "body": data, "more_body": False})


async def _pause(disconnected: asyncio.Event, seconds: float) -> bool:
    """Sleep unless the client goes away; True when it did."""
    if seconds <= 0:
        return disconnected.is_set()
    try:
        await asyncio.wait_for(disconnected.wait(), seconds)
    except TimeoutError:
        return False
    return True


class _Reply:
    """One scripted completion (reasoning, text, tool calls), sent whole or streamed chunk by chunk."""

    def __init__(self, script: Script, body: dict, rec: dict, send: Any, disconnected: asyncio.Event) -> None:
        self.script, self.body, self.rec, self.send, self.disconnected = script, body, rec, send, disconnected
        self.model = script.model or body.get("model", "fake-model")
        self.cid = "chatcmpl-" + uuid.uuid4().hex[:12]
        self.created = int(time.time())
        self.reasoning = _pieces(script.reasoning)
        self.text = _pieces(script.text)
        self.calls = []
        for i, tc in enumerate(script.tool_calls):
            self.calls.append(
                (i, tc.id or f"call_{uuid.uuid4().hex[:10]}", tc.name, _split(tc.arguments_json(), tc.fragments))
            )
        n_deltas = len(self.reasoning) + len(self.text) + sum(1 + len(c[3]) for c in self.calls)
        self.usage = {
            "prompt_tokens": script.prompt_tokens if script.prompt_tokens is not None else _prompt_words(body),
            "completion_tokens": script.completion_tokens if script.completion_tokens is not None else n_deltas,
            "prompt_tokens_details": {"cached_tokens": script.cached_tokens},
        }
        self.usage["total_tokens"] = self.usage["prompt_tokens"] + self.usage["completion_tokens"]
        self.finish = script.finish_reason or ("tool_calls" if self.calls else "stop")
        self.include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    async def whole(self, send_json: Any) -> None:
        """The completion as one JSON body."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning)
        if self.calls:
            message["tool_calls"] = [
                {"id": c[1], "type": "function", "function": {"name": c[2], "arguments": "".join(c[3])}}
                for c in self.calls
            ]
        if await _pause(self.disconnected, self.script.stall_s):
            return
        await send_json(
            self.send,
            200,
            {
                "id": self.cid,
                "object": "chat.completion",
                "created": self.created,
                "model": self.model,
                "usage": self.usage,
                "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
            },
        )
        self.rec["status"] = 200
        self.rec["completed"] = True

    async def stream(self) -> None:
        """The completion as server-sent events, paced, stalled or cut as scripted."""
        deltas = self._deltas()
        await self.send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")],
            }
        )
        self.rec["status"] = 200
        if not await self._emit(self._chunk({"role": "assistant", "content": ""})):
            return
        if not await self._send_deltas(deltas):
            return
        if self.script.cut_after is not None:
            raise _Cut()
        tail = self._tail()
        if self.disconnected.is_set():
            return
        self.rec["completed"] = True
        await self.send({"type": "http.response.body", "body": tail, "more_body": False})

    def _chunk(self, delta: dict[str, Any] | None, finish_reason: str | None = None) -> bytes:
        data: dict[str, Any] = {
            "id": self.cid,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}],
        }
        if self.include_usage:
            data["usage"] = None
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    def _deltas(self) -> list[bytes]:
        chunk = self._chunk
        deltas: list[bytes] = [chunk({"reasoning_content": r}) for r in self.reasoning]
        deltas += [chunk({"content": t}) for t in self.text]
        for index, call_id, name, frags in self.calls:
            deltas.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
            deltas += [chunk({"tool_calls": [{"index": index, "function": {"arguments": f}}]}) for f in frags]
        return deltas

    async def _emit(self, data: bytes) -> bool:
        if self.disconnected.is_set():
            return False
        await self.send({"type": "http.response.body", "body": data, "more_body": True})
        return True

    async def _send_deltas(self, deltas: list[bytes]) -> bool:
        """The deltas at the scripted pace; False when the client went away."""
        script = self.script
        interval = 1.0 / script.tokens_per_s if script.tokens_per_s else 0.0
        for i, data in enumerate([*deltas, None]):
            if i == script.stall_at and script.stall_s and await _pause(self.disconnected, script.stall_s):
                return False
            if data is None:
                break
            if not await self._send_delta(i, data, interval):
                return False
        return True

    async def _send_delta(self, i: int, data: bytes, interval: float) -> bool:
        if self.script.cut_after is not None and i >= self.script.cut_after:
            raise _Cut()
        if i and await _pause(self.disconnected, interval):
            return False
        if not await self._emit(data):
            return False
        self.rec["chunks_sent"] += 1
        if not interval:
            await asyncio.sleep(0)  # let the disconnect watcher run
        return True

    def _tail(self) -> bytes:
        """The last chunk (the finish reason), the usage chunk when asked for, and [DONE]."""
        tail = self._chunk({}, self.finish)
        if self.include_usage and self.script.usage:
            tail += (
                b"data: "
                + json.dumps(
                    {
                        "id": self.cid,
                        "object": "chat.completion.chunk",
                        "created": self.created,
                        "model": self.model,
                        "choices": [],
                        "usage": self.usage,
                    }
                ).encode()
                + b"\n\n"
            )
        return tail + b"data: [DONE]\n\n"


def build_app(state: _State) -> Starlette:
    async def models(_: Request) -> JSONResponse:
        return JSONResponse(
            {"object": "list", "data": [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]}
        )

    async def push(request: Request) -> JSONResponse:
        data = await request.json()
        items = data.get("scripts", [data]) if isinstance(data, dict) else data
        try:
            state.push([Script.from_dict(d) for d in items])
        except (TypeError, ValueError) as err:
            return JSONResponse({"error": str(err)}, status_code=400)
        return JSONResponse({"queued": len(state.queue)})

    async def requests(_: Request) -> JSONResponse:
        return JSONResponse(state.snapshot())

    async def reset(_: Request) -> JSONResponse:
        state.reset()
        return JSONResponse({"ok": True})

    async def refuse(request: Request) -> JSONResponse:
        data = await request.json()
        with state.lock:
            state.refuse = {k: (int(v[0]), str(v[1])) for k, v in (data or {}).items()}
        return JSONResponse({"refused": sorted(state.refuse)})

    async def health(_: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", _ChatCompletions(state), methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/_script", push, methods=["POST"]),
            Route("/_requests", requests, methods=["GET"]),
            Route("/_reset", reset, methods=["POST"]),
            Route("/_refuse", refuse, methods=["POST"]),
            Route("/_health", health, methods=["GET"]),
        ]
    )


def _bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _uvicorn_config(app: Starlette) -> uvicorn.Config:
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=1, http="h11"
    )
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _QuietCut) for f in logger.filters):
        logger.addFilter(_QuietCut())
    return config


# ---- the common test API --------------------------------------------------------------------------
class _Api:
    url: str

    @property
    def base_url(self) -> str:
        """What to give the OpenAI client (`.../v1`)."""
        return self.url + "/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == "/v1/chat/completions"]

    def wait_for(self, predicate: Any, timeout: float = 5.0, interval: float = 0.002) -> list[dict[str, Any]]:
        """Poll the chat request records until `predicate(records)` is true."""
        deadline = time.monotonic() + timeout
        while True:
            recs = self.chat_requests()
            if predicate(recs):
                return recs
            if time.monotonic() > deadline:
                raise TimeoutError(f"fake_openai: condition not met in {timeout}s; requests: {recs}")
            time.sleep(interval)

    def wait_for_disconnect(self, index: int = -1, timeout: float = 5.0) -> dict[str, Any]:
        recs = self.wait_for(lambda rs: bool(rs) and rs[index]["disconnected"], timeout)
        return recs[index]


class FakeOpenAI(_Api):
    """The server in a thread of this process."""

    def __init__(
        self, *scripts: Script, default: Script | None = Script(text="OK", times=-1), responder: Any = None
    ) -> None:
        self._state = _State(default, responder)
        self._state.push(list(scripts))
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def script(self, *scripts: Script) -> None:
        self._state.push(list(scripts))

    def reset(self) -> None:
        self._state.reset()

    def refuse_formats(self, refused: dict[str, tuple[int, str]]) -> None:
        """Answer requests with these response formats (see `format_key`) with (status, message)."""
        with self._state.lock:
            self._state.refuse = dict(refused)

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._state.snapshot()

    def start(self) -> FakeOpenAI:
        sock = _bind()
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._server = uvicorn.Server(_uvicorn_config(build_app(self._state)))
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="fake-openai", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("fake_openai did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join(5)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(2)
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class RemoteFakeOpenAI(_Api):
    """Client for a fake server running in another process."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def script(self, *scripts: Script) -> None:
        r = httpx.post(self.url + "/_script", json={"scripts": [s.to_dict() for s in scripts]}, timeout=5)
        r.raise_for_status()

    def reset(self) -> None:
        httpx.post(self.url + "/_reset", timeout=5).raise_for_status()

    def refuse_formats(self, refused: dict[str, tuple[int, str]]) -> None:
        httpx.post(self.url + "/_refuse", json={k: list(v) for k, v in refused.items()}, timeout=5).raise_for_status()

    @property
    def requests(self) -> list[dict[str, Any]]:
        r = httpx.get(self.url + "/_requests", timeout=5)
        r.raise_for_status()
        return r.json()


class FakeOpenAIProcess(RemoteFakeOpenAI):
    """The server as a child process (`python -m tests.support.fake_openai`)."""

    def __init__(self, *scripts: Script, port: int | None = None, script_file: str | None = None) -> None:
        self._port = port
        self._initial = scripts
        self._script_file = script_file
        self.proc: subprocess.Popen | None = None
        super().__init__("")

    def start(self) -> FakeOpenAIProcess:
        # Port 0 by default: the child binds and reports its port, so no other process can
        # take a port between our choosing it and the child binding it.
        cmd = [sys.executable, "-m", "tests.support.fake_openai", "--port", str(self._port or 0)]
        if self._script_file:
            cmd += ["--script-file", self._script_file]
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 15
        ready, _, _ = select.select([self.proc.stdout], [], [], 15)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("READY "):
            self.stop()
            raise RuntimeError(f"fake_openai process did not start: {line!r}")
        self.url = line.split()[1]
        while True:
            try:
                if httpx.get(self.url + "/_health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("fake_openai process did not start")
            time.sleep(0.02)
        if self._initial:
            self.script(*self._initial)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None

    def __enter__(self) -> FakeOpenAIProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True, help="0: any free port (printed)")
    parser.add_argument("--script-file", help="JSON: a list of scripts queued at start")
    parser.add_argument("--no-default", action="store_true", help="an empty queue answers 500")
    args = parser.parse_args(argv)
    state = _State(None if args.no_default else Script(text="OK", times=-1))
    if args.script_file:
        with open(args.script_file, encoding="utf-8") as f:
            data = json.load(f)
        state.push([Script.from_dict(d) for d in (data.get("scripts", []) if isinstance(data, dict) else data)])
    sock = _bind(args.host, args.port)
    print(f"READY http://{args.host}:{sock.getsockname()[1]}", flush=True)
    uvicorn.Server(_uvicorn_config(build_app(state))).run(sockets=[sock])


if __name__ == "__main__":
    main()
