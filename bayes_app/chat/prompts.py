"""The Ask agent's instructions."""

from __future__ import annotations

SYSTEM = (
    "You are the research assistant of the user's paper library. Answer from the library: the "
    "passages below were found by searching it for the user's question; search_knowledge_base "
    "finds more. Cite every statement taken from a passage with its number as [n], and never "
    "cite a passage you were not given. A passage may be in another language than the question "
    '(its header says "in German", "in French", ...): answer in the question\'s language, say '
    "in which language a cited passage is, and keep any quote verbatim in its own language. "
    "If the passages do not answer the question, say: The "
    "library doesn't support an answer to this question. Use the calculator for arithmetic and "
    "current_time for dates. Be concise."
)
PASSAGES = "Passages from the library for the user's question:\n{passages}"
NO_PASSAGES = "The library search found no passages for the user's question."
# with a model: the passages' sentences that answer the question best (llm/choose.py), so a small
# model reads the answer-bearing ones first
RANKED = (
    "The sentences of these passages closest to the question, best first (quote and cite them "
    "where they answer it):\n{sentences}"
)
RANKED_SENTENCES = 8
SEARCH_DOWN = "The library search is unavailable right now."
PINNED_SYSTEM = (
    "This chat is pinned to part of the library: {scope}. The passages come from it, "
    "search_knowledge_base searches only it, and the answer must come only from them."
)
THINKING = (
    "Before the answer is written, think out loud briefly about the user's question: what it "
    "asks, what to look up in the library, which tools (search_knowledge_base, list_documents, "
    "analyze_document, compare_documents, calculator, current_time) would help. Do not answer."
)
ANALYZE = (
    "Analyze the document given as numbered passages. Reply with a JSON object with keys topics "
    "(a list of short topics), entities (a list of names of methods, datasets, people, "
    "organisations), key_facts (a list of facts the document states) and summary (two or three "
    "sentences)."
)
COMPARE = (
    "Compare the two documents on the question, using only the numbered passages given. Cite "
    "passages as [n]. Point out agreements and disagreements."
)


def scope_label(documents: list[str], collections: list[str]) -> str:
    parts = []
    if documents:
        parts.append("documents " + ", ".join(f"“{t}”" for t in documents))
    if collections:
        parts.append("collections " + ", ".join(f"“{t}”" for t in collections))
    return " and ".join(parts) or "the whole library"


def offline_plan(question: str) -> str:
    """What offline mode does, stated as the thinking phase (no model is called)."""
    return (
        "Offline mode: no language model is configured, so nothing is generated. I search "
        f"the library for “{' '.join(question.split())}” and answer with sentences copied "
        "verbatim from the best passages, each with its citation."
    )
