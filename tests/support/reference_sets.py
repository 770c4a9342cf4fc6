"""Generated reference lists with known fields, in eight citation styles, and generated
first pages that print their venue and year (for the metadata and reference-parsing checks
and ``benchmarks/references.py``). Deterministic for a seed."""

from __future__ import annotations

import random
from dataclasses import dataclass

STYLES = ("apa", "acs", "vancouver", "ieee", "nature", "chicago", "arxiv", "proceedings")

_FIRST = "Lena Marco Ana Wei Priya Tomas Sofia Kenji Amara Lukas Ines Omar Hana Pablo Mei Jonas".split()
_MIDDLE = ["", "", "A.", "J.", "K."]
_LAST = (
    "Okafor Rossi Garcia Chen Sharma Novak Lindqvist Tanaka Mensah Weber Duarte Haddad Kim Ortega Zhang "
    "Fischer Moreau Kowalski Silva Nakamura Petrov Dubois Jensen Costa"
).split()
_TOPIC = (
    "graph neural networks;molecular property prediction;protein structure;citation recommendation;"
    "retrieval-augmented generation;active learning;climate downscaling;causal discovery;"
    "scientific claim verification;few-shot classification;reaction yield prediction;"
    "federated optimisation;speech recognition;materials discovery;literature-based discovery"
).split(";")
_FRAME = [
    "A survey of {t}",
    "Scaling laws for {t} in low-data regimes",
    "Uncertainty estimates for {t}",
    "On the limits of {t}",
    "Benchmarking {t} across domains",
    "Self-supervised pretraining improves {t}",
    "Interpretable models for {t}",
    "Learning to rank for {t}",
]
_JOURNALS = [
    ("Journal of Chemical Information and Modeling", "J. Chem. Inf. Model."),
    ("Nature Communications", "Nat. Commun."),
    ("Machine Learning: Science and Technology", "Mach. Learn. Sci. Technol."),
    ("Journal of Machine Learning Research", "J. Mach. Learn. Res."),
    ("Bioinformatics", "Bioinformatics"),
    ("Physical Review Letters", "Phys. Rev. Lett."),
]
_CONFS = [
    "Advances in Neural Information Processing Systems",
    "International Conference on Machine Learning",
    "Annual Meeting of the Association for Computational Linguistics",
    "Conference on Empirical Methods in Natural Language Processing",
]


@dataclass(frozen=True)
class Work:
    """A cited work with the fields a parser must recover."""

    authors: tuple[tuple[str, str, str], ...]  # (first, middle initial or "", last)
    year: int
    title: str
    journal: str
    abbrev: str
    volume: int
    issue: int
    first_page: int
    last_page: int
    doi: str
    arxiv: str

    @property
    def first_author_last(self) -> str:
        return self.authors[0][2]


def random_work(rng: random.Random, year: int | None = None, title: str | None = None) -> Work:
    n = rng.choice([1, 2, 2, 3, 3, 4, 5])
    lasts = rng.sample(_LAST, n)
    authors = tuple((rng.choice(_FIRST), rng.choice(_MIDDLE), last) for last in lasts)
    y = year or rng.randrange(1998, 2025)
    journal, abbrev = rng.choice(_JOURNALS)
    first = rng.randrange(1, 900)
    return Work(
        authors=authors,
        year=y,
        title=title or rng.choice(_FRAME).format(t=rng.choice(_TOPIC)),
        journal=journal,
        abbrev=abbrev,
        volume=rng.randrange(1, 80),
        issue=rng.randrange(1, 12),
        first_page=first,
        last_page=first + rng.randrange(5, 30),
        doi=f"10.{rng.randrange(1000, 9999)}/x{rng.randrange(10**5, 10**6)}",
        arxiv=f"{y % 100:02d}{rng.randrange(1, 13):02d}.{rng.randrange(10000, 99999)}",
    )


