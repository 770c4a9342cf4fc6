"""Living maps: time from "indexed" to an update proposal ready, ours vs the naive baseline, and
the relevance floor on held-out SciFact data.

1. Timing. A library with the bundled review paper and three maps (each a question with two
   themes). A 15-page paper (tests/fixtures/papers/pasa.pdf) is indexed; then, from that moment:
   - ours: the relevance of the paper to each map (its passage vectors from the index against
     the maps' question and themes), then one update run (offline provider) per map over the
     floor, each ending in a stored proposal;
   - baseline: one full research run (`build_map`, offline) per map, as a tool without
     incremental updates would do for every new paper.
   Printed side by side with the ratio.
2. The floor (BAYES_LIVING_RELEVANCE_FLOOR) on SciFact (held-out from the bundled papers): each
   claim is a map question; its cited abstract (as passages, one per sentence) should pass the
   floor and a random other abstract should not. Prints the share of each above the floor.

    .venv/bin/python -m benchmarks.living_maps [--data ../shared/data/scifact] [--pairs 300]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MAPS = {
    "How do LLM agents search for academic papers?": ["Crawler and citation expansion", "Selector and paper ranking"],
    "How can we explain molecular property prediction models?": ["Attribution methods", "Counterfactual explanations"],
    "What causes coral reef bleaching?": ["Ocean temperature", "Acidification"],
}


def timing() -> dict:
    from sqlmodel import select

    from bayes_app import registry
    from bayes_app.agents.kinds.update_map import embed_texts, paper_vectors
    from bayes_app.llm.offline import OfflineProvider
    from bayes_app.maps import arrivals, service
    from bayes_app.models import Chunk, MapProposal
    from bayes_app.settings import get_settings
    from tests.support import pdfs
    from tests.support.maplab import MapLab
    from tests.support.maplib import ingest

    registry.register()
    with MapLab([pdfs.REVIEW]) as lab:
        maps = {}
        with lab.sessions() as db:
            for q, themes in MAPS.items():
                mid = service.create_map(db, lab.user_id, q, q)["id"]
                root = service.root_of(db, mid)
                for t in themes:
                    service.write_agent_node(db, mid, root.id, "theme", t, run_id=None)
                maps[q] = mid
        (doc,) = ingest(lab.sessions, lab.user_id, lab.dir / "files", [pdfs.PASA])

        def vectors_of(doc_id: str):
            with lab.sessions() as db:
                texts = dict(db.exec(select(Chunk.id, Chunk.text).where(Chunk.document_id == doc_id)).all())
            return paper_vectors(doc_id, texts)[1]

        t0 = time.monotonic()
        with lab.sessions() as db:
            found = arrivals.relevant_maps(
                db, lab.user_id, [doc], vectors_of, embed_texts, get_settings().living_relevance_floor
            )
        t_rel = time.monotonic() - t0
        for mid in found:
            _update(lab, mid, doc)
        ours = time.monotonic() - t0
        with lab.sessions() as db:
            props = list(db.exec(select(MapProposal).where(MapProposal.kind == "update")))
        items = sum(len(p.payload["items"]) for p in props)

        t1 = time.monotonic()
        for mid in maps.values():
            with contextlib.suppress(AssertionError):  # a map the library cannot answer still costs its run
                lab.run("build_map", mid, OfflineProvider)
        baseline = time.monotonic() - t1
    names = {v: k for k, v in maps.items()}
    return {
        "relevant": {names[m]: h[0]["score"] for m, h in found.items()},
        "proposals": len(props),
        "items": items,
        "relevance_s": t_rel,
        "ours_s": ours,
        "baseline_s": baseline,
    }


def _update(lab, map_id: str, doc: str) -> None:
    import asyncio

    from bayes_app.llm.offline import OfflineProvider
    from bayes_app.maps.runs import start_map_run
    from bayes_app.runs import executor
    from bayes_app.runs import service as run_service

    with lab.sessions() as db:
        op = start_map_run(
            db, lab.user_id, "update_map", map_id, model="offline", output_tokens=2000, document_ids=[doc]
        )
    asyncio.run(
        executor.execute(op.id, r=lab.r, sessions=lab.sessions, listener=lab.listener, provider_factory=OfflineProvider)
    )
    run_service.settle(lab.sessions, lab.r, op.id)


def floor_figures(data: str | None, pairs: int, floor: float) -> dict:
    import numpy as np

    from bayes_app.maps.living import relevance
    from bayes_app.search.embeddings import get_embedder
    from benchmarks.scifact_sets import find_data

    root = find_data(data)
    corpus = {}
    for line in (root / "corpus.jsonl").open(encoding="utf-8"):
        d = json.loads(line)
        corpus[str(d["_id"] if "_id" in d else d["doc_id"])] = d
    qrels: dict[str, list[str]] = {}
    qdir = root / "qrels"
    for f in sorted(qdir.glob("*.tsv")):
        for row in f.read_text(encoding="utf-8").splitlines()[1:]:
            q, c, *_ = row.split("\t")
            qrels.setdefault(q, []).append(c)
    queries = {}
    for line in (root / "queries.jsonl").open(encoding="utf-8"):
        d = json.loads(line)
        queries[str(d["_id"])] = d["text"]
    rng = random.Random(3)
    qids = [q for q in queries if qrels.get(q) and qrels[q][0] in corpus]
    rng.shuffle(qids)
    e = get_embedder()
    ids = list(corpus)

    def passages(doc: dict) -> np.ndarray:
        text = doc.get("text") or ""
        sents = [s for s in re.split(r"(?<=[.!?])\s+", text if isinstance(text, str) else " ".join(text)) if s]
        return e.embed_passages(sents[:20] or [doc.get("title", "")])

    pos, neg = [], []
    for q in qids[:pairs]:
        qv = np.stack([e.embed_query(queries[q])])
        pos.append(relevance(passages(corpus[qrels[q][0]]), qv))
        other = corpus[rng.choice(ids)]
        neg.append(relevance(passages(other), qv))
    floors = sorted({0.35, 0.4, 0.45, 0.5, 0.55, floor})
    return {
        "pairs": len(pos),
        "floor": floor,
        "rows": [(f, float(np.mean([p >= f for p in pos])), float(np.mean([n >= f for n in neg]))) for f in floors],
    }


def main() -> None:
    from bayes_app.settings import get_settings

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None)
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--skip-timing", action="store_true")
    args = ap.parse_args()
    if not args.skip_timing:
        t = timing()
        print("time from 'indexed' to proposal ready: 15-page paper (pasa.pdf), 3 maps, offline provider")
        print(f"  relevant maps (score ≥ floor): {t['relevant']}")
        print(f"  proposals: {t['proposals']}, proposed claims: {t['items']}")
        ours = f"{'ours (relevance + update runs)':<44}{t['ours_s']:>8.1f} s"
        print(f"  {ours}   (relevance alone {t['relevance_s']:.2f} s)")
        print(f"  {'baseline (one build_map run per map)':<44}{t['baseline_s']:>8.1f} s")
        print(f"  ratio baseline / ours: {t['baseline_s'] / max(t['ours_s'], 1e-9):.1f}×")
    f = floor_figures(args.data, args.pairs, get_settings().living_relevance_floor)
    print(f"relevance floor on {f['pairs']} SciFact claims (held out): share of abstracts over each floor")
    print(f"  {'floor':>7}  {'cited abstract':>15}  {'random abstract':>16}")
    for fl, rel, rnd in f["rows"]:
        mark = "  <- BAYES_LIVING_RELEVANCE_FLOOR" if fl == f["floor"] else ""
        print(f"  {fl:>7.2f}  {rel:>15.1%}  {rnd:>16.1%}{mark}")


if __name__ == "__main__":
    main()
