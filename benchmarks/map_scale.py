"""map_scale: a 500-node map in Chromium — open → interactive, and one edit → saved and shown.

    .venv/bin/python benchmarks/map_scale.py [--nodes 500] [--repeats 5]

The whole app runs here (web + worker + index + Redis). A map of --nodes nodes (10 themes,
the rest claims under them, each claim with a citation-count and support value) is written
through the maps service and laid out. Then, in Chromium:

- open → interactive: navigation start → every node measured and fitted (the canvas sets
  `window.__mindmapReady`) and a click on a node has opened its side panel;
- edit → saved and shown: Tab on a selected node (add a child: one transaction + map re-read
  + canvas update) → the new node's element is in the DOM; and a title typed in the side panel
  → the canvas shows it (this one includes the input's 250 ms debounce, reported apart).
  Every edit is checked in the database.

Baseline for the edit: the naive way to show it — reload the page after the save
(navigation → ready). Targets: open <= 2 s, edit <= 200 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time

from mapstack import CHROMIUM_ARGS, OBSERVER_JS, app, login, make_user, pct, summary


def build_map(db_url: str, user_id: str, n_nodes: int) -> str:
    from bayes_app.db import session_scope
    from bayes_app.maps import service

    with session_scope(db_url) as db:
        m = service.create_map(db, user_id, f"Scale map ({n_nodes} nodes)")
        root = service.root_of(db, m["id"]).id
        themes = [
            service.write_agent_node(db, m["id"], root, "theme", f"Theme {t}", run_id=None)[0].id for t in range(10)
        ]
        for i in range(n_nodes - 11):
            service.write_agent_node(
                db,
                m["id"],
                themes[i % 10],
                "claim",
                f"Claim {i}: a statement long enough to wrap onto two lines",
                run_id=None,
                confidence=0.5,
            )
        service.auto_layout(db, user_id, m["id"])
        return m["id"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    from playwright.sync_api import expect, sync_playwright

    from bayes_app.db import session_scope
    from bayes_app.models import MapNode

    opens, panels, edits, titles, reloads = [], [], [], [], []
    with app() as (stack, db_url), sync_playwright() as pw:
        user_id, email, password = make_user(db_url)
        map_id = build_map(db_url, user_id, args.nodes)
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(60_000)
        login(page, stack.url, email, password)
        url = f"{stack.url}/maps/{map_id}"
        for rep in range(args.repeats + 1):  # the first open warms caches; not counted
            page.goto(url)
            page.wait_for_function("() => window.__mindmapReady", timeout=60_000)
            ready = page.evaluate("() => window.__mindmapReady")  # ms since navigation start
            n = page.locator(".react-flow__node").count()
            assert n == args.nodes + rep, (n, rep)
            node = page.locator(".react-flow__node", has_text="Theme 3").first
            node.click()
            expect(page.locator("#node-panel")).to_be_visible()
            interactive = page.evaluate("() => performance.now()")
            if rep:
                opens.append(ready)
                panels.append(interactive)
            page.evaluate(OBSERVER_JS)
            # edit 1: Tab adds a child of the selected node → its element appears
            before = page.evaluate("() => Object.keys(window.__seen).length")
            t0 = page.evaluate("() => performance.timeOrigin + performance.now()")
            page.locator("#mindmap-canvas").press("Tab")
            page.wait_for_function("n => Object.keys(window.__seen).length > n", arg=before)
            seen = page.evaluate("() => window.__seen")
            t1 = max(seen.values())
            with session_scope(db_url) as db:
                assert db.query(MapNode).filter(MapNode.map_id == map_id).count() == args.nodes + rep + 1
            if rep:
                edits.append(t1 - t0)
            # edit 2: the new node's title typed in the panel → shown on the canvas
            new_id = max(seen, key=seen.get)
            text = f"Renamed {rep}"
            t0 = page.evaluate("() => performance.timeOrigin + performance.now()")
            page.fill("#node-title", text)
            page.wait_for_function("([id, t]) => (window.__titled[id] || [0, ''])[1] === t", arg=[new_id, text])
            t1 = page.evaluate("id => window.__titled[id][0]", new_id)
            with session_scope(db_url) as db:
                assert db.get(MapNode, new_id).title == text
            if rep:
                titles.append(t1 - t0)
            # baseline: show an edit by reloading the page
            t0 = time.perf_counter()
            page.reload()
            page.wait_for_function("() => window.__mindmapReady", timeout=60_000)
            if rep:
                reloads.append((time.perf_counter() - t0) * 1000)
        browser.close()

    print(f"map_scale: {args.nodes}-node map (+1 per repeat), {args.repeats} repeats")
    print(summary("open -> all nodes measured + fitted", opens))
    print(summary("open -> node clicked, side panel shown (interactive)", panels))
    print(summary("edit (Tab: add child) -> saved and shown", edits))
    print(summary("edit (title typed, incl. 250 ms debounce) -> shown", titles))
    print(summary("baseline: page reload to show an edit", reloads))
    print(
        f"ratio baseline/ours for an edit: p50 {pct(reloads, 50) / max(pct(edits, 50), 1):.1f}x; "
        f"targets: open <= 2000 ms {'MET' if pct(panels, 95) <= 2000 else 'NOT MET'} (p95 {pct(panels, 95):.0f}), "
        f"edit <= 200 ms {'MET' if pct(edits, 95) <= 200 else 'NOT MET'} (p95 {pct(edits, 95):.0f}); "
        f"title debounce-free ~{statistics.median(titles) - 250:.0f} ms"
    )


if __name__ == "__main__":
    main()
