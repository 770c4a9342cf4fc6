"""A read draft as sentences with their citations, each citation pointing to a reference key."""

from __future__ import annotations

import re

from bayes_app.audits import citations
from bayes_app.audits.draft import Cite, Draft, Ref, Sentence
from bayes_app.audits.readers import RawDraft
from bayes_app.maps.sentences import claim_problem, split_sentences

MAX_SENTENCES = 2_000
_AY = re.compile(r"^ay:([a-z]+):(\d{4})([a-z]?)$")
# cue words of a sentence that states a finding (one that needs a source)
_FINDING = re.compile(
    r"\b(?:increase[sd]?|decrease[sd]?|reduce[sd]?|higher|lower|associated|associates?|correlat\w*|caus\w*|"
    r"risk|effect\w*|improv\w*|inhibit\w*|promot\w*|induc\w*|prevent\w*|predict\w*|significant\w*|"
    r"show(?:s|n|ed)?|found|demonstrat\w*|suggest\w*|requir\w*|lead(?:s)? to|results? in|linked|"
    r"respon\w*|activat\w*|express\w*|mediat\w*|regulat\w*|protect\w*|impair\w*|more|less|than)\b|\d",
    re.I,
)


def build(raw: RawDraft) -> Draft:
    """Split the paragraphs into sentences and point each citation to its reference (an
    author–year citation to its reference-list entry when there is one)."""
    refs = dict(raw.references)
    by_author_year = citations.link_author_year(refs)
    out: list[Sentence] = []
    for p_index, paragraph in enumerate(raw.paragraphs):
        fields = list(raw.fields.get(p_index, []))
        for text in split_sentences(paragraph):
            if len(out) >= MAX_SENTENCES:
                break
            cites = []
            for c in citations.find(text, fields):
                key = c.key
                if key.startswith("ay:"):
                    key = by_author_year.get(key) or _author_year_ref(refs, key)
                cites.append(Cite(marker=c.marker, key=key))
            out.append(Sentence(index=len(out), paragraph=p_index, text=text, cites=cites))
    return Draft(format=raw.format, sentences=out, references=refs)


def _author_year_ref(refs: dict[str, Ref], key: str) -> str:
    """An author–year citation without a reference-list entry: a reference of its own."""
    if key not in refs:
        m = _AY.match(key)
        name, year = (m.group(1), int(m.group(2))) if m else (key, None)
        refs[key] = Ref(key=key, text=f"{name.capitalize()} ({year})", authors=[name.capitalize()], year=year)
    return key


def states_finding(text: str) -> bool:
    """A sentence that states a finding (so it needs a source): a declarative sentence of at
    least five words that reads as a claim, or has a result cue (a direction, an association,
    a number)."""
    words = text.split()
    if len(words) < 5 or text.rstrip().endswith("?"):
        return False
    return bool(_FINDING.search(text)) or claim_problem(text) is None
