"""Small papers made on the fly with a title, a body and a numbered reference list, so the
citation graph can be tested on real ingestion (pdfium text, structure analysis, reference
parsing). Titles and DOIs go into the PDF's info dict the way publishers' PDFs carry them."""

from __future__ import annotations

from dataclasses import dataclass, field


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


@dataclass
class CitedPaper:
    title: str
    year: int
    authors: list[str] = field(default_factory=lambda: ["Ada Lovelace", "Alan Turing"])
    doi: str | None = None
    references: list[str] = field(default_factory=list)  # entries, written as "[n] entry"
    body: list[str] = field(
        default_factory=lambda: [
            "We study how small research tools can keep track of the literature.",
            "Our method compares reference lists across the papers of one library.",
            "The results show that such links help readers find related work quickly.",
        ]
    )


def reference(authors: str, title: str, venue: str, year: int, doi: str | None = None) -> str:
    """One entry in IEEE style: ``A. Name and B. Name, "Title," in Venue, 2020. doi:…``."""
    entry = f'{authors}, "{title}," in {venue}, {year}.'
    return entry + (f" doi:{doi}" if doi else "")


def paper_pdf(paper: CitedPaper) -> bytes:
    """A two-page PDF: title, authors and body on page 1, the reference list on page 2."""
    page1 = [
        ("F2", 16, paper.title),
        ("F1", 11, ", ".join(paper.authors)),
        ("F1", 11, f"Published {paper.year}" + (f". DOI: {paper.doi}" if paper.doi else "")),
        ("F2", 12, "1 Introduction"),
        *[("F1", 11, line) for line in paper.body],
    ]
    page2 = [
        ("F2", 12, "References"),
        *[("F1", 9, f"[{i}] {entry}") for i, entry in enumerate(paper.references, start=1)],
    ]
    streams = []
    for lines in (page1, page2):
        body = ["BT", "50 780 Td"]
        for font, size, text in lines:
            body += [f"/{font} {size} Tf", f"{size + 5} TL", f"({_esc(text)}) Tj T*"]
        body.append("ET")
        streams.append("\n".join(body).encode("latin-1", "replace"))
    objs: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>"]
    for k, stream in enumerate(streams):
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Resources << /Font << "
            f"/F1 7 0 R /F2 8 0 R >> >> /Contents {4 + 2 * k} 0 R >>".encode()
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
    info = f"<< /Title ({_esc(paper.title)}) /Author ({_esc('; '.join(paper.authors))})"
    info += f" /Subject (doi:{_esc(paper.doi)})" if paper.doi else ""
    objs.append((info + " >>").encode("latin-1", "replace"))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, o in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + o + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R /Info {len(objs)} 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)
