"""The run loop: lease → RUNNING → run kind → STOPPED with its outcome → release.

A run kind is `async def kind(ctx: RunContext) -> None`. It sends events with `ctx.emit`
and calls models through `ctx.stream_model`, which per stream event persists usage, hands
the event to the kind (which appends it to the run's stream) and then checks the abort
signal; a watcher task closes the model stream the instant the abort fires.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import redis
from sqlmodel import Session

from bayes_app.bidi import inert_deep
from bayes_app.llm.stream import ModelStream
from bayes_app.llm.types import ChatProvider, ChatRequest, ProviderError, StreamEvent, Usage
from bayes_app.models import Run, RunStatus
from bayes_app.runs import control, events, kinds
from bayes_app.runs import lifecycle as lc

log = logging.getLogger("bayes.runs.executor")

SessionFactory = Callable[[], Session]
KindFn = Callable[["RunContext"], Awaitable[None]]
USAGE_CHECKPOINT_S = 1.0  # how often a streaming response's running estimate is persisted


def run_kind(name: str) -> Callable[[KindFn], KindFn]:
    """Register a bare run kind under `name` (tests' ad-hoc kinds); the features declare a
    `kinds.RunKind` and register it in one place, `bayes_app.registry`."""

    def deco(fn: KindFn) -> KindFn:
        kinds.register(kinds.RunKind(name, name, fn))
        return fn

    return deco


class RunAborted(Exception):
    """The run was asked to stop (cancel, deleted resource) or lost its lease."""


class RunFailed(Exception):
    """The run could not produce what it is for (e.g. the model returned nothing usable): it
    ends FAILED with `reason` as its outcome reason, and `message` goes to the user."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


@dataclass(frozen=True)
class RunInfo:
    id: str
    owner_id: str
    kind: str
    model: str
    input: dict[str, Any]

    @classmethod
    def of(cls, op: Run) -> RunInfo:
        return cls(op.id, op.owner_id, op.kind, op.model, dict(op.input or {}))


@dataclass
class RunContext:
    """What a run kind sees: its operation, event output, model calls, abort checks."""

    run: RunInfo
    attempt: int
    redis: redis.Redis
    sessions: SessionFactory
    provider: ChatProvider
    abort: control.AbortSignal
    lease: control.Lease
    _seq: int = 0
    _emitted: int = 0
    _abort_async: asyncio.Event | None = field(default=None, repr=False)

    # ---- events / abort ----------------------------------------------------------------
    def emit(self, type_: str, data: Any) -> str:
        """Append one event to the run's stream (sync XADD: ~0.1 ms).

        While Redis is unreachable (a restart) the append is retried with bounded backoff
        for as long as the lease is surely ours; past that it raises RunAborted("lease_lost").
        Each event carries a key unique to this attempt, so a retry never appends it twice.
        """
        self._emitted += 1
        key = f"{self.attempt}.{self._emitted}"
        data = inert_deep(data)  # streamed answers and node titles are shown as they arrive
        try:
            return control.retry_while_leased(
                lambda: events.append(self.redis, self.run.id, type_, data, key), self.lease, f"append {type_}"
            )
        except control.LeaseExpired as err:
            raise RunAborted("lease_lost") from err

    @property
    def aborted(self) -> bool:
        return self.abort.is_set() or self.lease.lost.is_set()

    def check_abort(self) -> None:
        if self.aborted:
            raise RunAborted(self.abort_reason())

    def abort_reason(self) -> str:
        try:
            flag = control.abort_requested(self.redis, self.run.id)
        except redis.RedisError:
            flag = None
        if flag:
            return flag
        return "lease_lost" if self.lease.lost.is_set() else lc.USER_CANCEL

    def _abort_event(self) -> asyncio.Event:
        if self._abort_async is None:
            self._abort_async = self.abort.async_event()
        return self._abort_async

    def model_for(self, role: str) -> str:
        """The model of `role` chosen (and priced) when the run started; else the run's."""
        return str((self.run.input.get("models") or {}).get(role) or self.run.model)

    # ---- usage -------------------------------------------------------------------------
    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    async def record_usage(self, seq: int, step: str, usage: Usage, model: str) -> dict[str, Any]:
        """Persist one response's usage (idempotent on seq; replaces the running estimate
        of that seq) and append a `usage` event."""

        def write() -> int:
            with self.sessions() as db:
                return lc.record_usage(
                    db,
                    self.run.id,
                    self.attempt,
                    seq,
                    step,
                    model,
                    usage.input_tokens,
                    usage.cached_tokens,
                    usage.output_tokens,
                    usage.estimated,
                    replace_estimate=True,
                ).cost_credits

        cost = await asyncio.to_thread(write)
        data = {
            "step": step,
            "model": model,
            "input_tokens": usage.input_tokens,
            "cached_tokens": usage.cached_tokens,
            "output_tokens": usage.output_tokens,
            "estimated": usage.estimated,
            "cost_credits": cost,
        }
        self.emit("usage", data)
        return data

    # ---- model calls -------------------------------------------------------------------
    async def _checkpoint_usage(self, seq: int, step: str, stream: ModelStream, model: str) -> None:
        """Persist the running estimate of a response still streaming (same row as its
        final usage, marked estimated), so a worker killed now is still billed for it."""
        usage = stream.estimated_usage()

        def write() -> None:
            with self.sessions() as db:
                lc.record_usage(
                    db,
                    self.run.id,
                    self.attempt,
                    seq,
                    step,
                    model,
                    usage.input_tokens,
                    usage.cached_tokens,
                    usage.output_tokens,
                    True,
                    replace_estimate=True,
                )

        try:
            await asyncio.to_thread(write)
        except lc.RunFinalized:  # settled under us (worker declared lost): stop now
            raise RunAborted("lease_lost") from None
        except Exception as err:  # noqa: BLE001 - the final record retries; keep streaming
            log.warning("run %s: usage checkpoint failed: %s", self.run.id, err)

    async def stream_model(
        self, request: ChatRequest, step: str, on_event: Callable[[StreamEvent], Awaitable[None] | None]
    ) -> ModelStream:
        """Stream one model response. Per event: persist usage → `on_event` → check abort.

        Usage is always recorded once (estimated when the stream ended without it). While
        streaming, a running estimate is persisted in the same row at the first event and
        then every USAGE_CHECKPOINT_S. Raises RunAborted when the run was stopped while
        streaming, ProviderError on failure.
        """
        self.check_abort()
        seq = self.next_seq()
        stream = self.provider.stream(request)
        recorded = False
        abort_ev = self._abort_event()
        checkpoint_at = 0.0  # monotonic time of the next running-estimate write

        async def close_on_abort() -> None:
            await abort_ev.wait()
            await stream.aclose()

        watcher = asyncio.create_task(close_on_abort())
        try:
            async with stream:
                async for ev in stream:
                    if isinstance(ev, Usage):
                        if not recorded:
                            recorded = True
                            await self.record_usage(seq, step, ev, stream.usage_model or request.model)
                        continue
                    result = on_event(ev)
                    if asyncio.iscoroutine(result):
                        await result
                    self.check_abort()
                    if not recorded and time.monotonic() >= checkpoint_at:
                        checkpoint_at = time.monotonic() + USAGE_CHECKPOINT_S
                        await self._checkpoint_usage(seq, step, stream, stream.usage_model or request.model)
        finally:
            watcher.cancel()
            if not recorded:
                usage = stream.final_usage()
                await asyncio.shield(self.record_usage(seq, step, usage, stream.usage_model or request.model))
        self.check_abort()
        return stream


# ---- the loop --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExecResult:
    started: bool
    outcome: str | None = None
    reason: str | None = None
    detail: str | None = None  # why it did not start


async def execute(
    op_id: str,
    *,
    r: redis.Redis,
    sessions: SessionFactory,
    listener: control.AbortListener,
    provider_factory: Callable[[], ChatProvider],
    lease_ms: int = control.LEASE_MS,
) -> ExecResult:
    """Run one operation to STOPPED. Returns without doing anything when another worker
    holds the lease or the run cannot start (cancelled, stopped, finalized). The blocking
    database calls run off the event loop: a worker's runs share one loop (Dramatiq's
    `AsyncIO` middleware)."""
    lease = control.Lease(r, op_id, ttl_ms=lease_ms)
    if not lease.acquire():
        return ExecResult(False, detail="lease_held")
    try:
        started = await asyncio.to_thread(_mark_running, sessions, op_id)
        if isinstance(started, ExecResult):
            return started
        attempt, run = started
        signal = listener.watch(op_id)
        lease.on_lost = signal.set  # another worker took over / lease expired: stop now
        lease.start_heartbeat()
        try:
            return await _run(run, attempt, r, sessions, signal, lease, provider_factory)
        finally:
            listener.unwatch(op_id)
    finally:
        lease.release()


def _mark_running(sessions: SessionFactory, op_id: str) -> tuple[int, RunInfo] | ExecResult:
    """QUEUED → RUNNING: (the attempt, the run), or why it cannot start."""
    with sessions() as db:
        current = db.get(Run, op_id)
        if current is None or current.status != RunStatus.QUEUED:
            # A redelivered message (worker crash) never resumes a run: the finalizer
            # settles it (worker_lost) once this lease is released.
            return ExecResult(False, detail="not_queued")
        try:
            attempt = lc.mark_running(db, op_id)
        except lc.CannotStart as err:
            return ExecResult(False, detail=err.reason)
        run = db.get(Run, op_id)
        assert run is not None  # mark_running just updated it in this transaction
        return attempt, RunInfo.of(run)


async def _run(
    run: RunInfo,
    attempt: int,
    r: redis.Redis,
    sessions: SessionFactory,
    signal: control.AbortSignal,
    lease: control.Lease,
    provider_factory: Callable[[], ChatProvider],
) -> ExecResult:
    provider = provider_factory()
    ctx = RunContext(run, attempt, r, sessions, provider, signal, lease)
    try:
        outcome, reason = await _outcome(ctx)
    finally:
        close = getattr(provider, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()

    def mark_stopped() -> bool:
        with sessions() as db:
            # A CANCELLED outcome without a reason takes the DB's cancel reason.
            return lc.mark_stopped(db, run.id, attempt, outcome, None if outcome == RunStatus.CANCELLED else reason)

    stopped = await asyncio.to_thread(mark_stopped)
    if stopped:
        _safe_emit(ctx, "status", {"status": RunStatus.STOPPED, "outcome": outcome, "reason": reason})
    return ExecResult(True, outcome, reason)


async def _outcome(ctx: RunContext) -> tuple[str, str | None]:
    """Run the kind's entry: (outcome, reason), an error event emitted when it failed."""
    run = ctx.run
    try:
        ctx.emit("status", {"status": RunStatus.RUNNING, "attempt": ctx.attempt})
        kind = kinds.get(run.kind)
        if kind is None:
            raise LookupError(f"unknown run kind {run.kind!r}")
        await kind.entry(ctx)
        if ctx.aborted:
            raise RunAborted(ctx.abort_reason())
    except RunAborted as err:
        reason = str(err) or None
        # lease_lost is fenced by attempt: a no-op if the finalizer got there first
        return (RunStatus.FAILED if reason == "lease_lost" else RunStatus.CANCELLED), reason
    except control.LeaseExpired:  # a Redis write outside ctx.emit ran out of lease
        return RunStatus.FAILED, "lease_lost"
    except RunFailed as err:
        _safe_emit(ctx, "error", {"code": err.reason, "message": err.message})
        return RunStatus.FAILED, err.reason
    except ProviderError as err:
        _safe_emit(ctx, "error", {"code": "provider_error", "message": str(err)})
        return RunStatus.FAILED, f"provider_error: {err}"
    except Exception as err:
        log.exception("run %s failed", run.id)
        _safe_emit(ctx, "error", {"code": "internal_error", "message": "The run failed."})
        return RunStatus.FAILED, f"internal_error: {type(err).__name__}"
    return RunStatus.SUCCEEDED, None


def _safe_emit(ctx: RunContext, type_: str, data: Any) -> None:
    try:
        ctx.emit(type_, data)
    except (redis.RedisError, RunAborted) as err:
        log.warning("run %s: could not append %s event: %s", ctx.run.id, type_, err)
