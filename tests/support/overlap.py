"""How well the viewer's drawn highlight covers a quote's characters: the boxes the viewer drew
(measured in the page) against character boxes given as page fractions, projected onto the
rendered canvas in the viewport. Shared by the text-layer and the scanned-page highlight tests."""

from __future__ import annotations

import numpy as np

MEASURE_JS = """(page) => {
  const c = document.querySelector(`.react-pdf__Page[data-page-number="${page}"] canvas`);
  const r = c.getBoundingClientRect();
  const boxes = Array.from(document.querySelectorAll('#pdf-view .pdf-box')).map((b) => {
    const q = b.getBoundingClientRect(); return [q.left, q.top, q.right, q.bottom]; });
  const layers = Array.from(document.querySelectorAll('.textLayer')).map((l) => l.scrollTop + l.scrollLeft);
  return {canvas: [r.left, r.top, r.width, r.height], boxes, layers,
          vw: document.documentElement.clientWidth, sw: document.documentElement.scrollWidth,
          vh: window.innerHeight};
}"""


def _rects_area(rects: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Boolean grid (cells between consecutive ys × xs) of the cells inside any rectangle."""
    cx, cy = (xs[:-1] + xs[1:]) / 2, (ys[:-1] + ys[1:]) / 2
    inside = np.zeros((len(cy), len(cx)), bool)
    for x0, y0, x1, y1 in rects:
        inside |= ((cy >= y0) & (cy <= y1))[:, None] & ((cx >= x0) & (cx <= x1))[None, :]
    return inside


def check(m: dict, chars: list[tuple[float, float, float, float]], what: str, min_cover: float = 0.9) -> float:
    """The union of the drawn boxes (`m` from MEASURE_JS) covers ≥ ``min_cover`` of the
    characters' boxes (projected onto the canvas) and reaches no further than one line beyond
    them; no text layer is scrolled and the page does not scroll sideways. Returns the cover."""
    left, top, width, height = m["canvas"]
    assert chars, what
    assert all(v == 0 for v in m["layers"]), f"{what}: a text layer was scrolled {m['layers']}"
    ch = np.array(
        [(left + x0 * width, top + y0 * height, left + x1 * width, top + y1 * height) for x0, y0, x1, y1 in chars]
    )
    hl = np.array(m["boxes"], float).reshape(-1, 4)
    assert len(hl), f"{what}: nothing highlighted"
    line = float(np.median(ch[:, 3] - ch[:, 1]))
    grown = ch + np.array([-line, -line, line, line])
    xs = np.unique(np.concatenate([ch[:, [0, 2]].ravel(), hl[:, [0, 2]].ravel(), grown[:, [0, 2]].ravel()]))
    ys = np.unique(np.concatenate([ch[:, [1, 3]].ravel(), hl[:, [1, 3]].ravel(), grown[:, [1, 3]].ravel()]))
    cell = np.diff(ys)[:, None] * np.diff(xs)[None, :]
    c, h, g = _rects_area(ch, xs, ys), _rects_area(hl, xs, ys), _rects_area(grown, xs, ys)
    covered = (cell * (c & h)).sum() / (cell * c).sum()
    beyond = (cell * (h & ~g)).sum()
    assert covered >= min_cover, f"{what}: the highlight covers {covered:.0%} of the quote's characters"
    assert beyond <= 0.01 * (cell * h).sum(), f"{what}: {beyond:.0f} px² highlighted beyond one line"
    assert m["sw"] <= m["vw"] + 1, f"{what}: the page scrolls sideways ({m['sw']} > {m['vw']})"
    return float(covered)
