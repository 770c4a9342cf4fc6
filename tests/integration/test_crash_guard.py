"""The ingestion crash guard against a real Redis: an attempt whose process was killed -9
counts as a crash; attempts that ended, or still run in a live process, do not."""

from __future__ import annotations

import subprocess
import sys
import uuid

import redis

from bayes_app.library import crash_guard
from tests.support.procs import ROOT

ATTEMPT = (
    "import sys, time, redis\n"
    "from bayes_app.library import crash_guard\n"
    "r = redis.Redis.from_url(sys.argv[1])\n"
    "print(crash_guard.begin(r, sys.argv[2], 1)[1], flush=True)\n"
    "time.sleep(60)\n"
)


def _attempt_in_a_process(url: str, doc: str) -> tuple[subprocess.Popen, int]:
    p = subprocess.Popen([sys.executable, "-c", ATTEMPT, url, doc], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())


def test_attempts_killed_with_their_process_are_counted(redis_server):
    url = redis_server.url_db(7)
    r = redis.Redis.from_url(url, decode_responses=True)
    doc = uuid.uuid4().hex
    first, dead = _attempt_in_a_process(url, doc)
    assert dead == 0
    token, dead = crash_guard.begin(r, doc, 1)
    assert dead == 0  # the other attempt's process still runs: a duplicate, not a crash
    crash_guard.end(r, doc, 1, token)

    first.kill()
    first.wait(10)
    token, dead = crash_guard.begin(r, doc, 1)
    assert dead == 1
    crash_guard.end(r, doc, 1, token)  # ended normally: not counted next time

    second, dead = _attempt_in_a_process(url, doc)
    assert dead == 1
    second.kill()
    second.wait(10)
    token, dead = crash_guard.begin(r, doc, 1)
    assert dead == 2
    assert crash_guard.begin(r, doc, 2)[1] == 0  # another version starts afresh
    crash_guard.forget(r, doc, 1)
    assert r.exists(crash_guard.KEY.format(doc, 1)) == 0


def test_attempts_on_other_hosts_are_judged_by_their_heartbeat(redis_server):
    r = redis.Redis.from_url(redis_server.url_db(7), decode_responses=True)
    doc = uuid.uuid4().hex
    r.sadd(crash_guard.KEY.format(doc, 1), "another-host|4242|1700000000.00|abcd1234")
    assert crash_guard.begin(r, doc, 1, remote_alive=lambda _host, _pid: True)[1] == 0
    assert crash_guard.begin(r, doc, 1, remote_alive=lambda host, _pid: host != "another-host")[1] == 1
