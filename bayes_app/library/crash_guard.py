"""Counting the ingestion attempts of a document version that died with their process.

Each attempt adds a token naming its process (host, pid, start time) to a Redis set and
removes it when it ends in any way the process survives (success, error, supersession). A
token left behind by a process that no longer runs is an attempt that killed its worker
(e.g. the kernel's OOM killer): after BAYES_INGEST_MAX_CRASHES of them the document is
marked failed instead of being handed to the next worker again. Tokens of processes still
alive (a duplicate delivery running in parallel) are not counted.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from typing import cast

import psutil
import redis

KEY = "bayes:ingest-attempts:{}:{}"
TTL_S = 7 * 24 * 3600
CODE = "worker_crashed"


def _me() -> str:
    create = psutil.Process().create_time()
    return f"{socket.gethostname()}|{os.getpid()}|{create:.2f}|{uuid.uuid4().hex[:8]}"


def process_alive(token: str, remote_alive: Callable[[str, int], bool] | None = None) -> bool:
    """Whether the process that wrote `token` still runs (the same pid is not enough: the
    start time must match too). Other hosts are asked through `remote_alive(host, pid)`."""
    try:
        host, pid_s, create_s, _ = token.split("|")
        pid, create = int(pid_s), float(create_s)
    except ValueError:
        return False
    if host != socket.gethostname():
        return remote_alive(host, pid) if remote_alive else True
    try:
        return abs(psutil.Process(pid).create_time() - create) < 0.05
    except psutil.Error:
        return False


def begin(
    r: redis.Redis, document_id: str, generation: int, remote_alive: Callable[[str, int], bool] | None = None
) -> tuple[str, int]:
    """Register this attempt; returns (its token, how many earlier attempts died with their
    process)."""
    key = KEY.format(document_id, generation)
    dead = sum(1 for t in cast(set[bytes | str], r.smembers(key)) if not process_alive(_s(t), remote_alive))
    token = _me()
    pipe = r.pipeline()
    pipe.sadd(key, token)
    pipe.expire(key, TTL_S)
    pipe.execute()
    return token, dead


def end(r: redis.Redis, document_id: str, generation: int, token: str) -> None:
    """This attempt ended without taking its process down."""
    r.srem(KEY.format(document_id, generation), token)


def forget(r: redis.Redis, document_id: str, generation: int) -> None:
    r.delete(KEY.format(document_id, generation))


def message(crashes: int) -> str:
    return (
        f"Indexing this document stopped the worker process {crashes} times, most likely by "
        "running out of memory (see BAYES_WORKER_MAX_RSS_MB and the machine's memory). It "
        "is not retried automatically; re-index it to try again."
    )


def _s(v: bytes | str) -> str:
    return v.decode() if isinstance(v, bytes) else v
