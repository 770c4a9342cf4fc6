"""The offline provider: used when no model endpoint is configured.

It never invents text. Its answer is made of sentences copied verbatim from the passages
in the request, each followed by its citation marker `[n]`, ranked by the learned relevance
model (`bayes_app.llm.relevance`) and laid out by `offline_answer.extractive_answer`. Passages travel in any message
(system, user or tool result) in the `format_passages` convention, one per line:

    [1] (Doc title, p. 7) Passage text ...

It also answers JSON-mode requests: with the claims the caller already chose, when it passes
`extra_body={"offline_claims": [{"quote", "passage"}]}` (offline research does; each kept only if
it is verbatim in that passage), as `{"claims": [{"text", "quote", "passage"}]}`; with
`{"claims": [{"text", "sentences": ["2.1"]}]}` when the request shows numbered sentences
(`bayes_app.llm.sentences`); else with `{"claims": [{"text", "quote", "passage"}]}`; and,
when `search_knowledge_base` is offered and no passage is present yet, calls that tool
with the question. Usage is counted locally and booked under the model name `offline`.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayes_app.library.hyphens import join_broken_words
from bayes_app.llm import choose, relevance
from bayes_app.llm.offline_answer import NO_PASSAGES as NO_PASSAGES  # re-exported for callers
from bayes_app.llm.offline_answer import _clean_title, _one_line, extractive_answer
from bayes_app.llm.sentences import Sentence, parse_numbered, strip_numbered
from bayes_app.llm.sentences import split_sentences as split_sentences  # re-exported for callers
from bayes_app.llm.stream import ModelStream, collect
from bayes_app.llm.tokens import count_request_tokens, count_tokens, message_text
from bayes_app.llm.types import (
    ChatRequest,
    Completion,
    Done,
    Message,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from bayes_app.search.crosslang import language_name
from bayes_app.search.sparse import tokens

OFFLINE_MODEL = "offline"
SEARCH_TOOL = "search_knowledge_base"

_PASSAGE = re.compile(
    r"^\[(\d+)\] \(((?:[^()\n]|\([^()\n]*\))*?)(?:, p\. ([^\s()]+))?(?:; in ([A-Z][A-Za-z]+))?"
    r"(?:; (you highlighted this))?\) (.+)$",
    re.M,
)
_WORD = re.compile(r"\s*\S+\s*")
MIN_SENTENCE_WORDS = 4
ANSWER_RATIO = 0.5  # a sentence whose probability of answering is under 0.5 × the best one's is not quoted
# … for a statement to check, a quarter: its evidence for and against runs over sentences that
# each say part of it (a result, its conditions, a paper reporting the opposite)
STATEMENT_RATIO = 0.25


def _no_model(_texts: Any) -> np.ndarray:
    raise RuntimeError("no embedding model")


@dataclass(frozen=True, slots=True)
class Passage:
    n: int
    text: str
    title: str = ""
    page: int | str | None = None
    language: str = ""  # "German" for a passage not in English ("" = English or unknown)
    highlighted: bool = False  # the user highlighted it in Zotero: preferred evidence


# ---- the passage convention ----------------------------------------------------------------------
def _as_passage(p: Passage | Mapping[str, Any], n: int) -> Passage:
    if isinstance(p, Passage):
        return p
    lang = str(p.get("language") or "")
    name = language_name(lang) if len(lang) <= 3 else lang
    return Passage(
        n=int(p.get("n") or n),
        text=str(p.get("text", "")),
        title=str(p.get("title") or ""),
        page=p.get("page"),
        language="" if name in ("", "English") or not name.isalpha() else name,
        highlighted=bool(p.get("highlighted")),
    )


def format_passages(passages: Iterable[Passage | Mapping[str, Any]]) -> str:
    """Numbered passages, one per line: `[n] (title, p. 7) text` (n = position unless given);
    a passage in another language than English says so: `[n] (title, p. 7; in German) text`."""
    lines = []
    for i, raw in enumerate(passages, 1):
        p = _as_passage(raw, i)
        text = _one_line(join_broken_words(p.text))
        if not text:
            continue
        head = _clean_title(p.title) or "untitled"
        if p.page not in (None, ""):
            head += f", p. {p.page}"
        if p.language:
            head += f"; in {p.language}"
        if p.highlighted:
            head += "; you highlighted this"
        lines.append(f"[{p.n}] ({head}) {text}")
    return "\n".join(lines)


def parse_passages(text: str) -> list[Passage]:
    """The passages `format_passages` wrote into `text`."""
    out = []
    for m in _PASSAGE.finditer(text):
        raw_page: str | None = m.group(3)
        page: int | str | None = raw_page
        if raw_page is not None and raw_page.isdigit():
            page = int(raw_page)
        out.append(
            Passage(
                n=int(m.group(1)),
                title=m.group(2),
                page=page,
                text=m.group(6),
                language=m.group(4) or "",
                highlighted=bool(m.group(5)),
            )
        )
    return out


# ---- reading the request -------------------------------------------------------------------------
def _passages_in(messages: list[Message]) -> list[Passage]:
    seen: dict[int, Passage] = {}
    for m in messages:
        for p in parse_passages(message_text(m.get("content"))):
            seen.setdefault(p.n, p)
    return [seen[n] for n in sorted(seen)]


def _numbered_in(messages: list[Message]) -> list[Sentence]:
    seen: dict[str, Sentence] = {}
    for m in messages:
        for s in parse_numbered(message_text(m.get("content"))):
            seen.setdefault(s.id, s)
    return list(seen.values())


def _question(messages: list[Message]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            return strip_numbered(_PASSAGE.sub("", message_text(m.get("content"))))
    return ""


def _tool(request: ChatRequest, name: str) -> dict[str, Any] | None:
    for t in request.tools or ():
        fn = t.get("function", t)
        if fn.get("name") == name:
            return dict(fn)
    return None


def _query_argument(tool: dict[str, Any]) -> str:
    params = tool.get("parameters") or {}
    props = params.get("properties") or {}
    if "query" in props or not props:
        return "query"
    strings = [k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "string"]
    required = [k for k in params.get("required") or () if k in strings]
    return str((required or strings or ["query"])[0])


def _wants_json(request: ChatRequest) -> bool:
    fmt = request.response_format or {}
    return fmt.get("type") in ("json_object", "json_schema")


def _should_search(request: ChatRequest, passages: list[Passage]) -> bool:
    tool = _tool(request, SEARCH_TOOL)
    if tool is None or request.tool_choice == "none":
        return False
    choice = request.tool_choice
    if isinstance(choice, dict) and (choice.get("function") or {}).get("name") not in (None, SEARCH_TOOL):
        return False
    searched = any(m.get("role") == "tool" for m in request.messages)
    return not passages and not searched


# ---- choosing sentences --------------------------------------------------------------------------
Candidate = tuple[str, Any, int, int]  # (sentence, key, passage rank, position in the passage)


_CAPTION = re.compile(r"^(?:Figure|Fig\.|Table|Algorithm|Listing)\s*[A-Z]?\d", re.I)
_NUMBERISH = re.compile(r"^[(\[]?[-+±~<>≤≥]?\d[\d.,:/%×x±]*[)\]]?\*?$")


def tabular(sentence: str) -> bool:
    """A table row read as text ("w/o RL 0.6556 0.1476 0.4210 …"), not a sentence to quote:
    three numbers in a row, or numbers making up half of its words (three at least)."""
    words = sentence.split()
    run = longest = numbers = 0
    for w in words:
        is_num = bool(_NUMBERISH.match(w))
        numbers += is_num
        run = run + 1 if is_num else 0
        longest = max(longest, run)
    return longest >= 3 or (numbers >= 3 and numbers >= 0.5 * len(words))


def _complete(sentence: str, first: bool, last: bool) -> bool:
    """False for a sentence cut by the passage's edge (a page or chunk break): the passage's last
    sentence without end punctuation, or its first one starting mid-sentence (lower case)."""
    if last and not re.search(r"[.!?][\"'”’)\]]*(?:\s*\[\d+(?:[,–-]\d+)*\])?$", sentence):
        return False
    return not (first and sentence[:1].islower())


def _quotable(sentence: str) -> bool:
    """A complete declarative sentence of prose (no figure text, equation, question, reference)."""
    from bayes_app.maps.sentences import claim_problem

    if _CAPTION.match(sentence):  # "Table 1: Examples of queries …" titles a table; it answers nothing
        return False
    # the verb test is rough ("Counterfactuals explain …"): it doesn't decide here
    return claim_problem(sentence) in (None, "too_long", "too_short", "no_verb")


def rank_candidates(
    question: str,
    candidates: list[Candidate],
    limit: int = 3,
    min_overlap: int = 0,
    embed: choose.Embed | None = None,
    overlap_with: str | None = None,
    ratio: float = ANSWER_RATIO,
) -> list[tuple[str, Any]]:
    """Up to `limit` (sentence, key) pairs chosen for what the question asks: dense similarity
    to the question plus term coverage, then maximal marginal relevance so one fact appears
    once. A sentence leaning on the one before it ("This…", "It…") is quoted with it (same
    passage) or skipped; sentences cut by a passage edge, short sentences, table rows and
    repeats are skipped. With `min_overlap`, only sentences sharing at least that many distinct
    terms with the question (or with `overlap_with`)."""
    q_terms = set(tokens(overlap_with if overlap_with is not None else question))
    by_place = {(rank, pos): (sentence, key) for sentence, key, rank, pos in candidates}
    first_pos: dict[int, int] = {}
    last_pos: dict[int, int] = {}
    for _, _, rank, pos in candidates:
        first_pos[rank] = min(pos, first_pos.get(rank, pos))
        last_pos[rank] = max(pos, last_pos.get(rank, pos))
    texts: list[str] = []  # what is judged: the sentence itself
    quotes: list[str] = []  # what is quoted: with the sentence before it when it leans on it
    keys: list[Any] = []
    places: list[tuple[int, int]] = []  # (position, passage rank) of each
    seen: set[str] = set()
    for sentence, key, rank, pos in candidates:
        if len(sentence.split()) < MIN_SENTENCE_WORDS or sentence in seen or tabular(sentence):
            continue
        seen.add(sentence)
        if not _complete(sentence, pos == first_pos[rank], pos == last_pos[rank]) or not _quotable(sentence):
            continue
        quoted = _with_previous(sentence, key, by_place.get((rank, pos - 1)), pos - 1 == first_pos[rank])
        if quoted is None:
            continue
        quote, quote_key = quoted
        if min_overlap and len(q_terms & set(tokens(quote))) < min_overlap:
            continue
        texts.append(sentence)
        quotes.append(quote)
        keys.append(quote_key)
        places.append((pos, rank))
    if not texts:
        return []
    # the learned relevance model (`llm.relevance`): each sentence judged among the others, with
    # its passage and its neighbours
    passages = {rank: " ".join(t for (r, _), (t, _) in sorted(by_place.items()) if r == rank) for rank in last_pos}
    vecs = choose._safe_embed(embed, texts)
    scores = relevance.score(
        question,
        texts,
        [passages[r] for _, r in places],
        [pos - first_pos[r] for pos, r in places],
        embed=embed if vecs is not None else _no_model,
        vecs=vecs,
        drop_off_subject=True,
    )
    picked = _picked(scores, vecs, quotes, limit, ratio)
    out = choose.with_list_items(picked, texts, quotes, places, limit + choose.LIST_EXTRA)
    return [(quotes[i], keys[i]) for i in out]


def _picked(scores: np.ndarray, vecs: np.ndarray | None, quotes: list[str], limit: int, ratio: float) -> list[int]:
    """Up to `limit` quotes in MMR order, none under `ratio` × the best one's score or inside another."""
    # a sentence already chosen may reappear inside a two-sentence quote: the MMR step drops it
    out: list[int] = []
    top = float(scores.max())
    for i in choose.mmr(scores, vecs, 2 * limit):
        if out and float(scores[i]) < top * ratio:  # far below the best: not an answer
            continue
        if not any(quotes[i] in quotes[j] or quotes[j] in quotes[i] for j in out):
            out.append(i)
    return out[:limit]


