"""Hub-free BM25-style sparse vectors for Qdrant's sparse index with ``Modifier.IDF``.

Tokens are Unicode ``\\w+`` runs, lower-cased, minus Lucene's English stopwords, stemmed
with the English Snowball stemmer (PyStemmer). Other languages are tokenised the same way
(the English stemmer barely touches them, and queries and documents agree); scripts
written without spaces (Chinese, Japanese) become one token per run.

A term's id is the first 4 bytes of its blake2b hash (stable across processes, machines
and releases, unlike ``hash()``). A document carries the BM25 term-frequency part,
``tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))``; a query carries weight 1 per distinct
term, and Qdrant multiplies in the IDF from its own collection statistics at query time.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import NamedTuple

import Stemmer

K1 = 1.2
B = 0.75
# Fixed average document length in *our* tokens (after stopword removal): a growing index
# has no stable corpus average to bake into vectors it already stores. The chunker's
# ~250-token chunks of the test papers average 94-98 such tokens. Ranking barely depends
# on it: SciFact train nDCG@10 is 0.697 / 0.698 / 0.698 with avgdl 95 / 130 / 164.
AVGDL = 100.0
MAX_TOKEN_CHARS = 64  # longer runs are hashes, base64, sequences: noise for BM25

# Lucene / Elasticsearch default English stop set.
STOPWORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such
that the their then there these they this to was will with""".split()
)

_TOKEN = re.compile(r"\w+", re.UNICODE)
_stemmer = Stemmer.Stemmer("english")


class SparseVec(NamedTuple):
    """A sparse vector: parallel lists of distinct term ids (uint32) and weights."""

    indices: list[int]
    values: list[float]


def _words(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS and len(t) <= MAX_TOKEN_CHARS]


def tokens(text: str) -> list[str]:
    """The stemmed index terms of ``text``, in order, with repeats."""
    return _stemmer.stemWords(_words(text))


def term_id(term: str) -> int:
    """Stable 32-bit id of a term."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "little")


def document_vector(text: str, avgdl: float = AVGDL, k1: float = K1, b: float = B) -> SparseVec:
    """BM25 TF weights of a chunk's terms (IDF is applied by the index)."""
    toks = tokens(text)
    # Count per id, not per term: two terms whose hashes collide must not repeat an index.
    tf = Counter(term_id(t) for t in toks)
    norm = k1 * (1.0 - b + b * len(toks) / avgdl)
    ids = sorted(tf)
    return SparseVec(ids, [tf[i] * (k1 + 1.0) / (tf[i] + norm) for i in ids])


def query_vector(text: str) -> SparseVec:
    """Weight 1 for each distinct query term."""
    ids = sorted({term_id(t) for t in tokens(text)})
    return SparseVec(ids, [1.0] * len(ids))


def query_terms(text: str) -> list[str]:
    """The query's words to emphasise in results: distinct (case-insensitively), stopwords
    removed, in query order, as the user wrote them."""
    seen: set[str] = set()
    out: list[str] = []
    for word in _TOKEN.findall(text):
        key = word.lower()
        if key in STOPWORDS or key in seen or len(key) > MAX_TOKEN_CHARS:
            continue
        seen.add(key)
        out.append(word)
    return out
