"""A text bomb: a tiny PDF whose pages all draw one Flate-compressed content stream holding
a huge run of text (raw PDF objects, as tests/support/tiny_pdf.py writes them)."""

from __future__ import annotations

import zlib


def text_bomb_pdf(pages: int = 3, chars: int = 1_500_000, word: int = 0) -> bytes:
    """`pages` pages sharing one content stream that shows `chars` characters; with `word`
    > 0 a space follows every `word` letters, else it is one run without spaces."""
    unit = b"A" * word + b" " if word else b"A"
    text = (unit * (chars // len(unit) + 1))[:chars]
    # Many short Tj operators: the text is one string to a reader, not one giant PDF string.
    step = 4096
    shows = b"".join(b"(" + text[i : i + step] + b") Tj\n" for i in range(0, chars, step))
    stream = zlib.compress(b"BT /F1 1 Tf 10 400 Td\n" + shows + b"ET\n", 9)
    content_id, font_id, first_page = 3, 4, 5
    objs: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (first_page + i) for i in range(pages)), pages),
        content_id: b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        font_id: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for i in range(pages):
        objs[first_page + i] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>" % (font_id, content_id)
        )
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for n in sorted(objs):
        offsets[n] = len(out)
        out += b"%d 0 obj\n" % n + objs[n] + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for n in sorted(objs):
        out += b"%010d 00000 n \n" % offsets[n]
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)
