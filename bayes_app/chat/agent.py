"""The "ask" run kind: the library chat agent (a fresh agent per question).

Phase 1 streams the model's thinking about the question (best effort: a failure there never
costs the answer). Phase 2 is grounded: the question is searched first (within the pinned
scope) and the passages go to the model with the instructions, so a model that never calls
tools still answers from the library; it may search again or use the other tools
(list_documents, analyze_document and compare_documents as direct model calls, calculator,
current_time). Citations (`metadata`) always go out before the first `text` token. At the end
the answer's grounding is judged (`bayes_app.chat.grounding`): an answer citing nothing gets
the library's own sentences quoted verbatim, or the line that the library doesn't support an
answer, and a `grounding` event with its label; a `memory` line ends the answer. The answer
is stored in its conversation slot whatever way the run ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from bayes_app.agents.llm_json import ask_json
from bayes_app.chat import conversations as chat
from bayes_app.chat import grounding, prompts, tools
from bayes_app.chat.analysis import extractive_analysis
from bayes_app.chat.calculator import CalculatorError, calculate
from bayes_app.chat.library_search import TOP_K, ranked_sentences, search_library, without_marks
from bayes_app.chat.memory import Memory, fit
from bayes_app.library import documents
from bayes_app.llm.offline import format_passages
from bayes_app.llm.types import (
    ChatRequest,
    ProviderError,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    assistant_message,
    tool_message,
)
from bayes_app.models import Collection, Conversation, Document, MessageStatus
from bayes_app.runs.executor import RunAborted, RunContext
from bayes_app.runs.kinds import RunKind

log = logging.getLogger("bayes.chat.agent")
# offline, sentences are chosen from the passages by relevance (llm/choose.py): more passages cost
# no model tokens and reach answer-bearing sentences the first few miss
OFFLINE_TOP_K = 14
MAX_STEPS = 6  # agent rounds; the last one must answer (tool_choice "none")
MAX_TOKENS = 1_000
THINKING_TOKENS = 300
TOOL_RESULT_CHARS = 12_000
NO_STRONG_MATCHES = (
    "No strong matches: nothing in the library is close to this query (the closest "
    "passages score under the relevance floor). Say that the library has nothing on "
    "it; do not quote or cite unrelated passages."
)


@dataclass
class Turn:
    """What the run knows about the question it answers."""

    question: str
    answer_id: str | None
    scope: dict[str, list[str]]
    scope_label: str
    memory: Memory


@dataclass
class Draft:
    """The answer as it is being written."""

    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)
    by_chunk: dict[str, int] = field(default_factory=dict)
    metadata_sent: bool = False
    grounding: str | None = None
    other_tools: bool = False  # the calculator or the clock answered part of it

    def cite(self, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Number new passages after the ones already cited; returns the hits with `n`."""
        out = []
        for h in hits:
            n = self.by_chunk.get(h["chunk_id"])
            if n is None:
                n = len(self.citations) + 1
                self.by_chunk[h["chunk_id"]] = n
                self.citations.append({**h, "n": n})
            out.append({**h, "n": n})
        return out


def load_turn(sessions: Any, run_input: dict[str, Any]) -> Turn:
    question = str(run_input.get("prompt", ""))
    conv_id, answer_id = run_input.get("conversation_id"), run_input.get("answer_id")
    with sessions() as db:
        conv = db.get(Conversation, conv_id) if conv_id else None
        scope: dict[str, list[str]] = dict(conv.scope or {}) if conv else dict(run_input.get("scope") or {})
        history = []
        if conv is not None:
            from bayes_app.models import ChatMessage

            slot = db.get(ChatMessage, answer_id) if answer_id else None
            history = chat.history_before(db, conv.id, slot.position - 1 if slot else 1 << 30)
        docs = _titles(db, Document, scope.get("document_ids") or [])
        colls = _titles(db, Collection, scope.get("collection_ids") or [])
    label = prompts.scope_label(docs, colls) if scope else ""
    return Turn(question, answer_id, scope, label, fit(history, question))


def _titles(db: Any, model: Any, ids: list[str]) -> list[str]:
    out: list[str] = []
    for i in ids:
        row = db.get(model, i)
        if row is not None:
            out.append(str(getattr(row, "title", None) or getattr(row, "filename", None) or getattr(row, "name", "")))
    return out


