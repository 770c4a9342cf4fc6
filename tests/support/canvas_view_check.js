// Runs the canvas view functions of assets/js/mindmap_canvas.js on a layered map of 151 cards (no
// browser): tests/unit/test_canvas_view_js.py reads the JSON it prints.
const fs = require("fs");
const src = fs.readFileSync(process.argv[2], "utf8");
const stubs = `const createElement=()=>null, memo=(f)=>f, Handle=null, Position={}, useState=null, useEffect=null,
  useLayoutEffect=null, useCallback=null, useRef=null, useMemo=null, ReactFlow=null, ReactFlowProvider=null,
  Background=null, Controls=null, ControlButton=null, MiniMap=null, useNodesState=null, useReactFlow=null, useUpdateNodeInternals=null;
  class ELK { layout() {} }`;
const api = new Function(stubs + src + "; return { mmPlaceView, mmClean, mmSearch, mmBounds, mmOpeningFocus };")();
// a layered map: root, 10 themes, 14 claims each (x by layer, y stacked)
const rs = [];
let y = 0;
for (let t = 0; t < 10; t++) {
  const ty = y;
  for (let c = 0; c < 14; c++) { rs.push({ id: `c${t}_${c}`, kind: "claim", x: 512, y, w: 260, h: 62 }); y += 80; }
  rs.push({ id: `t${t}`, kind: "theme", x: 256, y: ty + 14 * 40 - 40, w: 200, h: 44 });
}
rs.push({ id: "root", kind: "question", x: 0, y: rs.find((r) => r.id === "t9").y, w: 200, h: 60 });
const cut = (v, W, H) => rs.filter((r) => {
  const x0 = r.x * v.zoom + v.x, y0 = r.y * v.zoom + v.y, x1 = (r.x + r.w) * v.zoom + v.x, y1 = (r.y + r.h) * v.zoom + v.y;
  const inside = x0 >= -0.5 && y0 >= -0.5 && x1 <= W + 0.5 && y1 <= H + 0.5;
  const outside = x1 <= 0.5 || x0 >= W - 0.5 || y1 <= 0.5 || y0 >= H - 0.5;
  return !inside && !outside; }).map((r) => r.id);
const inView = (v, W, H, id) => { const r = rs.find((q) => q.id === id);
  return r.x * v.zoom + v.x >= -0.5 && r.y * v.zoom + v.y >= -0.5 && (r.x + r.w) * v.zoom + v.x <= W + 0.5 && (r.y + r.h) * v.zoom + v.y <= H + 0.5; };
// the tree of it, as mmTree gives (kids of the root: the themes; of a theme: its claims)
const tree = { kids: new Map([["root", Array.from({ length: 10 }, (_, t) => `t${t}`)],
  ...Array.from({ length: 10 }, (_, t) => [`t${t}`, Array.from({ length: 14 }, (_, c) => `c${t}_${c}`)])]) };
const out = [];
for (const [W, H] of [[786, 612], [358, 574], [1150, 612]]) {
  const focus = api.mmOpeningFocus(rs, "root", "t9", tree);
  const t0 = Date.now();
  const v = api.mmPlaceView(rs, W, H, focus, null);
  out.push({ W, H, ms: Date.now() - t0, zoom: v.zoom, cut: cut(v, W, H), root: inView(v, W, H, "root"), t9: inView(v, W, H, "t9"),
    claims9: Array.from({ length: 14 }, (_, c) => `c9_${c}`).filter((id) => inView(v, W, H, id)).length });
  const v2 = api.mmPlaceView(rs, W, H, ["c3_5"], { x: -100, y: -900, zoom: 1 });
  out.push({ W, H, pref: true, zoom: v2.zoom, cut: cut(v2, W, H), c35: inView(v2, W, H, "c3_5") });
}
console.log(JSON.stringify(out));
console.log("clean", api.mmClean(rs, []), api.mmClean([...rs, { id: "x", x: 520, y: 10, w: 100, h: 40 }], []));
// a phone-wide canvas over a map whose columns are closer than its width at a readable zoom
// (question 12-272, themes 316-515, claims 577-837): after a run that wrote the last theme and its
// claims, its claims are shown; asked for the theme (an edit), which cannot be shown alone at
// 0.95-1.1 without its neighbours cut, it is shown closer up (#40)
const cols = [{ id: "q", kind: "question", x: 12, y: 4335, w: 260, h: 68 }];
for (let t = 0; t < 6; t++) {
  cols.push({ id: `T${t}`, kind: "theme", x: 316, y: 800 * t + 344, w: 199, h: 50 });
  for (let c = 0; c < 8; c++) cols.push({ id: `C${t}_${c}`, kind: "claim", x: 577, y: 800 * t + 98 * c, w: 260, h: 81 });
}
const shown = (vp, id) => { const r = cols.find((q) => q.id === id);
  return r.x * vp.zoom + vp.x >= 0 && (r.x + r.w) * vp.zoom + vp.x <= 356 && r.y * vp.zoom + vp.y >= 0 && (r.y + r.h) * vp.zoom + vp.y <= 572; };
const cutP = (vp) => cols.filter((r) => {
  const x0 = r.x * vp.zoom + vp.x, y0 = r.y * vp.zoom + vp.y, x1 = (r.x + r.w) * vp.zoom + vp.x, y1 = (r.y + r.h) * vp.zoom + vp.y;
  return !(x0 >= -0.5 && y0 >= -0.5 && x1 <= 356.5 && y1 <= 572.5) && !(x1 <= 0.5 || x0 >= 355.5 || y1 <= 0.5 || y0 >= 571.5); }).map((r) => r.id);
// as the canvas asks after a run on a phone: the cards the run ends on (claims) before their theme
const written = [...Array.from({ length: 8 }, (_, c) => `C5_${c}`), "T5"];
const pref = { x: -217, y: -3865, zoom: 0.95 };
const afterRun = api.mmPlaceView(cols, 356, 572, written, pref), theme = api.mmPlaceView(cols, 356, 572, ["T5"], pref);
console.log(JSON.stringify({ run: { zoom: afterRun.zoom, cut: cutP(afterRun), claims: written.filter((id) => id !== "T5" && shown(afterRun, id)).length },
  theme: { zoom: theme.zoom, cut: cutP(theme), shown: shown(theme, "T5") } }));
