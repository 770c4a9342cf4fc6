"""Train the sentence relevance model (`bayes_app/llm/relevance.py`) into llm/data/relevance.json.

    .venv/bin/python scripts/train_relevance.py [--data DIR] [--check]

Training data, one group of candidate sentences per question:

- SciFact train (../shared/data/scifact): each claim with rationale sentences is a question;
  its candidates are the sentences of its evidence abstracts and of the best BM25 abstracts
  that are not evidence (ABSTRACTS in all, split by the app's splitter); positives are the
  annotated rationale sentences. Only the `tune` part of `benchmarks/scifact_sets.split_of`
  (~70 % of claims, by claim id); the `held` part is never used here.
- The hand-labelled questions on the bundled papers (tests/support/answer_labels.py): the
  papers chunked as ingestion chunks them (roles, sections), the TOP_CHUNKS chunks closest to
  the question (all three papers: the third is a distractor) give the candidates; a sentence is
  positive when it states a labelled fact; a sentence only inside a labelled region is left out
  of training (it addresses the question without being a labelled answer).

A logistic regression (scikit-learn, fixed seed, class-balanced, own labels weighted
OWN_WEIGHT against SciFact's larger count) on standardised features; the threshold is the
probability with the best F1 of answering sentences on the training groups. Deterministic:
the same data and code give the same JSON (`--check` compares with the committed file).
Embeddings are cached under /tmp (bayes-relevance-cache.npz) to make re-runs fast.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "scifact"
CACHE = Path("/tmp/bayes-relevance-cache.npz")
ABSTRACTS = 4  # candidate abstracts per SciFact claim: evidence first, then BM25's best
TOP_CHUNKS = 14  # as many passages as the offline Ask run retrieves
OWN_WEIGHT = 8.0  # one own-label question weighs as much as this many SciFact claims
SEED = 7
C = 0.5  # inverse regularisation strength


@dataclass
class Group:
    """The candidate sentences for one question and their labels (1 answers, 0 not, -1 unknown)."""

    question: str
    sentences: list[str]
    passages: list[str]
    positions: list[int]
    roles: list[str]
    labels: list[int]
    source: str  # "scifact" | the paper's file name
    split: str = "tune"
    gains: list[int] = field(default_factory=list)  # graded: 2 states a fact, 1 in a region, 0 not


class Embedder:
    """The app's embedding model with an on-disk cache keyed by text."""

    def __init__(self) -> None:
        from bayes_app.search.embeddings import get_embedder

        self.model = get_embedder()
        self.cache: dict[str, np.ndarray] = {}
        if CACHE.exists():
            z = np.load(CACHE, allow_pickle=False)
            self.cache = dict(zip(z["texts"].tolist(), z["vecs"]))
        self.dirty = False

    def __call__(self, texts):
        miss = [t for t in dict.fromkeys(texts) if t not in self.cache]
        for i in range(0, len(miss), 256):
            if len(miss) > 256:
                print(f"  embedding {i}/{len(miss)}", file=sys.stderr, flush=True)
            part = miss[i : i + 256]
            for t, v in zip(part, self.model.embed_passages(part)):
                self.cache[t] = np.asarray(v, dtype=np.float32)
            self.dirty = True
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)

    def save(self) -> None:
        if self.dirty:
            texts = list(self.cache)
            np.savez(CACHE, texts=np.array(texts), vecs=np.stack([self.cache[t] for t in texts]))


