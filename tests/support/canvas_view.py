"""What the map canvas shows, read from the DOM geometry of React Flow's nodes and edges:
cards cut by the canvas's edge, cards overlapping, tree edges running through a card, the
smallest on-screen text of the cards in view, and which cards are wholly in view. Shared by the
canvas browser tests and benchmarks/map_reading.py."""

from __future__ import annotations

from typing import Any

# Screen rectangles (getBoundingClientRect) of every card and the canvas; each tree edge's path
# sampled every 6 px (getPointAtLength, mapped to the screen by getScreenCTM).
GEOMETRY_JS = """() => {
  const canvas = document.querySelector('#mindmap-canvas');
  if (!canvas) return null;
  const c = canvas.getBoundingClientRect();
  const vp = document.querySelector('.react-flow__viewport');
  const zoom = new DOMMatrix(getComputedStyle(vp).transform).a;
  const cards = [...document.querySelectorAll('.react-flow__node')].map((n) => {
    const r = n.getBoundingClientRect(), inner = n.querySelector('.mm-node');
    return { id: n.getAttribute('data-id'), kind: inner ? inner.getAttribute('data-kind') : '',
             x0: r.left, y0: r.top, x1: r.right, y1: r.bottom };
  });
  const by = new Map(cards.map((k) => [k.id, k]));
  const tol = 1;
  const inside = (k) => k.x0 >= c.left - tol && k.y0 >= c.top - tol && k.x1 <= c.right + tol && k.y1 <= c.bottom + tol;
  const outside = (k) => k.x1 <= c.left + tol || k.x0 >= c.right - tol || k.y1 <= c.top + tol || k.y0 >= c.bottom - tol;
  const cut = cards.filter((k) => !inside(k) && !outside(k)).map((k) => k.id);
  const inView = cards.filter(inside).map((k) => k.id);
  const overlaps = [];
  const s = [...cards].sort((a, b) => a.x0 - b.x0);
  for (let i = 0; i < s.length; i++)
    for (let j = i + 1; j < s.length && s[j].x0 < s[i].x1 - tol; j++)
      if (s[i].y0 < s[j].y1 - tol && s[j].y0 < s[i].y1 - tol) overlaps.push([s[i].id, s[j].id]);
  const through = [];
  for (const g of document.querySelectorAll('.react-flow__edge')) {
    const id = g.getAttribute('data-id') || (g.getAttribute('data-testid') || '').replace('rf__edge-', '');
    if (!id.startsWith('t-')) continue;
    const path = g.querySelector('path.react-flow__edge-path');
    if (!path) continue;
    const m = path.getScreenCTM(), len = path.getTotalLength();
    const target = id.slice(2);
    const p0 = path.getPointAtLength(0), sx = p0.x * m.a + p0.y * m.c + m.e, sy = p0.x * m.b + p0.y * m.d + m.f;
    for (let l = 0; l <= len; l += 6) {
      const p = path.getPointAtLength(l);
      const x = p.x * m.a + p.y * m.c + m.e, y = p.x * m.b + p.y * m.d + m.f;
      const hit = cards.find((k) => k.id !== target && x > k.x0 + 2 && x < k.x1 - 2 && y > k.y0 + 2 && y < k.y1 - 2
        && !(sx >= k.x0 - 2 && sx <= k.x1 + 2 && sy >= k.y0 - 2 && sy <= k.y1 + 2));
      if (hit) { through.push([id, hit.id]); break; }
    }
  }
  let minText = Infinity;
  for (const n of document.querySelectorAll('.react-flow__node')) {
    if (!inView.includes(n.getAttribute('data-id'))) continue;
    for (const e of [n, ...n.querySelectorAll('*')])
      if ([...e.childNodes].some((t) => t.nodeType === 3 && t.textContent.trim()))
        minText = Math.min(minText, parseFloat(getComputedStyle(e).fontSize) * zoom);
  }
  return { cards: cards.length, cut, overlaps, through, inView, minText, zoom,
           kinds: Object.fromEntries(cards.map((k) => [k.id, k.kind])), canvas: [c.width, c.height] };
}"""


def settle(page: Any, quiet_ms: int = 700, timeout_ms: int = 60_000) -> None:
    """Wait until the canvas has laid itself out and placed its view, and nothing moved for a while."""
    page.wait_for_function("() => window.__mindmapReady && !window.__mindmapBusy", timeout=timeout_ms)
    page.wait_for_function(
        """(q) => { const vp = document.querySelector('.react-flow__viewport');
          const key = (vp ? getComputedStyle(vp).transform : '') + '|'
            + [...document.querySelectorAll('.react-flow__node')].map((n) => n.style.transform).join(',');
          const now = performance.now();
          if (window.__mmKey !== key || window.__mindmapBusy) {
            window.__mmKey = key; window.__mmSince = now; return false; }
          return now - window.__mmSince >= q; }""",
        arg=quiet_ms,
        timeout=timeout_ms,
        polling=100,
    )


def problems(g: dict[str, Any], new_ids: set[str] | None = None) -> list[str]:
    """What is wrong with the view `g` (from GEOMETRY_JS), in words; [] when it reads well."""
    out = []
    if g["cut"]:
        out.append(f"{len(g['cut'])} card(s) cut by the canvas edge: {[g['kinds'][i] for i in g['cut']]}")
    if g["overlaps"]:
        out.append(f"{len(g['overlaps'])} overlapping card pair(s)")
    if g["through"]:
        out.append(f"{len(g['through'])} tree edge(s) through a card")
    if not g["inView"]:
        out.append("no card wholly in view")
    elif g["minText"] < 11:
        out.append(f"text {g['minText']:.1f} px on screen (< 11)")
    if new_ids and not (new_ids & set(g["inView"])):
        out.append(f"none of the {len(new_ids)} new node(s) in view")
    return out
