"""share_latency: a node committed by one person → visible on another person's canvas in Chromium.

    .venv/bin/python benchmarks/share_latency.py [--nodes 40]

Everything real, started here: the whole app (web + worker + index + Redis), two accounts (the
map's owner and an editor it was shared with), two Chromium pages on one map: the owner's
second tab (today's two-tab case) and the editor's page (two users). Nodes are added through
the HTTP API alternately by the owner and by the editor (their own bearer tokens), one at a
time. Per node: the time the API request was sent (so each figure also contains the edit's own
request, commit included: an upper bound of commit → canvas) vs the wall-clock time its
`.react-flow__node` element entered each page's DOM (MutationObserver, performance.timeOrigin +
now()). Same machine clock.

Printed side by side: two tabs of one user (the baseline: today's figure, measured now on the
same machine) and two users (ours), p50/p95 and the ratio. Target: two users p95 <= 200 ms and
no slower than two tabs.
"""

from __future__ import annotations

import argparse
import time

from mapstack import CHROMIUM_ARGS, OBSERVER_JS, app, login, make_user, pct, summary


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=40)
    args = ap.parse_args()

    import httpx
    from playwright.sync_api import expect, sync_playwright

    with app() as (stack, db_url), sync_playwright() as pw:
        _, o_email, o_pw = make_user(db_url)
        _, e_email, e_pw = make_user(db_url)
        api = httpx.Client(base_url=stack.url + "/api/v1", timeout=60)

        def bearer(email: str, pw_: str) -> dict[str, str]:
            tok = api.post("/auth/token", json={"email": email, "password": pw_}).json()["token"]
            return {"Authorization": f"Bearer {tok}"}

        oh, eh = bearer(o_email, o_pw), bearer(e_email, e_pw)
        m = api.post("/mindmaps", json={"title": "Shared latency"}, headers=oh).json()
        map_id, root = m["id"], m["root_id"]
        api.post(f"/mindmaps/{map_id}/members", json={"email": e_email, "role": "editor"}, headers=oh)

        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        pages = {}
        for name, (email, pw_) in {"tab": (o_email, o_pw), "user": (e_email, e_pw)}.items():
            page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            page.set_default_timeout(30_000)
            login(page, stack.url, email, pw_)
            page.goto(f"{stack.url}/maps/{map_id}")
            expect(page.locator(".react-flow__node")).to_have_count(1)
            page.evaluate(OBSERVER_JS)
            pages[name] = page

        committed: dict[str, tuple[float, str]] = {}  # node id -> (commit time, who wrote it)
        for i in range(args.nodes):
            who, h = ("owner", oh) if i % 2 == 0 else ("editor", eh)
            sent = time.time()  # before the request: the figure includes the edit's own request (an upper bound)
            r = api.post(f"/mindmaps/{map_id}/nodes", json={"parent_id": root, "title": f"n{i} by {who}"}, headers=h)
            r.raise_for_status()
            committed[r.json()["id"]] = (sent, who)
            for page in pages.values():
                page.wait_for_function("id => id in window.__seen", arg=r.json()["id"], timeout=15_000)
            time.sleep(0.3)  # one edit at a time: each measured alone
        seen = {name: page.evaluate("() => window.__seen") for name, page in pages.items()}
        browser.close()

    # the owner's second tab sees the owner's own edits (two tabs) ...
    tabs = [seen["tab"][i] - t * 1000 for i, (t, who) in committed.items() if who == "owner" and i in seen["tab"]]
    # ... the editor's page sees the owner's edits, the owner's tab the editor's (two users)
    users = [seen["user"][i] - t * 1000 for i, (t, who) in committed.items() if who == "owner" and i in seen["user"]]
    users += [seen["tab"][i] - t * 1000 for i, (t, who) in committed.items() if who == "editor" and i in seen["tab"]]
    print(f"share_latency over {len(committed)} nodes (API request sent -> node in the other page's DOM)")
    print(summary("baseline: two tabs, one user (today)", tabs))
    print(summary("ours: two users (owner <-> editor)", users))
    print(
        f"ratio two-users/two-tabs p50 = {pct(users, 50) / max(pct(tabs, 50), 1):.2f}x, "
        f"p95 = {pct(users, 95) / max(pct(tabs, 95), 1):.2f}x; target p95 <= 200 ms: "
        f"{'MET' if pct(users, 95) <= 200 else 'NOT MET'}"
    )


if __name__ == "__main__":
    main()
