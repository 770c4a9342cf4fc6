"""react-pdf (pdf.js) wrapper with a highlighter that finds a quote across line breaks,
hyphenation and ligatures in the rendered text layer and wraps it in <mark>."""

from __future__ import annotations

import reflex as rx
from reflex.components.component import NoSSRComponent
from reflex.vars.base import Var
from reflex.vars.function import FunctionStringVar

REACT_PDF = "react-pdf@10.4.1"

# Matching works on letters and digits only (NFKD, accents dropped, lower case), so
# "hyphen-\nation", "ﬁ" vs "fi" and any whitespace differences do not matter; each kept
# character remembers its (span, offset) so the match can be wrapped in <mark> elements.
_HIGHLIGHT_JS = r"""
const bayesNorm = (s) => s.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
const bayesHighlight = (quote, pageNumber) => {
  if (typeof document === "undefined" || !quote) return;
  const layer = document.querySelector(
    `.react-pdf__Page[data-page-number="${pageNumber}"] .textLayer`);
  if (!layer) return;
  const spans = Array.from(layer.querySelectorAll("span")).filter(
    (s) => s.childElementCount === 0 && s.textContent);
  const chars = []; const where = [];
  spans.forEach((span, si) => {
    const text = span.textContent;
    for (let i = 0; i < text.length; i++) {
      for (const c of bayesNorm(text[i])) {
        if (/[\p{L}\p{N}]/u.test(c)) { chars.push(c); where.push([si, i]); }
      }
    }
  });
  const hay = chars.join("");
  const needle = Array.from(bayesNorm(quote)).filter((c) => /[\p{L}\p{N}]/u.test(c)).join("");
  if (!needle) return;
  const at = hay.indexOf(needle);
  if (at < 0) { layer.setAttribute("data-quote-found", "no"); return; }
  const first = where[at]; const last = where[at + needle.length - 1];
  const ranges = new Map();
  for (let si = first[0]; si <= last[0]; si++) {
    const len = spans[si].textContent.length;
    ranges.set(si, [si === first[0] ? first[1] : 0, si === last[0] ? last[1] + 1 : len]);
  }
  const esc = (t) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  let firstMark = null;
  ranges.forEach(([a, b], si) => {
    const span = spans[si]; const t = span.textContent;
    span.innerHTML = esc(t.slice(0, a)) + `<mark class="pdf-hit">${esc(t.slice(a, b))}</mark>` + esc(t.slice(b));
    firstMark = firstMark || span.querySelector("mark");
  });
  layer.setAttribute("data-quote-found", "yes");
  if (firstMark) firstMark.scrollIntoView({ block: "center" });
};
const bayesHighlighter = (quote, pageNumber) => () => bayesHighlight(quote, pageNumber);
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
            _HIGHLIGHT_JS,
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
    on_render_text_layer_success: Var[str]

    @classmethod
    def create(cls, *children, quote=None, **props):
        if quote is not None:
            props["on_render_text_layer_success"] = FunctionStringVar.create(
                "bayesHighlighter").call(quote, props.get("page_number"))
        return super().create(*children, **props)


pdf_document = Document.create
pdf_page = Page.create
