"""Small text PDFs made on the fly (a real text layer in Helvetica), distinct per seed."""

from __future__ import annotations


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _pdf(contents: list[str]) -> bytes:
    """A PDF with one page per content stream, all in Helvetica as font /F1 (WinAnsi: Latin-1
    text such as German or French comes back out as written)."""
    page_ids = [3 + 2 * i for i in range(len(contents))]
    font_id = 3 + 2 * len(contents)
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    objs: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(contents)} >>".encode(),
    ]
    for n, content in enumerate(contents):
        stream = content.encode("latin-1", "replace")
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> /Contents {page_ids[n] + 1} 0 R >>".encode()
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, o in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + o + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def text_pdf(title: str, paragraphs: list[str] | None = None, pages: int = 1) -> bytes:
    """A valid PDF with `pages` pages of text (title + paragraphs)."""
    paragraphs = paragraphs or [
        f"This short document is about {title}.",
        "It exists so that the library has something to index.",
    ]
    contents = []
    for n in range(pages):
        body = ["BT", "/F1 12 Tf", "14 TL", "50 780 Td"]
        body += [f"({_esc(line)}) Tj T*" for line in [f"{title} (page {n + 1})", *paragraphs]]
        contents.append("\n".join([*body, "ET"]))
    return _pdf(contents)


Run = tuple[str, float, float]  # (text, font size, baseline rise in points)


def runs_pdf(pages: list[list[list[Run]]]) -> bytes:
    """A PDF whose pages are lines of runs, each run with its own font size and baseline rise
    (a superscript is a smaller run raised above the line: ("8", 7, 4))."""
    contents = []
    for lines in pages:
        body = ["BT"]
        for k, line in enumerate(lines):
            body.append(f"1 0 0 1 50 {780 - 16 * k} Tm")
            body += [f"/F1 {size:g} Tf {rise:g} Ts ({_esc(text)}) Tj" for text, size, rise in line]
        contents.append("\n".join([*body, "ET"]))
    return _pdf(contents)
