"""react-pdf (pdf.js) wrapper: the page canvas and text layer, and a hook run after each render."""

from __future__ import annotations

import reflex as rx
from reflex.components.component import NoSSRComponent
from reflex.event import passthrough_event_spec
from reflex.vars.base import Var
from reflex.vars.function import FunctionStringVar

REACT_PDF = "react-pdf@10.4.1"

# The quote's boxes are drawn by the viewer page over the canvas (pdfium's character boxes in
# page percentages), so nothing here touches the text layer: scrolling an element inside it
# (scrollIntoView on a <mark>) scrolled the overflow:hidden layer and it drifted off the canvas.
# After each render the outer containers (never the layer) are scrolled to centre the quote; the viewer
# is marked `data-rendered="<page>@<width>"` for whoever waits for the page.
_RENDERED_JS = r"""
const bayesRendered = (pageNumber, width) => () => {
  if (typeof document === "undefined") return;
  const view = document.getElementById("pdf-view");
  if (!view) return;
  const boxes = Array.from(view.querySelectorAll(".pdf-box")).map((b) => b.getBoundingClientRect());
  if (boxes.length) {
    // the whole quote when it fits the window, else its first line (a quote crossing columns)
    const top = Math.min(...boxes.map((r) => r.top)); const bottom = Math.max(...boxes.map((r) => r.bottom));
    const r = bottom - top < window.innerHeight * 0.8 ? { top, bottom, left: boxes[0].left } : boxes[0];
    const v = view.getBoundingClientRect();
    view.scrollLeft += r.left - v.left - view.clientWidth / 4;
    window.scrollBy({ top: (r.top + r.bottom) / 2 - window.innerHeight / 2, behavior: "instant" });
  }
  view.setAttribute("data-rendered", `${pageNumber}@${width}`);
};
"""


class PdfLib(NoSSRComponent):
    library = REACT_PDF

    def add_imports(self) -> dict:
        return {"": ["react-pdf/dist/Page/TextLayer.css", "react-pdf/dist/Page/AnnotationLayer.css"]}

    def add_custom_code(self) -> list[str]:
        return [
            "import pdfWorkerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';",
            """if (typeof window !== "undefined") {
  import('react-pdf').then(({ pdfjs }) => { pdfjs.GlobalWorkerOptions.workerSrc = pdfWorkerUrl; });
}""",
            _RENDERED_JS,
        ]


class Document(PdfLib):
    tag = "Document"
    file: Var[str]
    on_load_success: rx.EventHandler[lambda doc: [doc["numPages"].to(int)]]
    on_load_error: rx.EventHandler[lambda err: [err["message"].to(str)]]


class Page(PdfLib):
    tag = "Page"
    page_number: Var[int]
    width: Var[int]
    on_render_success: Var[str]

    @classmethod
    def create(cls, *children, **props):
        props["on_render_success"] = FunctionStringVar.create("bayesRendered").call(
            props.get("page_number"), props.get("width")
        )
        return super().create(*children, **props)


# Pinch to zoom on touch screens: two fingers scale the page live (a CSS transform around the
# fingers' midpoint), and when they lift the new scale is sent as a ratio, so the page is drawn
# again sharp at the new zoom (the buttons' zoom). The box's `touch-action: pan-x pan-y` keeps
# the browser from zooming the whole page instead.
_PINCH_JS = r"""
function PinchZoom({ onPinch, children }) {
  const box = useRef(null);
  const cb = useRef(onPinch);
  cb.current = onPinch;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let start = 0, ratio = 1;
    const dist = (t) => Math.hypot(t[0].clientX - t[1].clientX, t[0].clientY - t[1].clientY);
    const inner = () => el.firstElementChild;
    const down = (e) => {
      if (e.touches.length !== 2) return;
      start = dist(e.touches); ratio = 1;
      if (!inner()) return;
      const r = inner().getBoundingClientRect();
      const x = (e.touches[0].clientX + e.touches[1].clientX) / 2 - r.left;
      const y = (e.touches[0].clientY + e.touches[1].clientY) / 2 - r.top;
      inner().style.transformOrigin = `${x}px ${y}px`;
    };
    const move = (e) => {
      if (!start || e.touches.length !== 2) return;
      e.preventDefault();
      ratio = Math.max(0.25, Math.min(4, dist(e.touches) / start));
      if (inner()) inner().style.transform = `scale(${ratio})`;
    };
    const up = (e) => {
      if (!start || e.touches.length >= 2) return;
      start = 0;
      if (inner()) inner().style.transform = "";
      if (Math.abs(ratio - 1) > 0.05 && cb.current) cb.current(ratio);
    };
    el.addEventListener("touchstart", down, { passive: true });
    el.addEventListener("touchmove", move, { passive: false });
    el.addEventListener("touchend", up, { passive: true });
    el.addEventListener("touchcancel", up, { passive: true });
    return () => {
      el.removeEventListener("touchstart", down);
      el.removeEventListener("touchmove", move);
      el.removeEventListener("touchend", up);
      el.removeEventListener("touchcancel", up);
    };
  }, []);
  return createElement("div", { ref: box, className: "pinch-zoom", style: { touchAction: "pan-x pan-y" } },
    createElement("div", { className: "pinch-inner" }, children));
}
"""


class PinchZoom(rx.Component):
    """`<PinchZoom>`: a box whose two-finger pinch calls ``on_pinch(ratio)`` when the fingers lift."""

    tag = "PinchZoom"
    on_pinch: rx.EventHandler[passthrough_event_spec(float)]

    def add_imports(self) -> dict:
        return {"react": [rx.ImportVar(tag=t) for t in ("createElement", "useEffect", "useRef")]}

    def add_custom_code(self) -> list[str]:
        return [_PINCH_JS]


pdf_document = Document.create
pdf_page = Page.create
pinch_zoom = PinchZoom.create
