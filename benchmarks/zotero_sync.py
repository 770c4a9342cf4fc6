"""Zotero sync on a generated 5,000-item library (1,000 small PDFs) served by the fake Web API.

    .venv/bin/python benchmarks/zotero_sync.py [--items 5000] [--pdfs 1000] [--latency-ms 0]
                                               [--annotations 20000]

Everything runs here: the fake Zotero Web API (tests/support/fake_zotero.py, a real HTTP
server driven by the real pyzotero), a temp SQLite database, the app's sync engine with its
HTTP policy (≤ 4 requests in flight). Ingestion is not part of this figure (the documents are
queued for it; see benchmarks/ingest.py). Prints: the full sync (time, requests), a no-change
resync (target: 1 request, < 1 s), an incremental sync after 10 edits + 1 new PDF, and the
naive approach of Zotero AI tools that re-fetch everything each time (every item page of 100
plus every PDF), as ratios. `--latency-ms` adds server latency per request (api.zotero.org
is ~100-200 ms away from most servers).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=5000)
    ap.add_argument("--pdfs", type=int, default=1000)
    ap.add_argument("--latency-ms", type=float, default=0.0)
    ap.add_argument(
        "--annotations", type=int, default=0, help="PDF annotations (Zotero 7 highlights), spread over the PDFs"
    )
    args = ap.parse_args()

    import os

    tmp = Path(tempfile.mkdtemp(prefix="bayes-zbench-"))
    os.environ.update(BAYES_DATA_DIR=str(tmp), BAYES_SECRET_KEY="bench-secret")
    from bayes_app import settings

    settings.get_settings.cache_clear()
    from bayes_app.accounts import service as accounts
    from bayes_app.db import migrate, session_scope
    from tests.support.fake_zotero import FakeZotero
    from tests.support.tiny_pdf import text_pdf
    from tests.support.zotero_sync import connect_web

    db_url = f"sqlite:///{tmp / 'bench.db'}"
    migrate(db_url)
    fz = FakeZotero().start()
    zlib = fz.add_user(4242, "benchkey42")
    _generate(zlib, args)
    fz.latency_s = args.latency_ms / 1000
    with session_scope(db_url) as s:
        owner = accounts.register(s, "bench@example.com", "tangerine-sky-42").id
    bench = _Bench(fz, db_url, connect_web(db_url, owner, fz, "benchkey42"), tmp)

    print("Bayes sync:")
    full = bench.run("full sync")
    noop = bench.run("no-change resync")
    for i in range(10):
        zlib.edit_item(f"G{i * 7:07d}", title=f"Edited title {i}")
    zlib.put_item(
        {
            "key": "GNEW0001",
            "itemType": "journalArticle",
            "title": "New",
            "collections": [],
            "creators": [],
            "tags": [],
            "relations": {},
        }
    )
    zlib.add_pdf("GNEW0001", "PNEW0001", text_pdf("a new paper for the benchmark"))
    inc = bench.run("incremental (10 edits + 1 new PDF)")
    ann = _annotation_round(bench, zlib, owner) if args.annotations else None
    print("Baseline:")
    nv = bench.naive()
    _table(args, full, noop, inc, ann, nv)
    fz.stop()


def _generate(zlib: Any, args: argparse.Namespace) -> None:
    """The library: items, PDFs, annotations spread over the PDFs."""
    from tests.support.fake_zotero import generate
    from tests.support.fake_zotero_write import add_annotation

    t0 = time.monotonic()
    atts = generate(zlib, args.items, args.pdfs)
    for i in range(args.annotations):
        add_annotation(
            zlib,
            atts[i % len(atts)],
            f"N{i:07d}",
            text=f"Highlighted sentence {i} of the paper.",
            comment="" if i % 3 else f"comment {i}",
            page_index=0,
            rects=[[72.0, 700.0 - (i % 40) * 14, 400.0, 712.0 - (i % 40) * 14]],
        )
    print(
        f"generated {args.items} items, {args.pdfs} PDFs, {args.annotations} annotations in "
        f"{time.monotonic() - t0:.1f}s (library version {zlib.version})"
    )


class _Bench:
    """Syncs of the one library, measured: Bayes' sync engine, and the naive full re-fetch."""

    def __init__(self, fz: Any, db_url: str, lib_id: str, tmp: Path) -> None:
        from tests.support.zotero_sync import Recorder

        self.fz, self.db_url, self.lib_id, self.tmp = fz, db_url, lib_id, tmp
        self.rec = Recorder()

    def opts(self) -> Any:
        from bayes_app.zotero import engine
        from bayes_app.zotero.http import Policy

        return engine.SyncOptions(
            files_root=self.tmp / "files",
            max_file_bytes=20 << 20,
            web_api_url=self.fz.base,
            local_api_url=self.fz.base + "/api",
            policy=Policy(),
            secret="bench-secret",
        )

    def run(self, label: str) -> tuple[float, int]:
        from bayes_app.zotero import engine
        from tests.support.zotero_sync import sessions

        fz = self.fz
        fz.reset_counters()
        t = time.monotonic()
        res = engine.sync_library(sessions(self.db_url), self.lib_id, self.rec.hooks(), self.opts())
        dt = time.monotonic() - t
        assert res.outcome in ("synced", "unchanged"), res
        print(
            f"  {label:<34} {dt:8.2f} s {res.requests:7d} requests  (max in flight {fz.max_in_flight}, "
            f"{res.files_downloaded} files, outcome {res.outcome})"
        )
        return dt, res.requests

    def naive(self) -> tuple[float, int]:
        """What tools without incremental sync do: every item page, then every PDF again."""
        from bayes_app.zotero.client import Clients, Target
        from bayes_app.zotero.http import Policy

        fz = self.fz
        fz.reset_counters()
        policy = Policy()
        clients = Clients(Target("web", fz.base, "user", "4242", "benchkey42"), policy)
        t = time.monotonic()
        z = clients.get()
        items = z.everything(z.items(includeTrashed=1, limit=100))
        pdfs = [i["key"] for i in items if i["data"].get("contentType") == "application/pdf"]
        for k in pdfs:
            z.file(k)
        dt = time.monotonic() - t
        clients.close()
        print(f"  {'naive full re-fetch':<34} {dt:8.2f} s {policy.requests:7d} requests  ({len(pdfs)} files)")
        return dt, policy.requests


