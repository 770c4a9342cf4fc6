"""two_papers: an offline Research run over two real papers with two-part questions (issue 37).

    .venv/bin/python benchmarks/two_papers.py

The PaSa paper and the XAI review (52 pages; tests/fixtures/papers) in one library, in-process
(real index process, embeddings, Redis, SQLite; tests/support/maplab.py). For each two-part
question: claims written, papers cited, quotes from body text (the chunk's role), theme names
whose every word is in two of their claims, then a synthesis: its words, its markers and the
markers whose sentence is not in the passage they point at. Target: ≥ 12 claims a map, every
quote from body text, ≥ 5 synthesis markers all on their cited passage.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlmodel import select

from bayes_app.llm.offline import OfflineProvider
from bayes_app.models import Chunk, Citation, MapNode
from tests.support import pdfs
from tests.support.mapchecks import MARKER, markers_off_quote, name_checks, theme_claims
from tests.support.maplab import MapLab

QUESTIONS = [
    "How is the PaSa Crawler trained, and what reward does it get?",
    "Which methods explain molecular property predictions, and how are explanations evaluated?",
    "How do LLM agents search for papers, and how do counterfactual explanations work?",
]


def measure(lab: MapLab, question: str) -> dict:
    mid = lab.create_map(question)
    t = time.monotonic()
    lab.run("build_map", mid, OfflineProvider, prompt=question)
    secs = time.monotonic() - t
    with lab.sessions() as db:
        nodes = list(db.exec(select(MapNode).where(MapNode.map_id == mid)))
        claims = [n for n in nodes if n.kind == "claim"]
        cits = list(db.exec(select(Citation).where(Citation.map_id == mid)))
        roles = [db.get(Chunk, c.chunk_id).role if c.chunk_id and db.get(Chunk, c.chunk_id) else "?" for c in cits]
    names = name_checks(theme_claims(nodes))
    lab.run("synthesize", mid, OfflineProvider)
    with lab.sessions() as db:
        note = next(
            n for n in db.exec(select(MapNode).where(MapNode.map_id == mid)) if n.title.startswith("Synthesis:")
        )
        rows = sorted(db.exec(select(Citation).where(Citation.node_id == note.id)).all(), key=lambda c: c.created_at)
    return {
        "claims": len(claims),
        "papers": len({c.document_id for c in cits}),
        "body": sum(r in ("body", "caption") for r in roles),
        "quotes": len(roles),
        "names_held": f"{names['held']}/{names['names']}",
        "synthesis_words": len(MARKER.sub(" ", note.body).split()),
        "markers": len(MARKER.findall(note.body)),
        "markers_off": markers_off_quote(note.body, [c.quote for c in rows]),
        "seconds": round(secs, 1),
    }


def main() -> None:
    with MapLab([pdfs.PASA, pdfs.REVIEW]) as lab:
        print(f"{'question':62} claims papers body/quotes names synth.words markers off  s")
        for q in QUESTIONS:
            m = measure(lab, q)
            print(
                f"{q[:62]:62} {m['claims']:6} {m['papers']:6} {m['body']:4}/{m['quotes']:<6} "
                f"{m['names_held']:>5} {m['synthesis_words']:11} {m['markers']:7} {m['markers_off']:3} {m['seconds']:5}"
            )


if __name__ == "__main__":
    main()
