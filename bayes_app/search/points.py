"""The index's plain shapes (points to write, hits read back, point ids), apart from the
Qdrant client in `search.index`: importing them costs nothing, so a worker boots without
loading `qdrant_client` (1.5 s) until it first touches the index."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

RRF_K = 60

# A dense vector: plain floats, or the numpy array an embedder returns (sent as plain floats).
Vector = Sequence[float] | np.ndarray


@dataclass(frozen=True, slots=True)
class IndexPoint:
    """One chunk to index. ``sparse`` is (term ids, weights)."""

    id: str | int
    dense: Vector
    sparse: tuple[Sequence[int], Sequence[float]]
    owner_id: str
    document_id: str
    collection_ids: Sequence[str] = ()
    page: int = 0
    chunk_index: int = 0
    role: str = "body"  # library.structure.Role


@dataclass(frozen=True, slots=True)
class CrossPoint:
    """A non-English chunk's multilingual vector, for the cross-language collection."""

    id: str | int
    dense: Vector
    lang: str
    owner_id: str
    document_id: str
    collection_ids: Sequence[str] = ()
    page: int = 0
    chunk_index: int = 0
    role: str = "body"


@dataclass(frozen=True, slots=True)
class Hit:
    """A search result: the chunk id (as the app stores it), fused score and payload;
    ``dense`` is the cosine of query and passage when the search asked for it."""

    point_id: str | int
    score: float
    payload: dict[str, Any] = field(default_factory=dict)
    dense: float | None = None


def to_point_id(chunk_id: str | int) -> str | int:
    """The Qdrant point id for a chunk id: ints as they are, UUIDs in canonical form."""
    return chunk_id if isinstance(chunk_id, int) else str(uuid.UUID(chunk_id))


def from_point_id(point_id: Any) -> str | int:
    """The app's chunk id (32-hex) for a point id returned by Qdrant."""
    return point_id if isinstance(point_id, int) else uuid.UUID(str(point_id)).hex
