"""The relevance floor: below it a passage is only the closest one, not a strong match.

The score is the cosine between the query's and the passage's dense vectors (each model has
its own scale, so each has its own floor; a model without one never flags results).
Calibrated with ``benchmarks/relevance_floor.py`` on SciFact train: the floor hides under 2 %
of real queries (their best passage in the corpus scores below it) while random letter
strings and off-topic questions fall under it; see the README for the measured shares.
"""

from __future__ import annotations

import re

FLOORS: dict[str, float] = {
    "all-MiniLM-L6-v2": 0.35,  # hides 1.2 % of SciFact train queries; 0.37 would hide 1.98 %
}


def floor_for(model_name: str) -> float | None:
    """The floor for this embedding model, or None when it was never calibrated."""
    return FLOORS.get(model_name)


def is_weak(cosine: float | None, model_name: str) -> bool:
    """True when a hit's query-passage cosine lies under the model's floor (the search keeps a
    hit that states one of the query's names from being weak: `named_match`)."""
    floor = floor_for(model_name)
    return floor is not None and cosine is not None and cosine < floor


# A name the dense model barely knows: an acronym or a gene, drug or programme name ("DESMOND",
# "SVCT2", "TMEM27", "CD44v6"): two capitals at least, or capitals with digits.
_NAME = re.compile(r"\b(?=[A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*[A-Z0-9])[A-Z][A-Za-z0-9-]{2,}\b")


def names_in(query: str) -> set[str]:
    """The query's names that only a literal match can find (see `_NAME`), without a word that
    is merely capitalised ("Which", "PaSa" is kept: it has two capitals)."""
    return {m for m in _NAME.findall(query) if sum(c.isupper() or c.isdigit() for c in m) >= 2}


def named_match(names: set[str] | frozenset[str], text: str) -> bool:
    """True when the passage states one of the query's names as a word of its own."""
    return any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text) for n in names)