def _with_previous(
    sentence: str, key: Any, prev: tuple[str, Any] | None, prev_opens_passage: bool
) -> tuple[str, Any] | None:
    """(what is quoted, its key): the sentence, with the one before it (`prev`) when it leans on
    it ("This…", "It…"); None when it leans on a sentence that cannot be quoted."""
    if not choose.needs_previous(sentence):
        return sentence, key
    if (
        prev is None
        or choose.leans_on_previous(prev[0])
        or tabular(prev[0])
        or not _complete(prev[0], prev_opens_passage, False)
    ):
        return None
    return f"{prev[0]} {sentence}", (key if prev[1] == key else (prev[1], key))


def passage_sentences(text: str) -> list[str]:
    """A passage's sentences as an answer may quote them: verbatim, run-in headings, bullets and
    leading citation marks cut off (`maps.sentences.candidate_sentences`)."""
    from bayes_app.maps.sentences import candidate_sentences

    return candidate_sentences(text)


def select_sentences(
    question: str, passages: list[Passage], limit: int = 3, ratio: float = ANSWER_RATIO
) -> list[tuple[str, int]]:
    """Up to `limit` (sentence, passage number) pairs (see `rank_candidates`)."""
    candidates = [
        (sentence, p.n, rank, pos)
        for rank, p in enumerate(passages)
        for pos, sentence in enumerate(passage_sentences(p.text))
    ]
    return rank_candidates(question, candidates, limit, ratio=ratio)