def _initials(first: str, middle: str, spaced: bool = True) -> str:
    parts = [first[0] + "."] + ([middle] if middle else [])
    return (" " if spaced else "").join(parts)


def _names(w: Work, fmt, sep: str = ", ", last_sep: str | None = None) -> str:
    names = [fmt(*a) for a in w.authors]
    if last_sep and len(names) > 1:
        return sep.join(names[:-1]) + last_sep + names[-1]
    return sep.join(names)


def _sentence_title(t: str) -> str:
    return t


def _title_case(t: str) -> str:
    small = {"a", "an", "of", "for", "in", "on", "the", "to", "and", "across"}
    return " ".join(x if (i and x in small) else x[:1].upper() + x[1:] for i, x in enumerate(t.split()))


def format_entry(w: Work, style: str) -> str:
    """``w`` as one reference-list entry (without its list number) in ``style``."""
    pages = f"{w.first_page}–{w.last_page}"
    if style == "apa":
        names = _names(w, lambda f, m, last: f"{last}, {_initials(f, m)}", ", ", ", & ")
        return f"{names} ({w.year}). {w.title}. {w.journal}, {w.volume}({w.issue}), {pages}. https://doi.org/{w.doi}"
    if style == "acs":
        names = _names(w, lambda f, m, last: f"{last}, {_initials(f, m)}", "; ")
        return f"{names} {_title_case(w.title)}. {w.abbrev} {w.year}, {w.volume}, {pages}."
    if style == "vancouver":
        names = _names(w, lambda f, m, last: f"{last} {f[0]}{m[:1]}", ", ")
        where = f"{w.year};{w.volume}({w.issue}):{w.first_page}-{w.last_page}"
        return f"{names}. {w.title}. {w.abbrev.replace('.', '')}. {where}."
    if style == "ieee":
        names = _names(
            w, lambda f, m, last: f"{_initials(f, m)} {last}", ", ", ", and " if len(w.authors) > 2 else " and "
        )
        return f'{names}, "{w.title}," {w.abbrev}, vol. {w.volume}, no. {w.issue}, pp. {pages}, {w.year}.'
    if style == "nature":
        names = _names(w, lambda f, m, last: f"{last}, {_initials(f, m)}", ", ", " & ")
        return f"{names} {w.title}. {w.abbrev} {w.volume}, {pages} ({w.year})."
    if style == "chicago":
        a0 = w.authors[0]
        rest = [f"{f} {last}" for f, _m, last in w.authors[1:]]
        names = f"{a0[2]}, {a0[0]}" + (
            (", " + ", ".join(rest[:-1]) + (", and " if len(rest) > 1 else " and ") + rest[-1]) if rest else ""
        )
        return f'{names}. {w.year}. "{_title_case(w.title)}." {w.journal} {w.volume} ({w.issue}): {pages}.'
    if style == "arxiv":
        names = _names(w, lambda f, m, last: f"{_initials(f, m)} {last}", ", ", " and ")
        return f"{names}. {w.title}. arXiv preprint arXiv:{w.arxiv}, {w.year}."
    if style == "proceedings":
        names = _names(w, lambda f, _m, last: f"{f} {last}", ", ", ", and " if len(w.authors) > 2 else " and ")
        conf = _CONFS[w.volume % len(_CONFS)]
        return f"{names}. {w.year}. {w.title}. In Proceedings of the {conf}, pages {pages}."
    raise ValueError(style)


def numbered(entries: list[str], style: str) -> list[str]:
    """Entries with the list markers the style uses (author-year styles: none)."""
    if style in ("apa", "chicago", "proceedings"):
        return list(entries)
    if style == "acs":
        return [f"({i}) {e}" for i, e in enumerate(entries, 1)]
    if style in ("ieee", "arxiv"):
        return [f"[{i}] {e}" for i, e in enumerate(entries, 1)]
    return [f"{i}. {e}" for i, e in enumerate(entries, 1)]


