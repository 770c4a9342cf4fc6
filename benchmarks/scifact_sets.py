"""Evaluation sets built from SciFact train (../shared/data/scifact) for the support scorer and
the contradiction detector; also writes the held-out sample the tests use.

    .venv/bin/python benchmarks/scifact_sets.py [--data DIR] --write-fixture

Sets (one row per claim with evidence; abstracts split into sentences by the app's splitter):

- support: (claim, evidence abstract) positive vs (claim, the top BM25 abstract that is not
  evidence) negative; and (claim, SUPPORT evidence sentences) vs (claim, CONTRADICT ones).
- contradiction pairs: (claim, its CONTRADICT evidence sentences) = contradicts;
  (claim, its SUPPORT evidence sentences) and (claim, the best-matching sentence of the top BM25
  non-evidence abstract = same topic, neutral) = does not contradict.

Claims are split by a hash of their id into `tune` (~70 %, used to choose weights and
thresholds) and `held` (~30 %, only measured; the tests' fixture).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bayes_app.llm.offline import split_sentences
from bayes_app.search.sparse import tokens

DEFAULT_DATA = ROOT.parent.parent / "shared" / "data" / "scifact"
FIXTURE = ROOT / "tests" / "fixtures" / "scifact" / "held.json"


@dataclass
class Row:
    claim_id: str
    claim: str
    label: str  # SUPPORT | CONTRADICT
    evidence: list[str]  # the evidence sentences
    evidence_abstract: str
    negative_abstract: str  # top BM25 abstract that is not evidence for the claim
    neutral: str  # the sentence of the negative abstract closest to the claim (BM25)
    split: str = field(default="tune")


def split_of(claim_id: str) -> str:
    h = int(hashlib.sha256(f"scifact:{claim_id}".encode()).hexdigest()[:8], 16)
    return "held" if h % 10 < 3 else "tune"


def find_data(arg: str | None) -> Path:
    for p in ([Path(arg)] if arg else []) + [DEFAULT_DATA, Path("/work/shared/data/scifact")]:
        if (p / "claims_train.csv").exists():
            return p
    raise SystemExit("SciFact data not found: pass --data DIR (with claims_train.csv, corpus.jsonl)")


class BM25:
    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.ids = list(docs)
        self.tf = [Counter(tokens(docs[i])) for i in self.ids]
        self.len = [sum(t.values()) for t in self.tf]
        self.avg = sum(self.len) / len(self.len)
        df: Counter[str] = Counter()
        for t in self.tf:
            df.update(t.keys())
        n = len(self.ids)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
        self.post: dict[str, list[int]] = {}
        for i, t in enumerate(self.tf):
            for w in t:
                self.post.setdefault(w, []).append(i)
        self.k1, self.b = k1, b

    def scores(self, query: str) -> dict[int, float]:
        out: dict[int, float] = {}
        for w in set(tokens(query)):
            idf = self.idf.get(w)
            if idf is None:
                continue
            for i in self.post[w]:
                f = self.tf[i][w]
                out[i] = out.get(i, 0.0) + idf * f * (self.k1 + 1) / (
                    f + self.k1 * (1 - self.b + self.b * self.len[i] / self.avg)
                )
        return out

    def top(self, query: str, exclude: set[str]) -> str | None:
        s = self.scores(query)
        for i in sorted(s, key=lambda i: -s[i]):
            if self.ids[i] not in exclude:
                return self.ids[i]
        return None


def load_rows(data: Path) -> list[Row]:
    corpus: dict[str, dict] = {}
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["_id"]] = d
    bm25 = BM25({i: (d.get("title", "") + " " + d["text"]) for i, d in corpus.items()})
    with open(data / "claims_train.csv", encoding="utf-8") as f:
        raw = [r for r in csv.DictReader(f) if r["evidence_label"] in ("SUPPORT", "CONTRADICT")]
    evidence_docs: dict[str, set[str]] = {}
    for r in raw:
        evidence_docs.setdefault(r["id"], set()).add(r["evidence_doc_id"])
        evidence_docs[r["id"]].update(x.strip() for x in r["cited_doc_ids"].strip("[]").split(",") if x.strip())
    rows: list[Row] = []
    for r in raw:
        doc = corpus.get(r["evidence_doc_id"])
        if doc is None:
            continue
        sents = split_sentences(doc["text"])
        idx = [int(i) for i in re.findall(r"\d+", r["evidence_sentences"]) if 0 <= int(i) < len(sents)]
        if not idx:
            continue
        neg_id = bm25.top(r["claim"], evidence_docs[r["id"]])
        if neg_id is None:
            continue
        neg = corpus[neg_id]["text"]
        neg_sents = split_sentences(neg) or [neg]
        q = set(tokens(r["claim"]))
        neutral = max(neg_sents, key=lambda s: len(q & set(tokens(s))) / (1 + len(set(tokens(s)))))
        rows.append(
            Row(
                r["id"],
                r["claim"],
                r["evidence_label"],
                [sents[i] for i in idx],
                doc["text"],
                neg,
                neutral,
                split_of(r["id"]),
            )
        )
    return rows


def write_fixture(rows: list[Row], path: Path = FIXTURE) -> None:
    held = [asdict(r) for r in rows if r.split == "held"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {"source": "SciFact train (allenai/scifact via BEIR), CC BY-NC 2.0", "rows": held},
            ensure_ascii=False,
            indent=0,
        ),
        encoding="utf-8",
    )
    print(f"wrote {len(held)} held rows to {path}")


def roc_auc(pos: list[float], neg: list[float]) -> float:
    """P(score of a positive > score of a negative), ties counting half."""
    if not pos or not neg:
        return float("nan")
    allv = sorted([(v, 1) for v in pos] + [(v, 0) for v in neg])
    ranks: list[float] = [0.0] * len(allv)
    i = 0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    r_pos = sum(r for r, (_, lab) in zip(ranks, allv) if lab)
    return (r_pos - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data")
    ap.add_argument("--write-fixture", action="store_true")
    args = ap.parse_args()
    rows = load_rows(find_data(args.data))
    c = Counter((r.split, r.label) for r in rows)
    print(dict(c))
    if args.write_fixture:
        write_fixture(rows)


if __name__ == "__main__":
    main()