def select_sentence_ids(
    question: str, sentences: list[Sentence], limit: int = 3, min_overlap: int = 0
) -> list[tuple[str, Any]]:
    """Up to `limit` (sentence, sentence id) pairs of numbered sentences (see `rank_candidates`)."""
    order = {n: i for i, n in enumerate(dict.fromkeys(s.passage for s in sentences))}
    return rank_candidates(question, [(s.text, s.id, order[s.passage], s.index) for s in sentences], limit, min_overlap)


def dictated(request: ChatRequest, passages: list[Passage]) -> list[tuple[str, int, str]] | None:
    """The claims the caller chose (`extra_body["offline_claims"]`: quote, passage and optional
    wording), kept only when the quote is verbatim in its passage; None when none are dictated."""
    items = (request.extra_body or {}).get("offline_claims")
    if not isinstance(items, list):
        return None
    by_n = {p.n: _one_line(p.text) for p in passages}
    out = []
    for it in items:
        if not isinstance(it, dict):
            continue
        quote, n = _one_line(str(it.get("quote") or "")), it.get("passage")
        if quote and isinstance(n, int) and quote in by_n.get(n, ""):
            out.append((quote, n, _one_line(str(it.get("text") or "")) or quote))
    return out


def claims_json(picked: list[tuple[str, int]] | list[tuple[str, int, str]]) -> str:
    """Claims quoting the picked sentences; the wording is the quote unless given third."""
    return json.dumps(
        {"claims": [{"text": t[2] if len(t) > 2 else t[0], "quote": t[0], "passage": t[1]} for t in picked]},
        ensure_ascii=False,
    )