def reference_set(style: str, n: int = 30, seed: int = 1) -> list[tuple[str, Work]]:
    """``n`` (entry text, truth) pairs in ``style``."""
    rng = random.Random(f"{style}:{seed}")
    works = [random_work(rng) for _ in range(n)]
    return [(format_entry(w, style), w) for w in works]


@dataclass(frozen=True)
class PrintedPaper:
    """A first page that prints its year in one of the ways papers do, and a different
    CreationDate in the file's info."""

    title: str
    lines: tuple[str, ...]  # the first page's lines under the title
    year: int
    creation_year: int
    doi: str | None = None


def printed_papers(seed: int = 3) -> list[PrintedPaper]:
    """One paper per way of printing the year (and one that prints none: year None)."""
    rng = random.Random(seed)
    out = []
    kinds = [
        lambda y, w: (f"{w.journal} {w.volume} ({y}) {w.first_page}-{w.last_page}",),
        lambda y, w: (f"{w.journal} {w.volume} ({y}) {w.first_page}-{w.last_page}", f"doi:{w.doi}"),
        lambda y, _w: (f"© {y} The Authors. Published under a CC BY licence.",),
        lambda y, _w: (f"March {rng.randrange(1, 28)}, {y}",),
        lambda y, w: (f"{w.abbrev} {y};{w.volume}({w.issue}):{w.first_page}-{w.last_page}",),
        lambda y, w: (f"{w.abbrev} {y}, {w.volume}, {w.first_page}-{w.last_page}",),
        lambda y, _w: (f"arXiv:{y % 100:02d}0{rng.randrange(1, 9)}.{rng.randrange(10000, 99999)}v1 [cs.LG] 3 Mar {y}",),
        lambda y, w: (f"Vol. {w.volume}, No. {w.issue}, {y}",),
    ]
    for k, kind in enumerate(kinds):
        y = rng.randrange(2008, 2024)
        w = random_work(rng, year=y)
        doi = w.doi if k == 1 else None
        out.append(PrintedPaper(w.title.capitalize(), kind(y, w), y, 2026 - (k % 3) * 19, doi))
    w = random_work(rng)
    out.append(PrintedPaper("A technical note without a date", ("Technical Note",), 0, 2026))
    return out


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def printed_pdf(p: PrintedPaper, body: tuple[str, ...] = (), more_pages: tuple[tuple[str, ...], ...] = ()) -> bytes:
    """A PDF whose first page has the title, the paper's printed lines and a body, then one
    page per ``more_pages`` entry (its lines); the info has only a CreationDate."""
    first = [("F2", 16, p.title), ("F1", 11, "Lena Okafor, Marco Rossi"), *[("F1", 10, x) for x in p.lines]]
    first += [("F2", 12, "Abstract")]
    first += [("F1", 11, x) for x in (body or ("We report how the method behaves on three data sets.",))]
    pages = [first] + [[("F1", 11, x) for x in lines] for lines in more_pages]
    n = len(pages)
    font1, font2, info = 3 + 2 * n, 4 + 2 * n, 5 + 2 * n
    kids = " ".join(f"{3 + 2 * k} 0 R" for k in range(n))
    objs: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode()]
    for k, lines in enumerate(pages):
        stream = ["BT", "50 780 Td"]
        for font, size, text in lines:
            stream += [f"/{font} {size} Tf", f"{size + 5} TL", f"({_esc(text)}) Tj T*"]
        stream.append("ET")
        content = "\n".join(stream).encode("latin-1", "replace")
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Resources << /Font << /F1 {font1} 0 R "
            f"/F2 {font2} 0 R >> >> /Contents {4 + 2 * k} 0 R >>".encode()
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
    objs.append(f"<< /CreationDate (D:{p.creation_year}0105120000Z) /Producer (Scanner Suite) >>".encode())
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, o in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + o + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R /Info {info} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