def _annotation_round(bench: _Bench, zlib: Any, owner: str) -> tuple[float, int]:
    """An incremental sync after 10 annotations were edited and 5 deleted; all highlights read back."""
    from bayes_app.db import session_scope
    from bayes_app.zotero.annotations import highlights

    for i in range(10):
        zlib.edit_item(f"N{i * 13:07d}", annotationComment=f"edited {i}")
    for i in range(5):
        zlib.delete_item(f"N{i * 17 + 1:07d}")
    ann = bench.run("incremental (10 + 5 annotations)")
    with session_scope(bench.db_url) as s:
        t = time.monotonic()
        n = len(highlights(s, owner))
        print(f"  all {n} highlights read back in {(time.monotonic() - t) * 1000:.0f} ms")
    return ann


def _table(
    args: argparse.Namespace,
    full: tuple[float, int],
    noop: tuple[float, int],
    inc: tuple[float, int],
    ann: tuple[float, int] | None,
    nv: tuple[float, int],
) -> None:
    print()
    print("| | time | requests |")
    print("|---|---|---|")
    print(f"| full sync ({args.items:,} items, {args.pdfs:,} PDFs) | {full[0]:.1f} s | {full[1]:,} |")
    print(f"| no-change resync | {noop[0] * 1000:.0f} ms | {noop[1]} |")
    print(f"| incremental: 10 edits + 1 new PDF | {inc[0] * 1000:.0f} ms | {inc[1]} |")
    if ann:
        print(f"| incremental: 10 annotations edited + 5 deleted | {ann[0] * 1000:.0f} ms | {ann[1]} |")
    print(f"| naive full re-fetch (each time) | {nv[0]:.1f} s | {nv[1]:,} |")
    print(f"| ratio naive / no-change resync | {nv[0] / noop[0]:,.0f}× | {nv[1] / noop[1]:,.0f}× |")
    print(f"| ratio naive / incremental | {nv[0] / inc[0]:,.0f}× | {nv[1] / inc[1]:,.0f}× |")
    ok = noop[1] == 1 and noop[0] < 1.0
    print(f"target no-change resync = 1 request and < 1 s: {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