def _history_messages(turn: Turn) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    for ex in turn.memory.kept:
        msgs += [{"role": "user", "content": ex.question}, {"role": "assistant", "content": ex.answer}]
    return msgs


class AskAgent:
    """One question answered by a fresh agent on the run's context."""

    def __init__(self, ctx: RunContext, turn: Turn) -> None:
        self.ctx, self.turn, self.draft = ctx, turn, Draft()
        self.offline = getattr(ctx.provider, "name", "") == "offline"

    def model(self, role: str) -> str:
        """The model of `role` chosen (and priced) when the run started; else the run's."""
        return self.ctx.model_for(role)

    # ---- output ------------------------------------------------------------------------
    def _send_metadata(self) -> None:
        data: dict[str, Any] = {"citations": self.draft.citations}
        if self.turn.scope:
            data["scope"] = self.turn.scope_label
        self.ctx.emit("metadata", data)
        self.draft.metadata_sent = True

    def _text(self, delta: str, by: str | None = None) -> None:
        """Stream a piece of the answer; `by` marks text the system added (not the model's)."""
        if not self.draft.metadata_sent:
            self._send_metadata()  # citations always precede the first text token
        self.draft.text.append(delta)
        self.ctx.emit("text", {"delta": delta, "by": by} if by else {"delta": delta})

    def _thinking(self, delta: str) -> None:
        self.draft.thinking.append(delta)
        self.ctx.emit("thinking", {"delta": delta})

    # ---- phase 1 -----------------------------------------------------------------------
    async def think(self) -> None:
        if self.offline:
            self._thinking(prompts.offline_plan(self.turn.question))
            return
        request = ChatRequest(
            model=self.model("thinking"),
            max_tokens=THINKING_TOKENS,
            messages=[
                {"role": "system", "content": prompts.THINKING},
                *_history_messages(self.turn),
                {"role": "user", "content": self.turn.question},
            ],
        )

        def on_event(ev: StreamEvent) -> None:
            if isinstance(ev, (ReasoningDelta, TextDelta)) and ev.text:
                self._thinking(ev.text)

        try:
            await self.ctx.stream_model(request, "thinking", on_event)
        except RunAborted:
            raise
        except Exception as err:  # noqa: BLE001 - thinking is best effort
            log.warning("run %s: thinking phase failed: %s", self.ctx.run.id, err)
            self.ctx.emit("thinking", {"error": "Thinking was unavailable; answering directly."})

    # ---- phase 2 -----------------------------------------------------------------------
    async def presearch(self) -> str:
        """Search the question before the model is asked (shown as a search tool call); the
        passages as they go into the instructions."""
        call_id = "presearch"
        args = {"query": self.turn.question}
        self.ctx.emit(
            "tool",
            {"id": call_id, "name": "search_knowledge_base", "arguments": args, "status": "running", "auto": True},
        )
        try:
            result = await self._search(self.turn.question, k=OFFLINE_TOP_K if self.offline else TOP_K)
            status = "done"
        except tools.ToolError:
            result, status = prompts.SEARCH_DOWN, "error"
        self.ctx.emit(
            "tool",
            {"id": call_id, "name": "search_knowledge_base", "status": status, "summary": result[:200], "auto": True},
        )
        if status == "error":
            return prompts.SEARCH_DOWN
        if not self.draft.citations:
            return prompts.NO_PASSAGES
        cap = TOOL_RESULT_CHARS * OFFLINE_TOP_K // TOP_K if self.offline else TOOL_RESULT_CHARS
        text = prompts.PASSAGES.format(passages=result[:cap])
        if not self.offline:  # the offline provider ranks them itself
            ranked = await asyncio.to_thread(ranked_sentences, self.turn.question, self.draft.citations)
            text += "\n\n" + prompts.RANKED.format(sentences=ranked) if ranked else ""
        return text

    def _messages(self, passages: str) -> list[dict[str, Any]]:
        system = prompts.SYSTEM
        if self.turn.scope:
            system += "\n\n" + prompts.PINNED_SYSTEM.format(scope=self.turn.scope_label)
        system += "\n\n" + passages
        return [
            {"role": "system", "content": system},
            *_history_messages(self.turn),
            {"role": "user", "content": self.turn.question},
        ]

    def _library_empty(self) -> bool:
        with self.ctx.sessions() as db:
            return documents.indexed_count(db, self.ctx.run.owner_id) == 0

    async def answer(self) -> None:
        # Offline, an empty library leaves nothing to quote: say what to do instead. A model still
        # answers (its tools, arithmetic and the date, need no library) and is told the library is empty.
        if self.offline and await asyncio.to_thread(self._library_empty):
            self._text(documents.EMPTY_LIBRARY, by="system")
            return
        messages = self._messages(await self.presearch())
        self._send_metadata()  # the passages found are the sources so far
        for step in range(MAX_STEPS):
            last = step == MAX_STEPS - 1
            request = ChatRequest(
                model=self.ctx.run.model,
                messages=messages,
                tools=tools.TOOLS,
                tool_choice="none" if last else "auto",
                max_tokens=MAX_TOKENS,
            )
            calls: list[ToolCall] = []
            round_text: list[str] = []

            def on_event(ev: StreamEvent) -> None:
                if isinstance(ev, TextDelta) and ev.text:
                    round_text.append(ev.text)
                    self._text(ev.text)
                elif isinstance(ev, ReasoningDelta) and ev.text:
                    self._thinking(ev.text)
                elif isinstance(ev, ToolCall):
                    calls.append(ev)

            await self.ctx.stream_model(request, "agent", on_event)
            if not calls or last:
                break
            messages.append(assistant_message("".join(round_text), calls))
            for call in calls:
                result = await self.run_tool(call)
                messages.append(tool_message(call.id, result[:TOOL_RESULT_CHARS]))

    def ground(self) -> None:
        """Judge the finished answer's grounding; add the library's sentences or the
        unsupported line when it cites nothing; send the `grounding` event."""
        g = grounding.ground("".join(self.draft.text), self.turn.question, self.draft.citations, self.draft.other_tools)
        if g.addition:
            self._text(("\n\n" if self.draft.text else "") + g.addition, by="grounding")
        self.draft.grounding = g.state
        # the sources list tells cited from only retrieved, and opens each at its cited sentence
        self.draft.citations = grounding.mark_cited("".join(self.draft.text), self.draft.citations)
        self._send_metadata()
        self.ctx.emit("grounding", g.to_json())

    # ---- tools -------------------------------------------------------------------------
    async def run_tool(self, call: ToolCall) -> str:
        self.ctx.check_abort()
        try:
            args = call.arguments()
            if not isinstance(args, dict):
                raise tools.ToolError("Arguments must be a JSON object.")
        except ValueError:
            args, result = {}, "Error: the arguments are not valid JSON."
        else:
            self.ctx.emit("tool", {"id": call.id, "name": call.name, "arguments": args, "status": "running"})
            try:
                result = await self._dispatch(call.name, args)
                status = "done"
            except (tools.ToolError, CalculatorError) as err:
                result, status = f"Error: {err}", "error"
            except RunAborted:
                raise
            except ProviderError as err:
                result, status = f"Error: the model call failed ({err.code}).", "error"
            self.ctx.emit("tool", {"id": call.id, "name": call.name, "status": status, "summary": result[:200]})
        self.ctx.check_abort()
        return result

    async def _dispatch(self, name: str, args: dict[str, Any]) -> str:
        if name == "search_knowledge_base":
            return await self._search(str(args.get("query") or self.turn.question))
        if name == "list_documents":
            return await asyncio.to_thread(self._db, tools.list_documents)
        if name == "analyze_document":
            return await self._analyze(args.get("document"))
        if name == "compare_documents":
            return await self._compare(args.get("a"), args.get("b"), str(args.get("question") or ""))
        if name in ("calculator", "current_time"):
            self.draft.other_tools = True
        if name == "calculator":
            return json.dumps(
                {"expression": args.get("expression"), "result": calculate(str(args.get("expression") or ""))}
            )
        if name == "current_time":
            return tools.current_time()
        raise tools.ToolError(f"There is no tool {name!r}.")

    def _db(self, fn: Any, *args: Any) -> Any:
        with self.ctx.sessions() as db:
            return fn(db, self.ctx.run.owner_id, self.turn.scope, *args)

    async def _search(self, query: str, scope: dict[str, Any] | None = None, k: int = TOP_K) -> str:
        try:
            hits = await asyncio.to_thread(
                search_library,
                self.ctx.sessions,
                self.ctx.run.owner_id,
                query,
                scope if scope is not None else self.turn.scope,
                k,
            )
        except Exception as err:  # noqa: BLE001 - an index outage must not lose the answer
            log.warning("run %s: library search failed: %s", self.ctx.run.id, err)
            raise tools.ToolError("The library search is unavailable right now.") from None
        strong = [h for h in hits if not h.get("weak")]
        if hits and not strong:
            # Quoting the closest-but-unrelated passages would dress noise up as evidence.
            return NO_STRONG_MATCHES
        numbered = self.draft.cite(strong)
        if numbered and self.draft.metadata_sent:
            self._send_metadata()  # sources grew after text started: send the full list again
        if numbered and self.offline:  # the offline answer quotes them to a reader: no footnote marks
            numbered = await asyncio.to_thread(without_marks, self.ctx.sessions, numbered)
        return format_passages(numbered) if numbered else "No passages match this query."

    async def _model_text(self, request: ChatRequest, step: str) -> str:
        parts: list[str] = []

        def on_event(ev: StreamEvent) -> None:
            if isinstance(ev, TextDelta):
                parts.append(ev.text)

        await self.ctx.stream_model(request, step, on_event)
        return "".join(parts)

    async def _analyze(self, ref: Any) -> str:
        def load(db: Any, owner_id: str, scope: Any) -> tuple[Document, list[dict[str, Any]]]:
            doc = tools.resolve_document(db, owner_id, scope, ref)
            return doc, tools.document_passages(db, doc)

        doc, passages = await asyncio.to_thread(self._db, load)
        data = await ask_json(
            self.ctx,
            "analyze_document",
            prompts.ANALYZE,
            format_passages(passages) + "\n\nAnalyze this document.",
            tools.Analysis,
            max_tokens=800,
            model=self.model("tools"),
        )
        analysis = tools.parse_analysis(data) or extractive_analysis(passages, json.dumps(data) if data else "")
        return json.dumps(
            {"document": {"id": doc.id, "title": doc.title or doc.filename}, **analysis}, ensure_ascii=False
        )

    async def _compare(self, a: Any, b: Any, question: str) -> str:
        def load(db: Any, owner_id: str, scope: Any) -> tuple[Document, Document]:
            return (tools.resolve_document(db, owner_id, scope, a), tools.resolve_document(db, owner_id, scope, b))

        doc_a, doc_b = await asyncio.to_thread(self._db, load)
        if doc_a.id == doc_b.id:
            raise tools.ToolError("Name two different documents.")
        query = question or self.turn.question
        hits: list[dict[str, Any]] = []
        for doc in (doc_a, doc_b):
            found = await asyncio.to_thread(
                search_library,
                self.ctx.sessions,
                self.ctx.run.owner_id,
                query,
                {"document_ids": [doc.id]},
                tools.COMPARE_PASSAGES,
            )
            hits += found
        numbered = self.draft.cite(hits)
        if numbered and self.draft.metadata_sent:
            self._send_metadata()
        request = ChatRequest(
            model=self.model("tools"),
            max_tokens=MAX_TOKENS,
            messages=[
                {"role": "system", "content": prompts.COMPARE},
                {"role": "user", "content": f"{format_passages(numbered)}\n\nQuestion: {query}"},
            ],
        )
        return await self._model_text(request, "compare_documents")

    # ---- persistence -------------------------------------------------------------------
    def save(self, status: str) -> None:
        if not self.turn.answer_id:
            return
        with self.ctx.sessions() as db:
            if chat.save_answer(
                db,
                self.turn.answer_id,
                "".join(self.draft.text),
                "".join(self.draft.thinking),
                self.draft.citations,
                status,
                self.draft.grounding,
            ):
                db.commit()


async def ask(ctx: RunContext) -> None:
    """Answer the question of the run's conversation turn, and store the answer whatever happens."""
    turn = await asyncio.to_thread(load_turn, ctx.sessions, ctx.run.input)
    agent = AskAgent(ctx, turn)
    status = MessageStatus.FAILED
    try:
        await agent.think()
        ctx.check_abort()
        await agent.answer()
        agent.ground()
        ctx.emit("memory", turn.memory.to_json())
        status = MessageStatus.COMPLETE
    except RunAborted:
        status = MessageStatus.CANCELLED
        raise
    finally:
        try:
            await asyncio.shield(asyncio.to_thread(agent.save, status))
        except Exception:
            log.exception("run %s: could not store the answer", ctx.run.id)


# its reserve is computed from the question by `chat.start` (prompt_budget 0)
KIND = RunKind("ask", "Ask", ask, needs_prompt=True, role="writer")
