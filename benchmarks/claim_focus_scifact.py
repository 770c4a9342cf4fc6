"""claim_focus_scifact: do offline claims come from the abstracts that answer the question? SciFact train.

    .venv/bin/python benchmarks/claim_focus_scifact.py [--data DIR] [--claims 60] [--baseline REF]

Each SciFact train claim with cited abstracts is taken as a research question; its passages are
the cited abstracts plus the top BM25 abstracts of the corpus (10 in all, one passage each, as
the index would return them). The offline planner (`agents.extractive.plan`) picks claims from
them; precision = share of planned claims quoted from a cited abstract (the base rate is the
share of all candidate sentences that are). Also the ranking alone: share of the top 3 / 5 / 8
candidate sentences from cited abstracts, by the old relevance (0.75 · cosine + 0.25 · term
coverage) and by `llm.choose.focus_relevance` where the code has it. Held-out check for the
focus rules tuned on the bundled papers' labels (benchmarks/answer_quality.py).

--baseline REF measures commit REF the same way (its own worktree under /tmp, this script copied
in) and prints both side by side with the ratio.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_DATA = ROOT.parent.parent / "shared" / "data" / "scifact"
PASSAGES = 10  # cited abstracts first, then BM25's best


def load(data: Path) -> tuple[dict, dict, dict]:
    corpus = {}
    with open(data / "corpus.jsonl") as lines:
        for line in lines:
            o = json.loads(line)
            corpus[o["_id"]] = o
    qrels: dict[str, set[str]] = collections.defaultdict(set)
    with open(data / "qrels" / "train.tsv") as lines:
        for line in list(lines)[1:]:
            q, c, _ = line.split("\t")
            qrels[q].add(c)
    with open(data / "queries.jsonl") as lines:
        queries = {json.loads(x)["_id"]: json.loads(x)["text"] for x in lines}
    return corpus, qrels, queries


def run(data: Path, n_claims: int) -> dict:
    import numpy as np

    from bayes_app.agents.retrieval import Passage
    from bayes_app.search.embeddings import get_embedder
    from bayes_app.search.sparse import tokens

    corpus, qrels, queries = load(data)
    ids = list(corpus)
    toks = [tokens(corpus[i]["title"] + " " + corpus[i]["text"]) for i in ids]
    df = collections.Counter(t for ts in toks for t in set(ts))
    n, avg = len(ids), sum(map(len, toks)) / len(ids)
    tfs = [collections.Counter(ts) for ts in toks]

    def bm25(q: str, k: int) -> list[str]:
        qt = set(tokens(q))
        sc = np.zeros(n)
        for j, tf in enumerate(tfs):
            for t in qt & tf.keys():
                f = tf[t]
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                sc[j] += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(toks[j]) / avg))
        return [ids[j] for j in np.argsort(-sc)[:k]]

    model, cache = get_embedder(), {}

    def embed(texts):
        miss = [t for t in dict.fromkeys(texts) if t not in cache]
        for t, v in zip(miss, model.embed_passages(miss) if miss else []):
            cache[t] = v
        return np.stack([cache[t] for t in texts])

    qs = sorted(q for q in qrels if q in queries)
    random.Random(7).shuffle(qs)
    res: dict[str, list[float]] = collections.defaultdict(list)
    for qi in qs[:n_claims]:
        q = queries[qi]
        docs = list(dict.fromkeys([*sorted(qrels[qi]), *bm25(q, PASSAGES)]))[:PASSAGES]
        ps = [
            Passage(i, d, d, corpus[d]["title"], [], None, 1, corpus[d]["text"], "body", corpus[d]["text"])
            for i, d in enumerate(docs, 1)
        ]
        _measure(q, ps, qrels[qi], embed, res)
    return {k: float(np.mean(v)) for k, v in res.items()} | {"claims": len(res["base rate"])}


def _unit(m):
    import numpy as np

    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


def _measure(q: str, ps: list, cited: set[str], embed, res: dict[str, list[float]]) -> None:
    """One claim's rankings (precision at 3, 5, 8 of the old and the focus scorer) and plan,
    against the abstracts it cites; claims with fewer than 6 candidates are skipped."""
    import numpy as np

    from bayes_app.agents import extractive
    from bayes_app.llm import choose

    cands = extractive.claim_candidates(ps)
    if len(cands) < 6:
        return
    m = _unit(embed([c.text for c in cands]))
    y = np.array([c.passage.chunk_id in cited for c in cands])
    scorers = {
        "old": choose.DENSE_WEIGHT * (m @ _unit(embed([q]))[0])
        + (1 - choose.DENSE_WEIGHT) * choose.term_coverage(q, [c.text for c in cands])
    }
    if hasattr(choose, "focus_relevance"):
        scorers["focus"] = choose.focus_relevance(q, [c.text for c in cands], embed, list(docs_of(cands)), m)
    for name, s in scorers.items():
        for k in (3, 5, 8):
            res[f"ranking {name} p@{k}"].append(float(y[np.argsort(-s, kind="stable")[:k]].mean()))
    plan = [c for _, cs in extractive.plan(q, ps, embed) for c in cs]
    res["plan precision"].append(float(np.mean([c.passage.chunk_id in cited for c in plan])) if plan else 0.0)
    res["plan reaches a cited abstract"].append(float(any(c.passage.chunk_id in cited for c in plan)))
    res["plan claims"].append(float(len(plan)))
    res["base rate"].append(float(y.mean()))


def docs_of(cands):
    return (c.passage.chunk_id for c in cands)


def baseline(ref: str, data: Path, n_claims: int) -> dict | None:
    """The same measurement on commit `ref` (its own worktree, this script copied in)."""
    from benchmarks.baseline_run import measure_at

    return measure_at(ref, "benchmarks/claim_focus_scifact.py", ["--data", str(data), "--claims", str(n_claims)])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--claims", type=int, default=60)
    ap.add_argument("--baseline", metavar="REF")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    ours = run(args.data, args.claims)
    if args.json:
        print(json.dumps(ours))
        return
    base = baseline(args.baseline, args.data, args.claims) if args.baseline else None
    print(f"{ours['claims']} SciFact train claims as questions, {PASSAGES} abstracts each (offline)\n")
    print(f"{'measure':<36}" + (f"{'base':>10}" if base else "") + f"{'ours':>10}" + (f"{'ratio':>10}" if base else ""))
    for key in ours:
        if key == "claims":
            continue
        b = base.get(key) if base else None
        print(
            f"{key:<36}"
            + (f"{b:>10.3f}" if b is not None else (f"{'-':>10}" if base else ""))
            + f"{ours[key]:>10.3f}"
            + (f"{ours[key] / b:>10.2f}" if b else (f"{'':>10}" if base else ""))
        )


if __name__ == "__main__":
    main()
