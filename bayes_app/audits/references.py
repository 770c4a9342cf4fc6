"""The one adapter from a reference as written to its fields (today's parser: `library.references`;
swap the parser here and nowhere else)."""

from __future__ import annotations

import re

from bayes_app.audits.draft import Ref
from bayes_app.library.references import parse_entry

_NUMBER = re.compile(r"^\s*(?:\[(\d{1,4})\]|(\d{1,4})[.)])\s+")


def parse_reference(key: str, text: str) -> Ref:
    """A reference entry ("Smith, J. (2020). Title. Journal. doi:…") as a `Ref` under `key`."""
    r = parse_entry(text)
    return Ref(key=key, text=" ".join(text.split()), title=r.title, authors=list(r.authors), year=r.year, doi=r.doi)


def entry_number(text: str) -> int | None:
    """The number an entry is listed under ("[3] …", "3. …"), or None."""
    m = _NUMBER.match(text)
    return int(m.group(1) or m.group(2)) if m else None


def first_surname(author: str) -> str:
    """The surname of an author as written: "Smith, J." / "Smith J" / "J. Smith" / "John Smith"."""
    a = " ".join(author.replace(".", ". ").split())
    if "," in a:
        return a.split(",")[0].strip()
    words = a.split()
    if len(words) >= 2 and re.fullmatch(r"(?:[A-Z]\.?){1,3}", words[-1]):
        return words[0]  # "Smith J", "Smith JK"
    return words[-1] if words else ""
