"""Small text PDFs made on the fly (a real text layer in Helvetica), distinct per seed."""

from __future__ import annotations


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def text_pdf(title: str, paragraphs: list[str] | None = None, pages: int = 1) -> bytes:
    """A valid PDF with `pages` pages of text (title + paragraphs)."""
    paragraphs = paragraphs or [
        f"This short document is about {title}.",
        "It exists so that the library has something to index.",
    ]
    objs: list[bytes] = []
    page_ids = [3 + 2 * i for i in range(pages)]
    font_id = 3 + 2 * pages
    objs.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    for n in range(pages):
        lines = [f"{title} (page {n + 1})", *paragraphs]
        body = ["BT", "/F1 12 Tf", "14 TL", "50 780 Td"]
        for line in lines:
            body.append(f"({_esc(line)}) Tj T*")
        body.append("ET")
        stream = "\n".join(body).encode("latin-1", "replace")
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] "
            f"/Resources << /Font << /F1 {font_id} 0 R >> >> /Contents {page_ids[n] + 1} 0 R >>".encode()
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    # WinAnsi: Latin-1 text (German, French) comes back out as written.
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


Run = tuple[str, float, float]  # (text, font size, baseline rise in points)


def runs_pdf(pages: list[list[list[Run]]]) -> bytes:
    """A PDF whose pages are lines of runs, each run with its own font size and baseline rise
    (a superscript is a smaller run raised above the line: ("8", 7, 4))."""
    objs: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    page_ids = [3 + 2 * i for i in range(len(pages))]
    font_id = 3 + 2 * len(pages)
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for n, lines in enumerate(pages):
        body = ["BT"]
        for k, line in enumerate(lines):
            body.append(f"1 0 0 1 50 {780 - 16 * k} Tm")
            for text, size, rise in line:
                body.append(f"/F1 {size:g} Tf {rise:g} Ts ({_esc(text)}) Tj")
        body.append("ET")
        stream = "\n".join(body).encode("latin-1", "replace")
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
