"""Check one sentence of a draft: each citation against the best passages of the paper it
cites, and suggestions from the whole library for a flagged citation or an uncited finding.
Pure: the library is handed in (`Library`), so it is tested without a database."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from bayes_app.audits import citations, contradiction, nli
from bayes_app.audits.draft import Draft, Sentence
from bayes_app.audits.judge import UNSUPPORTED_BELOW, Embed, Judgement, judge, relevance
from bayes_app.audits.resolve import Resolver
from bayes_app.audits.result import FLAGGED, CitationResult, Evidence, SentenceResult, Suggestion
from bayes_app.audits.sentences import states_finding

TOP_PASSAGES = 3  # passages of the cited paper the scorer (or the model) judges
SUGGESTIONS = 3
SEARCH_K = 12
SUGGESTION_MIN = UNSUPPORTED_BELOW  # a suggestion's support score floor


@dataclass(frozen=True)
class Passage:
    """A verbatim sentence of a library paper and its page."""

    document_id: str
    page: int
    text: str


class Library(Protocol):
    """What an audit reads of the library (the database and index implement it)."""

    def passages(self, document_id: str) -> Sequence[Passage]: ...

    def search(self, text: str, k: int) -> Sequence[Passage]: ...

    def title(self, document_id: str) -> str: ...


@dataclass
class Candidates:
    """The passages selected for one citation and the scorer's judgement of each (the model
    judges among the same passages)."""

    passages: list[Passage] = field(default_factory=list)
    judgements: list[Judgement] = field(default_factory=list)


def best_passages(claim: str, passages: Sequence[Passage], embed: Embed, k: int = TOP_PASSAGES) -> list[Passage]:
    """The `k` passages most relevant to the claim."""
    scores = relevance(claim, [p.text for p in passages], embed)
    order = sorted(range(len(passages)), key=lambda i: -scores[i])
    return [passages[i] for i in order[:k]]


def _pick(cands: Candidates) -> int:
    """The judgement a verdict rests on: a contradiction first (the most probable), else the
    best-supported passage."""
    contra = [i for i, j in enumerate(cands.judgements) if j.verdict == "contradicted"]
    if contra:
        return max(contra, key=lambda i: cands.judgements[i].score)
    return max(range(len(cands.judgements)), key=lambda i: cands.judgements[i].score)


def check_sentence(
    sentence: Sentence, draft: Draft, resolver: Resolver, library: Library, embed: Embed
) -> tuple[SentenceResult, list[Candidates | None]]:
    """The sentence's citations judged by the scorer, its suggestions, and per citation the
    candidate passages (None for a reference not in the library)."""
    claim = citations.strip_markers(sentence.text, sentence.cites)
    out = SentenceResult(
        index=sentence.index, paragraph=sentence.paragraph, text=sentence.text, finding=states_finding(claim)
    )
    cands_of: list[Candidates | None] = []
    for cite in sentence.cites:
        ref = draft.references.get(cite.key)
        ref_text = ref.text if ref is not None else cite.marker
        res = resolver.resolve(ref) if ref is not None else None
        if res is None or res.document_id is None:
            reason = (
                "No reference-list entry for this citation." if ref is None else "This paper is not in your library."
            )
            out.citations.append(
                CitationResult(
                    marker=cite.marker,
                    reference=ref_text,
                    document_id=None,
                    verdict="not_in_library",
                    score=None,
                    evidence=None,
                    reason=reason,
                )
            )
            cands_of.append(None)
            continue
        doc_id = res.document_id
        paper = library.passages(doc_id)
        passages = best_passages(claim, paper, embed)
        cands = Candidates(passages, [judge(claim, p.text, embed) for p in passages])
        contradicted_citation(claim, [p.text for p in paper], cands, embed)
        cands_of.append(cands)
        out.citations.append(verdict_of(cite.marker, ref_text, doc_id, library.title(doc_id), cands))
    if any(c.verdict in FLAGGED - {"not_in_library"} for c in out.citations) or (
        any(c.verdict == "not_in_library" for c in out.citations) or (not sentence.cites and out.finding)
    ):
        exclude = {c.document_id for c in out.citations if c.document_id and c.verdict not in FLAGGED}
        out.suggestions = suggest(claim, library, embed, exclude)
    return out, cands_of


def contradicted_citation(claim: str, paper: Sequence[str], cands: Candidates, embed: Embed) -> None:
    """The citation-level contradiction model over the cited paper's passages (`paper`): when
    it says the paper reports the opposite, the candidate passage that most contradicts the claim
    (`contradiction.most_contradicting`) is judged `contradicted` (a citation the scorer already
    flags is left as it is). With the NLI reader installed and on, its readings feed both."""
    if not cands.passages or cands.judgements[_pick(cands)].verdict in ("unsupported", "contradicted"):
        return
    reader = nli.reader()
    p = contradiction.contradicts(contradiction.features(claim, paper, embed, reader))
    if p is not None:
        i = contradiction.most_contradicting(claim, [c.text for c in cands.passages], embed, reader)
        cands.judgements[i] = Judgement("contradicted", round(p, 3), CONTRADICTED_REASON)


CONTRADICTED_REASON = "The cited paper is about the same thing but reports the opposite."


def verdict_of(
    marker: str,
    reference: str,
    doc_id: str,
    title: str,
    cands: Candidates,
    pick: int | None = None,
    judged: Judgement | None = None,
    judged_by: str = "scorer",
) -> CitationResult:
    """A citation's result resting on one of its candidate passages (never without one)."""
    if not cands.passages:
        return CitationResult(
            marker=marker,
            reference=reference,
            document_id=doc_id,
            verdict="unsupported",
            score=0.0,
            evidence=None,
            reason="The cited paper has no readable text in the library.",
            title=title,
        )
    i = _pick(cands) if pick is None else pick
    j = judged or cands.judgements[i]
    p = cands.passages[i]
    return CitationResult(
        marker=marker,
        reference=reference,
        document_id=doc_id,
        verdict=j.verdict,
        score=round(j.score, 3),
        evidence=Evidence(document_id=p.document_id, page=p.page, quote=p.text),
        reason=j.reason,
        judged_by=judged_by,
        title=title,
    )


def suggest(claim: str, library: Library, embed: Embed, exclude: set[str] = frozenset()) -> list[Suggestion]:  # type: ignore[assignment]
    """The library's best sources for a claim: one passage per paper, by support score."""
    hits = [p for p in library.search(claim, SEARCH_K) if p.document_id not in exclude]
    best: dict[str, tuple[float, Passage]] = {}
    for p in hits:
        j = judge(claim, p.text, embed)
        score = j.score if j.verdict != "contradicted" else 0.0
        if score >= SUGGESTION_MIN and (p.document_id not in best or score > best[p.document_id][0]):
            best[p.document_id] = (score, p)
    ranked = sorted(best.values(), key=lambda sp: -sp[0])[:SUGGESTIONS]
    return [
        Suggestion(
            document_id=p.document_id, page=p.page, quote=p.text, score=round(s, 3), title=library.title(p.document_id)
        )
        for s, p in ranked
    ]
