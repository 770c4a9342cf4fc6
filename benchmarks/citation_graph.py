"""Citation graph build time and link quality at library scale.

A library of 5,000 documents (SciFact titles) with 150,000 parsed references (30 each): a
third name library papers (exactly, by DOI only, or with a typo), the rest name papers that
are not in the library (other SciFact titles, some cited by several documents). Builds the
graph with ``citation_graph.rebuild`` on a migrated SQLite database, then times one incremental
arrival and the "missing from your library" list, and scores links against the generator's
truth. The baseline is the naive matcher: every reference compared with every library title
(rapidfuzz ``process.extractOne``), timed on a sample and extrapolated.

    .venv/bin/python -m benchmarks.citation_graph [--docs 5000] [--refs 30]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from rapidfuzz import fuzz, process

from bayes_app import db as dbm
from bayes_app.library import citation_graph as graph
from bayes_app.library.citation_match import normalize_title
from bayes_app.models import Document, DocumentCitation, DocumentReference, User
from benchmarks.scifact_sets import find_data


def _typo(title: str, rng: random.Random) -> str:
    chars = list(title)
    for _ in range(max(1, len(chars) // 60)):
        i = rng.randrange(1, len(chars) - 1)
        if chars[i].isalpha():
            chars[i] = chars[i + 1] if rng.random() < 0.5 else ""
    return "".join(chars)


def build_library(url: str, n_docs: int, n_refs: int, seed: int = 7) -> tuple[str, dict[tuple[int, int], int]]:
    """Write the synthetic library; returns (owner id, truth: (doc index, position) → cited doc index)."""
    corpus = find_data(None) / "corpus.jsonl"
    titles = [t for line in corpus.open(encoding="utf-8") if len((t := json.loads(line)["title"]).split()) >= 3]
    rng = random.Random(seed)
    rng.shuffle(titles)
    lib_titles, outside = titles[:n_docs], titles[n_docs:]
    popular_outside = outside[:60]  # cited by many: the "missing" list
    truth: dict[tuple[int, int], int] = {}
    with dbm.session_scope(url) as s:
        user = User(email="bench@example.com", password_hash="x")
        s.add(user)
        s.flush()
        docs = [
            Document(
                owner_id=user.id,
                filename=f"{i}.pdf",
                file_sha256=f"{i:064d}",
                title=t,
                year=1990 + i % 30,
                doi=f"10.9999/lib.{i}" if i % 3 == 0 else None,
                status="indexed",
                citations_version=graph.VERSION,
            )
            for i, t in enumerate(lib_titles)
        ]
        s.add_all(docs)
        s.flush()
        ids = [d.id for d in docs]
        refs = []
        for i in range(n_docs):
            for k in range(n_refs):
                r = rng.random()
                if r < 1 / 3:
                    j = rng.randrange(n_docs)
                    if j == i:
                        j = (j + 1) % n_docs
                    kind = rng.random()
                    title, doi = lib_titles[j], None
                    if kind < 0.2 and j % 3 == 0:
                        title, doi = None, f"10.9999/lib.{j}"
                    elif kind < 0.4:
                        title = _typo(title, rng)
                    truth[(i, k)] = j
                    year = 1990 + j % 30
                elif r < 0.45:
                    title, doi, year = rng.choice(popular_outside), None, 2000
                else:
                    title, doi, year = rng.choice(outside), None, 2000
                refs.append(
                    {
                        "document_id": ids[i],
                        "position": k,
                        "page": 9,
                        "raw": title or doi,
                        "authors": [],
                        "year": year,
                        "title": title,
                        "doi": doi,
                    }
                )
        s.bulk_insert_mappings(DocumentReference, refs)
    return user.id, {(ids[i], k): ids[j] for (i, k), j in truth.items()}


def naive_seconds(url: str, sample: int = 300) -> float:
    """All-pairs fuzzy matching (each reference against every title), extrapolated."""
    with dbm.session_scope(url) as s:
        titles = [
            normalize_title(t) for t in s.exec(Document.__table__.select().with_only_columns(Document.title)).scalars()
        ]
        refs = [normalize_title(r.title) for r in s.exec(DocumentReference.__table__.select().limit(sample)) if r.title]
        total = (
            s.exec(DocumentReference.__table__.select().with_only_columns(DocumentReference.position)).scalars().all()
        )
    t0 = time.perf_counter()
    for r in refs:
        process.extractOne(r, titles, scorer=fuzz.ratio, score_cutoff=90)
    return (time.perf_counter() - t0) / max(1, len(refs)) * len(total)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--refs", type=int, default=30)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-graph-"))
    url = f"sqlite:///{tmp / 'bench.db'}"
    dbm.migrate(url)
    t0 = time.perf_counter()
    owner, truth = build_library(url, args.docs, args.refs)
    print(
        f"library: {args.docs} documents, {args.docs * args.refs} references "
        f"({len(truth)} name library papers); written in {time.perf_counter() - t0:.1f} s"
    )

    t0, c0 = time.perf_counter(), time.process_time()
    with dbm.session_scope(url) as s:
        n = graph.rebuild(s, owner)
    build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    with dbm.session_scope(url) as s:
        links = {(c.citing_id, c.position): c.cited_id for c in s.exec(DocumentCitation.__table__.select()).all()}
        some_doc = s.exec(Document.__table__.select().limit(1)).first().id
    hit = sum(1 for key, cited in links.items() if truth.get(key) == cited)
    precision, recall = hit / max(1, len(links)), hit / max(1, len(truth))

    t0 = time.perf_counter()
    with dbm.session_scope(url) as s:
        graph.update_document(s, owner, some_doc)
    incremental_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    with dbm.session_scope(url) as s:
        missing = graph.missing(s, owner)
    missing_s, missing_cpu = time.perf_counter() - t0, time.process_time() - c0
    naive_s = naive_seconds(url)

    print(f"{'':34}{'ours':>12}{'naive all-pairs':>18}{'ratio':>9}")
    print(f"{'graph build (s)':34}{build_s:>12.1f}{naive_s:>18.1f}{naive_s / build_s:>8.1f}x")
    print(f"{'graph build, CPU of this process (s)':34}{build_cpu:>12.1f}")
    print(f"{'links found':34}{n:>12}")
    print(f"{'link precision / recall':34}{precision:>7.3f} / {recall:.3f}")
    print(f"{'one document arrives (s)':34}{incremental_s:>12.2f}")
    print(f"{'missing list (s), CPU (s)':34}{missing_s:>12.2f}{missing_cpu:>18.2f}")
    print(f"{'missing papers listed, top count':34}{len(missing):>12}{missing[0].cited_by_count if missing else 0:>18}")
    print(f"target: build ≤ 60 s on 2 cores — {'met' if build_s <= 60 else 'NOT met'}")


if __name__ == "__main__":
    main()
