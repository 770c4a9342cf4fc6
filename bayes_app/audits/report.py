"""Exports of an audit: a Markdown report of the flagged sentences, and the draft as DOCX with a
Word comment on each flagged sentence and on each suggestion (python-docx's comments)."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

from bayes_app.audits.result import FLAGGED, SentenceResult, Summary

AUTHOR, INITIALS = "Bayes", "B"
LABEL = {
    "supported": "supported",
    "partial": "partly supported",
    "unsupported": "not supported by the cited paper",
    "contradicted": "contradicted by the cited paper",
    "not_in_library": "not in the library",
}


def _md_text(text: str) -> str:
    """Draft or paper text as literal Markdown (its markup characters escaped)."""
    out = []
    for ch in " ".join(text.split()):
        out.append("\\" + ch if ch in "\\`*_{}[]()<>#+!|~" else ch)
    return "".join(out)


def _where(title: str, page: int) -> str:
    return f"{title or 'a library paper'}, p. {page}"


def markdown(filename: str, summary: Summary, results: Sequence[SentenceResult]) -> str:
    """Each flagged sentence, its verdicts, the evidence (or its absence) and the suggestions."""
    lines = [
        f"# Citation check: {_md_text(filename)}",
        "",
        f"{summary.sentences} sentences, {summary.cited} cited ({summary.citations} citations): "
        f"{summary.supported} supported, {summary.partial} partly supported, {summary.unsupported} unsupported, "
        f"{summary.contradicted} contradicted, {summary.not_in_library} not in the library; "
        f"{summary.uncited_findings} uncited findings; {summary.flagged} sentences flagged; "
        f"{summary.suggestions} suggestions.",
        "",
    ]
    flagged = [r for r in results if r.flagged]
    if not flagged:
        lines.append("No sentence was flagged.")
    for r in flagged:
        lines += [f"## Sentence {r.index + 1}", "", f"> {_md_text(r.text)}", ""]
        if not r.citations:
            lines.append("- States a finding without a citation.")
        for c in r.citations:
            score = f" (score {c.score:.2f})" if c.score is not None else ""
            lines.append(f"- {_md_text(c.marker)} → {_md_text(c.reference)}: **{LABEL[c.verdict]}**{score}")
            if c.evidence is not None:
                where = _md_text(_where(c.title, c.evidence.page))
                lines.append(f"  - Closest passage ({where}): “{_md_text(c.evidence.quote)}”")
            elif c.verdict == "not_in_library":
                lines.append("  - Not in your library: add the paper to check this citation.")
            else:
                lines.append("  - No passage of the cited paper could be read.")
            if c.reason and c.verdict in FLAGGED:
                lines.append(f"  - Why: {_md_text(c.reason)}")
        if r.suggestions:
            lines.append("- Suggested sources:")
            for s in r.suggestions:
                lines.append(f"  - {_md_text(_where(s.title, s.page))} (score {s.score:.2f}): “{_md_text(s.quote)}”")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _comment_text(r: SentenceResult) -> str:
    parts = []
    if not r.citations:
        parts.append("This sentence states a finding without a citation.")
    for c in r.citations:
        if c.verdict not in FLAGGED:
            continue
        parts.append(f"{c.marker}: {LABEL[c.verdict]}.")
        if c.evidence is not None:
            parts.append(f"Closest passage ({_where(c.title, c.evidence.page)}): “{c.evidence.quote}”")
        if c.reason:
            parts.append(c.reason)
    return " ".join(parts)


# what XML 1.0 (so Word) cannot hold: control characters PDF text sometimes carries, lone surrogates
_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub("", text)


def docx(paragraphs: Sequence[Sequence[SentenceResult]]) -> bytes:
    """The draft (its sentences, paragraph by paragraph) with a comment on each flagged sentence
    and one on each of its suggestions."""
    import docx as python_docx

    document = python_docx.Document()
    for sentences in paragraphs:
        p = document.add_paragraph()
        for i, r in enumerate(sentences):
            run = p.add_run(_xml(r.text + (" " if i < len(sentences) - 1 else "")))
            if not r.flagged:
                continue
            document.add_comment(run, _xml(_comment_text(r)), author=AUTHOR, initials=INITIALS)
            for s in r.suggestions:
                document.add_comment(
                    run,
                    _xml(f"Suggested source: {_where(s.title, s.page)} (score {s.score:.2f}): “{s.quote}”"),
                    author=AUTHOR,
                    initials=INITIALS,
                )
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
