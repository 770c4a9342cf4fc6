"""map_reading: a 500-node map in Chromium — open → a readable first view, and the outline's render.

    .venv/bin/python benchmarks/map_reading.py [--nodes 500] [--repeats 5]
        [--url http://127.0.0.1:PORT --db sqlite:////path/bayes.db]   # an app already running

The whole app runs here (web + worker + index + Redis). A map of --nodes nodes (10 themes, the
rest claims under them; see map_scale.py) is written through the maps service and laid out.
Then, in Chromium:

- desktop 1440×900, canvas: navigation start → the first view is placed (`window.__mindmapReady`:
  the map laid out with ELK and the view chosen), with the smallest on-screen text size of that
  view (CSS px × zoom; readable: ≥ 11 px) and the cards cut by the canvas's edge (none wanted);
- an edit (a child added under the question): the click → the canvas laid out again and the new
  node in view (`window.__mindmapSettled`); baseline: what a layout cost before #40, when the
  canvas did not lay out after an edit and the reader pressed Auto-layout (a server round trip,
  ELK, the positions saved, the view placed) — the same button, timed the same way;
- baseline, the same map: the fit-everything view a run's end used to show (today only the Fit
  button does it): its smallest on-screen text size. From there, reading needs manual zooming;
- outline, desktop: a click on "Outline" → every row rendered (`window.__outlineRendered`);
- outline, phone 390×844 (its default view): navigation start → every row rendered;
  baseline: navigation start → the canvas's first view on the same phone.
Target: outline render <= 1000 ms for 500 nodes.
"""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager
from types import SimpleNamespace

from map_scale import build_map
from mapstack import CHROMIUM_ARGS, app, login, make_user, pct, summary  # (puts the repo on sys.path)

from tests.support.canvas_view import GEOMETRY_JS

MIN_TEXT_JS = """() => {
  const z = new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport')).transform).a;
  let m = Infinity;
  for (const e of document.querySelectorAll('.react-flow__node .mm-node, .react-flow__node .mm-node *'))
    if ([...e.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim()))
      m = Math.min(m, parseFloat(getComputedStyle(e).fontSize) * z);
  return m; }"""
ROWS = '#map-outline [role="treeitem"]'


@contextmanager
def running(url: str | None, db: str | None):
    """The app at `url` (its database `db`), else a whole app started here."""
    if url:
        yield SimpleNamespace(url=url.rstrip("/")), db
        return
    with app() as (stack, db_url):
        yield stack, db_url


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--url")
    ap.add_argument("--db")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    m: dict[str, list[float]] = {k: [] for k in MEASURES}
    with running(args.url, args.db) as (stack, db_url), sync_playwright() as pw:
        user_id, email, password = make_user(db_url)
        map_id = build_map(db_url, user_id, args.nodes)
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        url = f"{stack.url}/maps/{map_id}"
        desk = browser.new_page(viewport={"width": 1440, "height": 900})
        phone = browser.new_page(viewport={"width": 390, "height": 844})
        for p in (desk, phone):
            p.set_default_timeout(60_000)
            login(p, stack.url, email, password)
        for rep in range(args.repeats + 1):  # the first round warms caches; not counted
            got = _one_round(desk, phone, url, args.nodes)
            if rep:
                for k, v in got.items():
                    m[k].append(v)
        browser.close()
    _report(args, m)


MEASURES = (
    "ready",
    "text_ours",
    "text_fit",
    "outline_click",
    "outline_phone",
    "canvas_phone",
    "cut",
    "edit_layout",
    "button_layout",
)


def _one_round(desk, phone, url: str, nodes: int) -> dict[str, float]:
    """One of each measure: the desktop canvas opened, edited, fitted, the outline; the phone's outline and canvas."""
    desk.goto(url)
    desk.wait_for_function("() => window.__mindmapReady")
    desk.wait_for_timeout(200)
    r, t = desk.evaluate("() => window.__mindmapReady"), desk.evaluate(MIN_TEXT_JS)
    g = desk.evaluate(GEOMETRY_JS)
    e, b = edit_and_layout(desk)
    desk.click("#btn-fit")
    desk.wait_for_timeout(500)
    f = desk.evaluate(MIN_TEXT_JS)
    t0 = desk.evaluate("() => { window.__outlineRendered = 0; return performance.now(); }")
    desk.click("#view-outline")
    desk.wait_for_function(f"() => document.querySelectorAll('{ROWS}').length === {nodes}")
    o = desk.evaluate("() => window.__outlineRendered") - t0
    desk.click("#view-canvas")
    phone.goto(url)
    phone.wait_for_function(f"() => document.querySelectorAll('{ROWS}').length === {nodes}")
    op = phone.evaluate("() => window.__outlineRendered")
    phone.click("#view-canvas")
    phone.goto(url)
    phone.wait_for_function("() => window.__mindmapReady")
    cp = phone.evaluate("() => window.__mindmapReady")
    phone.click("#view-outline")
    return {
        "cut": len(g["cut"]),
        "edit_layout": e,
        "button_layout": b,
        "ready": r,
        "text_ours": t,
        "text_fit": f,
        "outline_click": o,
        "outline_phone": op,
        "canvas_phone": cp,
    }


