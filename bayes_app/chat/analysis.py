"""Extractive document analysis: the fallback when the model's reply is not the analysis
JSON (offline mode answers with quoted claims)."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from bayes_app.search.sparse import STOPWORDS

_WORD = re.compile(r"[A-Za-z][A-Za-z\-]{3,}")
_ENTITY = re.compile(r"\b(?:[A-Z][a-zA-Z0-9\-]+(?:\s+(?:of|de|van|von)?\s*[A-Z][a-zA-Z0-9\-]+)*|[A-Z]{2,}[0-9]*)\b")
_EXTRA_STOP = frozenset(
    "this that these those with from have which were been also than their there "
    "using used such more most however between other each where when while "
    "table figure section paper results show shows shown based".split()
)
_LEADS = frozenset("we our in on for from this these those it its here after before when while".split())


def _strip_lead(name: str) -> str:
    """'The Tox21' -> 'Tox21': a capitalised sentence opener is not part of the name."""
    words = name.split()
    while len(words) > 1 and (words[0].lower() in STOPWORDS or words[0].lower() in _LEADS):
        words.pop(0)
    return " ".join(words)


def extractive_analysis(passages: list[dict[str, Any]], model_text: str) -> dict[str, Any]:
    """Topics (frequent content words), entities (frequent capitalised names), key facts
    (the model's quoted claims if any, else lead sentences) and a summary built from them."""
    text = " ".join(p["text"] for p in passages)
    words = Counter(
        w.lower() for w in _WORD.findall(text) if w.lower() not in STOPWORDS and w.lower() not in _EXTRA_STOP
    )
    entities = Counter(
        name
        for m in _ENTITY.finditer(text)
        if len(name := _strip_lead(m.group(0))) > 2
        and name.lower() not in STOPWORDS
        and name.lower() not in _EXTRA_STOP
    )
    facts: list[str] = []
    try:
        facts = [c["quote"] for c in json.loads(model_text).get("claims", []) if c.get("quote")]
    except (ValueError, AttributeError, TypeError):
        facts = []
    if not facts:
        from bayes_app.llm.offline import split_sentences

        facts = [s for p in passages[:3] for s in split_sentences(p["text"])[:1] if len(s.split()) >= 4]
    return {
        "topics": [w for w, _ in words.most_common(8)],
        "entities": [e for e, n in entities.most_common(10) if n > 1][:8],
        "key_facts": facts[:6],
        "summary": " ".join(facts[:3]),
    }