def claim_ids_json(picked: list[tuple[str, str]]) -> str:
    """Claims that select their sentences by id (the numbered-sentence convention)."""
    return json.dumps(
        {"claims": [{"text": s, "sentences": list(i) if isinstance(i, tuple) else [i]} for s, i in picked]},
        ensure_ascii=False,
    )


# ---- the provider ----------------------------------------------------------------------------------
class OfflineProvider:
    """Same interface as `OpenAIProvider`; deterministic and extractive."""

    name = "offline"

    def __init__(self, max_sentences: int | None = None, word_delay_s: float = 0.0) -> None:
        # None: as many as the question asks for (`choose.answer_length`; claims: 5)
        self.max_sentences = max_sentences
        self.word_delay_s = word_delay_s  # pacing for demos/tests (BAYES_OFFLINE_WORD_DELAY_MS)

    def __repr__(self) -> str:
        return "OfflineProvider()"

    def stream(self, request: ChatRequest) -> OfflineStream:
        return OfflineStream(self, request)

    async def complete(self, request: ChatRequest) -> Completion:
        return await collect(self.stream(request))

    async def aclose(self) -> None:
        return None


class OfflineStream(ModelStream):
    usage_model = OFFLINE_MODEL

    def __init__(self, provider: OfflineProvider, request: ChatRequest) -> None:
        super().__init__(request)
        self._provider = provider

    async def _events(self) -> AsyncIterator[StreamEvent]:
        request = self.request
        passages = _passages_in(request.messages)
        question = _question(request.messages)
        if _should_search(request, passages):
            tool = _tool(request, SEARCH_TOOL) or {}
            call = ToolCall(
                id="call_offline_1",
                name=SEARCH_TOOL,
                arguments_json=json.dumps({_query_argument(tool): question}, ensure_ascii=False),
            )
            yield ToolCallDelta(0, call.id, call.name, call.arguments_json)
            yield call
            output, finish = call.name + call.arguments_json, "tool_calls"
        else:
            chosen = dictated(request, passages) if _wants_json(request) else None
            numbered = _numbered_in(request.messages) if _wants_json(request) and chosen is None else []
            limit = self._provider.max_sentences or choose.ANSWER_SENTENCES
            if chosen is not None:
                output = claims_json(chosen)
            elif numbered:
                output = claim_ids_json(select_sentence_ids(question, numbered, limit))
            elif _wants_json(request):
                output = claims_json(select_sentences(question, passages, limit))
            else:
                limit = self._provider.max_sentences or choose.answer_length(question)
                ratio = STATEMENT_RATIO if choose.checks_statement(question) else ANSWER_RATIO
                output = extractive_answer(select_sentences(question, passages, limit, ratio), passages)
            finish = "stop"
            for word in _WORD.findall(output):
                yield TextDelta(word)
                await asyncio.sleep(self._provider.word_delay_s)  # a checkpoint, so Stop can interrupt
        yield Usage(
            model=OFFLINE_MODEL,
            input_tokens=count_request_tokens(request),
            cached_tokens=0,
            output_tokens=count_tokens(output),
            estimated=False,
        )
        yield Done(finish)