def scifact_groups(data: Path) -> list[Group]:
    """SciFact train claims with rationale sentences, as candidate groups (tune and held)."""
    from bayes_app.llm.offline import split_sentences
    from benchmarks.scifact_sets import BM25, split_of

    corpus = {}
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["_id"]] = d
    rationale: dict[str, dict[str, set[int]]] = {}
    claims: dict[str, str] = {}
    cited: dict[str, set[str]] = {}
    with open(data / "claims_train.csv", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            cited.setdefault(r["id"], set()).update(x.strip() for x in r["cited_doc_ids"].strip("[]").split(",") if x)
            if r["evidence_label"] not in ("SUPPORT", "CONTRADICT") or r["evidence_doc_id"] not in corpus:
                continue
            claims[r["id"]] = r["claim"]
            idx = {int(i) for i in re.findall(r"\d+", r["evidence_sentences"])}
            rationale.setdefault(r["id"], {}).setdefault(r["evidence_doc_id"], set()).update(idx)
    bm25 = BM25({i: d.get("title", "") + " " + d["text"] for i, d in corpus.items()})
    out = []
    for cid in sorted(claims, key=int):
        evid = rationale[cid]
        s = bm25.scores(claims[cid])
        others = [bm25.ids[i] for i in sorted(s, key=lambda i: (-s[i], i))]
        docs = list(dict.fromkeys([*sorted(evid), *[d for d in others if d not in cited[cid]]]))[:ABSTRACTS]
        g = Group(claims[cid], [], [], [], [], [], "scifact", split_of(cid))
        for d in docs:
            text = corpus[d]["text"]
            for i, sentence in enumerate(split_sentences(text)):
                g.sentences.append(sentence)
                g.passages.append(text)
                g.positions.append(i)
                g.roles.append("body")
                g.labels.append(int(i in evid.get(d, set())))
        g.gains = [2 * y for y in g.labels]
        if sum(g.labels):
            out.append(g)
    return out


def paper_chunks(path: Path):
    """The paper's chunks as ingestion cuts them (structure-aware: role and section)."""
    from bayes_app.library import chunking, pdf, structure

    with pdf.pdf_document(str(path)) as document:
        pages = list(pdf.iter_layouts(document))
    return list(chunking.iter_structured_chunks(pages, structure.analyze(pages)))


def own_groups(embed) -> list[Group]:
    """The hand-labelled questions on the bundled papers, as candidate groups."""
    from bayes_app.library.pdf import iter_pages
    from bayes_app.maps import sentences as sent
    from tests.support import pdfs
    from tests.support.answer_labels import QUESTIONS, addresses, norm, region_texts

    papers = [pdfs.PASA, pdfs.REVIEW, pdfs.MEDIA]
    chunks = [(p.name, c) for p in papers for c in paper_chunks(p) if sent.role_allows_claims(c.role)]
    texts = [" ".join(c.text.split()) for _, c in chunks]
    cvecs = embed(texts)
    out = []
    for q in QUESTIONS:
        page_text = {i: t.text for i, t in enumerate(iter_pages(str(pdfs.FIXTURES / q.paper)), 1)}
        regions = region_texts(q, page_text)
        qv = embed([q.question])[0]
        top = np.argsort(-(cvecs @ qv), kind="stable")[:TOP_CHUNKS]
        g = Group(q.question, [], [], [], [], [], q.paper)
        seen: set[str] = set()
        for j in top:
            name, c = chunks[int(j)]
            for i, s in enumerate(sent.candidate_sentences(c.text)):
                s = " ".join(s.split())
                if len(s.split()) < 4 or s in seen:
                    continue
                seen.add(s)
                fact = name == q.paper and any(norm(alt) in norm(s) for f in q.facts for alt in f)
                region = name == q.paper and addresses(q, s, c.page, regions)
                g.sentences.append(s)
                g.passages.append(texts[int(j)])
                g.positions.append(i)
                g.roles.append(c.role)
                g.labels.append(1 if fact else (-1 if region else 0))
                g.gains.append(2 if fact else (1 if region else 0))
        out.append(g)
    return out


def matrix(groups: list[Group], embed) -> list[np.ndarray]:
    from bayes_app.llm import relevance

    # all texts at once (large batches), then the features group by group from the cache
    embed([t for g in groups for t in dict.fromkeys([*g.sentences, *g.passages])])
    return [relevance.features(g.question, g.sentences, g.passages, g.positions, g.roles, embed) for g in groups]


def fit(groups: list[Group], xs: list[np.ndarray]) -> dict:
    """A logistic regression on the groups' known labels; the JSON the app loads."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from bayes_app.llm import relevance

    rows, ys, ws = [], [], []
    n_sci = sum(g.source == "scifact" for g in groups) or 1
    for g, x in zip(groups, xs):
        y = np.array(g.labels)
        keep = y >= 0
        per_group = (OWN_WEIGHT if g.source != "scifact" else 1.0) / max(1, int(keep.sum()))
        rows.append(x[keep])
        ys.append(y[keep])
        ws.append(np.full(int(keep.sum()), per_group * n_sci))
    x, y, w = np.vstack(rows), np.concatenate(ys), np.concatenate(ws)
    scaler = StandardScaler().fit(x)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    model = LogisticRegression(C=C, class_weight="balanced", max_iter=2000, random_state=SEED)
    model.fit((x - scaler.mean_) / scale, y, sample_weight=w)
    coef, intercept = model.coef_[0], float(model.intercept_[0])
    p = 1 / (1 + np.exp(-(((x - scaler.mean_) / scale) @ coef + intercept)))
    best_t, best_f1 = 0.5, -1.0
    for t in np.round(np.arange(0.30, 0.96, 0.01), 2):
        pred = p >= t
        tp = float((w * (pred & (y == 1))).sum())
        prec = tp / max(1e-9, float((w * pred).sum()))
        rec = tp / max(1e-9, float((w * (y == 1)).sum()))
        f1 = 2 * prec * rec / max(1e-9, prec + rec)
        if f1 > best_f1 + 1e-9:
            best_t, best_f1 = float(t), f1
    return {
        "about": "sentence relevance: logistic regression trained by scripts/train_relevance.py",
        "features": list(relevance.FEATURES),
        "mean": [round(float(v), 6) for v in scaler.mean_],
        "scale": [round(float(v), 6) for v in scale],
        "coef": [round(float(v), 6) for v in coef],
        "intercept": round(intercept, 6),
        "threshold": best_t,
        "training": {
            "scifact_claims": sum(g.source == "scifact" for g in groups),
            "own_questions": sum(g.source != "scifact" for g in groups),
            "sentences": int(len(y)),
            "positives": int(y.sum()),
            "f1_at_threshold": round(best_f1, 4),
        },
    }


def training_groups(data: Path, embed) -> tuple[list[Group], list[Group]]:
    """(SciFact groups incl. held, own-label groups)."""
    return scifact_groups(data), own_groups(embed)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--check", action="store_true", help="only compare with the committed weights")
    args = ap.parse_args()
    from bayes_app.llm import relevance

    embed = Embedder()
    sci, own = training_groups(args.data, embed)
    train = [g for g in sci if g.split == "tune"] + own
    xs = matrix(train, embed)
    embed.save()
    weights = fit(train, xs)
    text = json.dumps(weights, indent=1) + "\n"
    if args.check:
        same = relevance.WEIGHTS.exists() and relevance.WEIGHTS.read_text() == text
        print("same as committed" if same else "DIFFERS from committed")
        sys.exit(0 if same else 1)
    relevance.WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
    relevance.WEIGHTS.write_text(text)
    print(json.dumps(weights["training"]), "threshold", weights["threshold"])
    for name, c in sorted(zip(weights["features"], weights["coef"]), key=lambda t: -abs(t[1])):
        print(f"  {name:<20} {c:+.3f}")


if __name__ == "__main__":
    main()