def _report(args: argparse.Namespace, m: dict[str, list[float]]) -> None:
    ready, text_ours, text_fit = m["ready"], m["text_ours"], m["text_fit"]
    outline_click, outline_phone, canvas_phone = m["outline_click"], m["outline_phone"], m["canvas_phone"]
    cut, edit_layout, button_layout = m["cut"], m["edit_layout"], m["button_layout"]
    print(f"map_reading: {args.nodes}-node map, {args.repeats} repeats, Chromium 1440×900 and 390×844")
    print(summary("ours: open -> readable first view (desktop canvas)", ready))
    print(
        f"  smallest text on screen: ours {min(text_ours):.1f} px | baseline fit-all {max(text_fit):.1f} px "
        f"| ratio {min(text_ours) / max(max(text_fit), 0.01):.1f}x (readable >= 11 px)"
    )
    print(f"  cards cut by the canvas edge in the first view: max {max(cut)}")
    print(summary("ours: an edit (child added) -> laid out, new node in view", edit_layout))
    print(summary("baseline: Auto-layout pressed by hand -> laid out (before #40 the only way)", button_layout))
    print(summary("ours: Outline clicked -> all rows rendered (desktop)", outline_click))
    print(summary("ours: phone open -> outline, all rows rendered", outline_phone))
    print(summary("baseline: phone open -> canvas first view", canvas_phone))
    met = max(pct(outline_click, 95), pct(outline_phone, 95)) <= 1000
    print(
        f"ratio baseline/ours on the phone: p50 {pct(canvas_phone, 50) / max(pct(outline_phone, 50), 1):.1f}x; "
        f"target outline <= 1000 ms {'MET' if met else 'NOT MET'}"
        f" (p95 desktop {pct(outline_click, 95):.0f} ms, phone {pct(outline_phone, 95):.0f} ms)"
    )
    if args.json:
        print(
            json.dumps(
                {
                    "nodes": args.nodes,
                    "first_view_p50_ms": pct(ready, 50),
                    "min_text_px": min(text_ours),
                    "cut_max": max(cut),
                    "edit_layout_p50_ms": pct(edit_layout, 50),
                    "button_layout_p50_ms": pct(button_layout, 50),
                    "outline_click_p95_ms": pct(outline_click, 95),
                }
            )
        )


SETTLED_AFTER = """(t0) => window.__mindmapSettled > t0 && !window.__mindmapBusy"""


def edit_and_layout(page) -> tuple[float, float]:
    """(ms from adding a child under the question to the canvas laid out with it in view, ms from
    pressing Auto-layout to the layout applied); the child is undone afterwards."""
    n = page.locator(".react-flow__node").count()
    page.locator(".mm-kind-question").click()
    t0 = page.evaluate("() => performance.now()")
    page.click("#btn-add-child")
    page.wait_for_function(f"() => document.querySelectorAll('.react-flow__node').length === {n + 1}")
    page.wait_for_function(SETTLED_AFTER, arg=t0)
    edit = page.evaluate("() => window.__mindmapSettled") - t0
    page.locator("#mindmap-canvas").focus()
    t1 = page.evaluate("() => performance.now()")
    page.click("#btn-layout")
    page.wait_for_function(SETTLED_AFTER, arg=t1)
    button = page.evaluate("() => window.__mindmapSettled") - t1
    page.click("#btn-undo")  # the layout
    page.click("#btn-undo")  # the child
    page.wait_for_function(f"() => document.querySelectorAll('.react-flow__node').length === {n}")
    return edit, button


if __name__ == "__main__":
    main()
