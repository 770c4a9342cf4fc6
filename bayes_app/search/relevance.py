"""The relevance floor: below it a passage is only the closest one, not a strong match.

The score is the cosine between the query's and the passage's dense vectors (each model has
its own scale, so each has its own floor; a model without one never flags results).
Calibrated with ``benchmarks/relevance_floor.py`` on SciFact train: the floor hides under 2 %
of real queries (their best passage in the corpus scores below it) while random letter
strings and off-topic questions fall under it; see the README for the measured shares.
"""

from __future__ import annotations

FLOORS: dict[str, float] = {
    "all-MiniLM-L6-v2": 0.35,  # hides 1.2 % of SciFact train queries; 0.37 would hide 1.98 %
}


def floor_for(model_name: str) -> float | None:
    """The floor for this embedding model, or None when it was never calibrated."""
    return FLOORS.get(model_name)


def is_weak(cosine: float | None, model_name: str) -> bool:
    """True when a hit's query-passage cosine lies under the model's floor."""
    floor = floor_for(model_name)
    return floor is not None and cosine is not None and cosine < floor
