"""Is an Ask answer grounded in the library? And what to add when it is not.

An answer is *cited* when its text carries at least one marker [n] of a passage the run
gave the model. Otherwise the system does not leave an uncited answer standing alone:
- the library has sentences sharing the question's content terms → they are appended,
  verbatim, each with its citation (*quoted*);
- it has none → the answer says the library doesn't support an answer (*unsupported*);
- the message asks nothing of the library (a greeting, arithmetic or the date answered by
  a tool) → it is only labelled (*uncited*).
Each state but *cited* is labelled "No sources cited" in the page and the API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bayes_app.library.hyphens import join_broken_words
from bayes_app.llm.markup import literal
from bayes_app.llm.offline import Passage, passage_sentences, rank_candidates, split_sentences
from bayes_app.search.sparse import tokens

CITED, QUOTED, UNSUPPORTED, UNCITED = "cited", "quoted", "unsupported", "uncited"
LABELS = {
    CITED: "",
    QUOTED: "No sources cited by the model: the library sentences below are quoted verbatim",
    UNSUPPORTED: "No sources cited: the library doesn't support an answer",
    UNCITED: "No sources cited",
}
UNSUPPORTED_TEXT = (
    "The library doesn't support an answer to this question. Try other words, or add papers on the topic."
)
QUOTED_HEAD = "**From the library** (quoted verbatim; the answer above cites no source):"
QUOTED_SENTENCES = 3

_MARKERS = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")
_SAYS_UNSUPPORTED = re.compile(
    r"library (?:doesn't|does not|can't|cannot) support an answer|"
    r"no passages (?:in the library )?match|nothing in your library addresses|"
    r"your library is empty",
    re.I,
)
# words of a question that say nothing about its topic
_ASKING = frozenset(
    """what whats how why which who whom whose when where does do did done is are was were
be been can could would should shall may might must will explain describe tell me us about please
give list show summarise summarize say says said mean means there any some much many
hi hello hey thanks thank you ok okay yes great cool bye good morning evening""".split()
)
_WORD = re.compile(r"\w+")


def cited_numbers(text: str, available: set[int]) -> list[int]:
    """The passage numbers the text cites ([2], [1, 3], [1][2]) that the run gave it, in order."""
    out: list[int] = []
    for m in _MARKERS.finditer(text or ""):
        for part in re.split(r"[,;]", m.group(1)):
            n = int(part.strip())
            if n in available and n not in out:
                out.append(n)
    return out


def _cited_sentence(claim: str, passage_text: str) -> str:
    """The passage sentence an answer sentence cites: the one containing it verbatim (an extractive
    answer), else the one sharing most of its terms; "" when none shares any."""
    sentences = split_sentences(" ".join(join_broken_words(passage_text).split()))
    claim = " ".join(claim.split())
    for s in sentences:
        if claim and (claim in s or s in claim) and len(s.split()) >= 3:
            return s
    terms = set(tokens(claim))
    best = max(sentences, key=lambda s: len(terms & set(tokens(s))), default="")
    return best if best and terms & set(tokens(best)) else ""


def mark_cited(answer: str, citations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run's citations, each with `cited` (the answer carries its marker) and `sentence`: the
    passage's own sentence the answer cites, verbatim ("" when not cited), to open the viewer at."""
    by_n = {int(c["n"]): c for c in citations}
    sentence: dict[int, str] = {}
    start = 0
    for m in _MARKERS.finditer(answer or ""):
        claim = re.split(r"(?<=[.!?])\s+|\n+", answer[start : m.start()].replace(QUOTED_HEAD, "").strip())[-1]
        start = m.end()
        for part in re.split(r"[,;]", m.group(1)):
            n = int(part.strip())
            if n in by_n and n not in sentence:
                sentence[n] = _cited_sentence(claim, str(by_n[n].get("text") or ""))
    return [{**c, "cited": int(c["n"]) in sentence, "sentence": sentence.get(int(c["n"]), "")} for c in citations]


def content_terms(question: str) -> set[str]:
    """The stemmed terms of what the question is about (asking words dropped)."""
    return set(
        tokens(" ".join(w for w in _WORD.findall(question) if w.lower() not in _ASKING and any(c.isalpha() for c in w)))
    )


def supporting_sentences(
    question: str, passages: list[Passage], limit: int = QUOTED_SENTENCES
) -> list[tuple[str, int]]:
    """Sentences of the passages that share enough of the question's content terms (one
    for a question of one or two terms, two otherwise), best first, with their numbers."""
    terms = content_terms(question)
    if not terms:
        return []
    about = " ".join(sorted(terms))
    candidates = [
        (s, p.n, rank, pos) for rank, p in enumerate(passages) for pos, s in enumerate(passage_sentences(p.text))
    ]
    return rank_candidates(question, candidates, limit, min_overlap=1 if len(terms) <= 2 else 2, overlap_with=about)


@dataclass
class Grounding:
    state: str
    cited: list[int] = field(default_factory=list)
    addition: str = ""  # text appended to the answer (quoted sentences or the unsupported line)

    @property
    def label(self) -> str:
        return LABELS[self.state]

    def to_json(self) -> dict[str, Any]:
        return {"grounding": self.state, "label": self.label, "cited": self.cited}


def ground(answer: str, question: str, citations: list[dict[str, Any]], used_other_tools: bool = False) -> Grounding:
    """The grounding of `answer` given the passages the run cited (`citations`: n, text...)."""
    cited = cited_numbers(answer, {int(c["n"]) for c in citations})
    if cited:
        return Grounding(CITED, cited)
    if _SAYS_UNSUPPORTED.search(answer or ""):
        return Grounding(UNSUPPORTED)
    if used_other_tools or not content_terms(question):  # arithmetic, the date, a greeting
        return Grounding(UNCITED)
    passages = [
        Passage(int(c["n"]), str(c.get("text") or ""), str(c.get("title") or ""), c.get("page")) for c in citations
    ]
    picked = supporting_sentences(question, passages)
    if picked:
        quoted = " ".join(f"{literal(s)} [{n}]" for s, n in picked)  # source text: never markup
        return Grounding(QUOTED, [], f"{QUOTED_HEAD} {quoted}")
    return Grounding(UNSUPPORTED, [], UNSUPPORTED_TEXT)
