"""Chat page state: conversations, the persisted messages, and the live answer.

The live answer is rebuilt from the run's Redis Stream by a background consumer that
starts from a cursor on every page load, so a reload (or coming back later) shows what
was written so far and continues live. Closing the tab never changes the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
import urllib.parse
from typing import Any

import reflex as rx

from bayes_app.usecases import conversations as app_conversations
from bayes_app.usecases import runs as app_runs
from bayes_app.usecases.views import RunStatus, display_credits, foreign_label, format_credits
from state.auth import AuthState
from state.offloop import off_loop, run_off_loop

STATUS_LABEL = {"complete": "", "running": "Answering…", "cancelled": "Cancelled", "failed": "Failed"}


@dataclasses.dataclass
class Source:
    n: str = ""
    title: str = ""
    page: str = ""
    quote: str = ""
    href: str = ""
    language: str = ""  # "German" for a passage not in English
    highlighted: bool = False  # the user highlighted this passage in Zotero


@dataclasses.dataclass
class Message:
    id: str = ""
    role: str = ""
    content: str = ""
    thinking: str = ""
    sources: list[Source] = dataclasses.field(default_factory=list)  # cited (all, before citations are known)
    retrieved: list[Source] = dataclasses.field(default_factory=list)  # found by search, not cited
    status: str = ""
    status_label: str = ""
    cost: str = ""  # rounded for reading; `cost_exact` in its tooltip
    cost_exact: str = ""
    run_id: str = ""
    memory: str = ""
    grounding_label: str = ""  # "No sources cited…" when the answer cites nothing from the library


def _source(c: dict[str, Any]) -> Source:
    # a cited source shows, and opens the viewer at, the sentence the answer cites; else its passage
    quote = " ".join(str(c.get("sentence") or c.get("text", "")).split())
    return Source(
        n=str(c.get("n", "")),
        title=str(c.get("title") or "Untitled"),
        page=str(c.get("page", "")),
        quote=quote[:280] + ("…" if len(quote) > 280 else ""),
        href=f"/documents/{c.get('document_id')}?page={c.get('page')}&quote=" + urllib.parse.quote(quote[:300]),
        language=foreign_label(c.get("language")),
        highlighted=bool(c.get("highlighted")),
    )


def _split_sources(citations: list[dict[str, Any]]) -> tuple[list[Source], list[Source]]:
    """(cited, only retrieved) once the answer's citations are known (`cited` flags); before
    that (or for answers stored without flags) every source is listed first."""
    if not any("cited" in c for c in citations):
        return [_source(c) for c in citations], []
    return ([_source(c) for c in citations if c.get("cited")], [_source(c) for c in citations if not c.get("cited")])


def _message(m: dict[str, Any]) -> Message:
    charged = m.get("charged_credits")
    status = m["status"]
    reason = m.get("outcome_reason") or ""
    cited, retrieved = _split_sources(m.get("citations") or [])
    return Message(
        id=m["id"],
        role=m["role"],
        content=m["content"],
        thinking=m["thinking"],
        sources=cited,
        retrieved=retrieved,
        status=status,
        status_label=STATUS_LABEL.get(status, status) + (f" ({reason})" if status == "failed" and reason else ""),
        cost=f"{display_credits(charged)} credits" if charged is not None else "",
        cost_exact=f"{format_credits(charged)} credits" if charged is not None else "",
        run_id=m.get("run_id") or "",
        grounding_label=m.get("grounding_label") or "",
    )


# Scroll to the answer being written, then keep its end in view while it grows — until the
# user scrolls up to read (wheel up, a touch drag, Page Up / arrow up / Home): then leave the
# page alone for the rest of that answer.
SHOW_ANSWER_JS = (
    "(() => { window.__bayesFollow = true;"
    " if (!window.__bayesFollowHooked) { window.__bayesFollowHooked = true;"
    "  const off = () => { window.__bayesFollow = false; };"
    "  window.addEventListener('wheel', e => { if (e.deltaY < 0) off(); }, {passive: true});"
    "  window.addEventListener('touchmove', off, {passive: true});"
    "  window.addEventListener('keydown', e => { if (['PageUp', 'ArrowUp', 'Home'].includes(e.key)) off(); }); }"
    " document.getElementById('chat-live')?.scrollIntoView({block: 'end'}); })()"
)
FOLLOW_EVERY_S = 0.25
# A finished answer: the message's end (its sources and cost) in view — unless that leaves the
# answer itself all but off the top (a phone, a short answer over several source cards), then
# the answer's end at the bottom of the screen.
FOLLOW_ANSWER_JS = (
    "(() => { if (!window.__bayesFollow) return;"
    " const live = document.getElementById('chat-live');"
    " if (live) { live.scrollIntoView({block: 'end'}); return; }"
    " const msg = [...document.querySelectorAll('.chat-message-assistant')].pop();"
    " if (!msg) return;"
    " msg.scrollIntoView({block: 'end'});"
    " const answer = msg.querySelector('.chat-answer');"
    " if (answer && answer.getBoundingClientRect().bottom < 0.25 * window.innerHeight)"
    "  answer.scrollIntoView({block: 'end'}); })()"
)


class ChatState(AuthState):
    conversations: list[dict[str, str]] = []
    conversation_id: str = ""
    title: str = ""
    messages: list[Message] = []
    draft: str = ""
    edit_id: str = ""
    edit_text: str = ""
    edit_drops: int = 0  # later exchanges the edit would put aside (> 0: the warning is open)
    other_version: int = 0  # questions an earlier edit put aside (the "show them" bar)
    error: str = ""
    offline: bool = False
    # pinning
    documents: list[dict[str, str]] = []
    collections: list[dict[str, str]] = []
    pinned: list[dict[str, str]] = []  # {"kind": "document"|"collection", "id", "name"}
    # the live answer
    live_run_id: str = ""
    live_thinking: str = ""
    live_text: str = ""
    live_sources: list[Source] = []
    live_retrieved: list[Source] = []
    live_tools: list[str] = []
    live_memory: str = ""
    live_grounding: str = ""
    live_status: str = ""
    cursor: str = ""
    _gen: int = 0

    @rx.var
    def running(self) -> bool:
        return self.live_run_id != ""

    # ---- loading -----------------------------------------------------------------------
    def _reload(self) -> str | None:
        """Read conversations + messages; returns the run id still answering, if any."""
        page = app_conversations.page(self.user_id, self.conversation_id or None)
        self.conversations = [
            {"id": c.id, "title": c.title, "updated": c.updated_at.strftime("%Y-%m-%d %H:%M")}
            for c in page.conversations
        ]
        self.documents = [{"id": d.id, "name": d.title or d.filename} for d in page.documents]
        self.collections = [{"id": c.id, "name": c.name} for c in page.collections]
        conv = page.conversation
        self.other_version = page.other_version
        if conv is None:
            self.conversation_id, self.title, self.messages = "", "", []
            return None
        self.title = conv.title
        names = {d["id"]: d["name"] for d in self.documents} | {c["id"]: c["name"] for c in self.collections}
        self.pinned = [
            {"kind": "document", "id": i, "name": names.get(i, i)} for i in conv.scope.get("document_ids", [])
        ] + [{"kind": "collection", "id": i, "name": names.get(i, i)} for i in conv.scope.get("collection_ids", [])]
        views, active = page.messages, page.active_run_ids
        self.messages = [_message(m) for m in views]
        running = [m["run_id"] for m in views if m["status"] == "running" and m.get("run_id")]
        return (active or running or [None])[0]

    def _reset_live(self) -> None:
        self.live_run_id = self.live_thinking = self.live_text = self.live_memory = self.live_status = ""
        self.live_grounding = ""
        self.live_sources, self.live_retrieved, self.live_tools, self.cursor = [], [], [], ""

    @rx.event
    @off_loop
    def load(self):
        """on_load of /chat and /chat/<id>: messages, then follow a run still answering."""
        if not self._load_user():
            return None
        self.offline = app_runs.offline()
        self.error, self.edit_id = "", ""
        parts = [p for p in self.router.url.path.split("/") if p]
        self.conversation_id = parts[1] if len(parts) >= 2 and parts[0] == "chat" else ""
        if not self.conversation_id:
            self.pinned = []
        self._reset_live()
        run_id = self._reload()
        self._gen += 1
        if run_id:
            self.live_run_id = run_id
            return ChatState.consume(self._gen)  # type: ignore[misc]
        return None

    # ---- asking ------------------------------------------------------------------------
    @rx.event
    def set_draft(self, value: str):
        self.draft = value

    @rx.event
    def set_edit_text(self, value: str):
        self.edit_text = value

    def _scope(self) -> dict[str, list[str]] | None:
        if not self.pinned:
            return {} if self.conversation_id else None
        return {
            "document_ids": [p["id"] for p in self.pinned if p["kind"] == "document"],
            "collection_ids": [p["id"] for p in self.pinned if p["kind"] == "collection"],
        }

    def _ask(self, prompt: str, edit_message_id: str | None = None):
        if not self._load_user():
            return rx.redirect("/login")
        if self.running:
            self.error = "Wait for the answer or stop it first."
            return None
        try:
            out = app_runs.start_ask(
                self.user_id, "ask", prompt, self._scope(), self.conversation_id or None, edit_message_id
            )
        except app_runs.RunRequestError as err:
            self.error = err.message
            return None
        except app_runs.QueueUnavailable:
            self.error = "The job queue is unavailable; try again."
            return None
        self.error, self.draft, self.edit_id = "", "", ""
        new_conversation = out.conversation_id != self.conversation_id
        self.conversation_id = out.conversation_id or ""
        self._reset_live()
        self._reload()
        self.live_run_id = out.id
        self._gen += 1
        if new_conversation:  # the URL names the conversation, so a reload comes back to it
            return [
                rx.call_script(f"window.history.replaceState(null, '', '/chat/{self.conversation_id}')"),
                ChatState.consume(self._gen),  # type: ignore[misc]
            ]
        return ChatState.consume(self._gen)  # type: ignore[misc]

    @rx.event
    @off_loop
    def send(self):
        prompt = self.draft.strip()
        if not prompt:
            return None
        return self._ask(prompt)

    @rx.event
    def send_on_enter(self, key: str):
        if key == "Enter":
            return ChatState.send
        return None

    @rx.event
    def start_edit(self, message_id: str, text: str):
        self.edit_id, self.edit_text = message_id, text

    @rx.event
    def cancel_edit(self):
        self.edit_id = self.edit_text = ""
        self.edit_drops = 0

    def _later_exchanges(self, message_id: str) -> int:
        """How many exchanges come after the question `message_id` (the edit puts them aside)."""
        ids = [m.id for m in self.messages]
        if message_id not in ids:
            return 0
        return sum(1 for m in self.messages[ids.index(message_id) + 1 :] if m.role == "user")

    @rx.event
    @off_loop
    def save_edit(self):
        """Ask the edited question again; when later exchanges would go, warn first."""
        text = self.edit_text.strip()
        if not text or not self.edit_id:
            return None
        drops = self._later_exchanges(self.edit_id)
        if drops:
            self.edit_drops = drops
            return None
        return self._ask(text, self.edit_id)

    @rx.event
    @off_loop
    def switch_version(self):
        """Bring back the exchanges the last edit put aside (the ones since go aside instead)."""
        if not self.conversation_id:
            return None
        _, refused = self._as_user(app_conversations.switch_version, self.conversation_id, error_var="error")
        if refused is None:
            self._reload()
        return refused

    @rx.event
    @off_loop
    def confirm_edit(self):
        text = self.edit_text.strip()
        self.edit_drops = 0
        if text and self.edit_id:
            return self._ask(text, self.edit_id)
        return None

    @rx.event
    def keep_editing(self):
        self.edit_drops = 0

    @rx.event
    @off_loop
    def stop(self):
        if not self.live_run_id or not self._load_user():
            return
        with contextlib.suppress(app_runs.RunNotFound):
            app_runs.stop_owned(self.user_id, self.live_run_id, finished_ok=True)
        self.live_status = "Stopping…"

    @rx.event
    @off_loop
    def new_chat(self):
        self._gen += 1
        self.conversation_id, self.title, self.messages, self.pinned, self.error = "", "", [], [], ""
        self._reset_live()
        return rx.redirect("/chat")

    @rx.event
    @off_loop
    def delete_conversation(self):
        if self.conversation_id and self._load_user():
            app_conversations.delete_conversation(self.user_id, self.conversation_id)
        return ChatState.new_chat

    # ---- pinning -----------------------------------------------------------------------
    @rx.event
    @off_loop
    def pin(self, value: str):
        kind, _, item_id = value.partition(":")
        pool = self.documents if kind == "document" else self.collections
        item = next((x for x in pool if x["id"] == item_id), None)
        if item is None or any(p["id"] == item_id for p in self.pinned):
            return
        self.pinned = [*self.pinned, {"kind": kind, "id": item_id, "name": item["name"]}]
        self._save_scope()

    @rx.event
    @off_loop
    def unpin(self, item_id: str):
        self.pinned = [p for p in self.pinned if p["id"] != item_id]
        self._save_scope()

    def _save_scope(self) -> None:
        if not self.conversation_id or not self._load_user():
            return  # a new chat: the scope goes with its first question
        app_conversations.set_scope(self.user_id, self.conversation_id, self._scope() or {})

    # ---- the live answer ---------------------------------------------------------------
    def _apply(self, ev: app_runs.RunEvent) -> bool:
        """Apply one stream event; True at the end of the run."""
        data = ev.data if isinstance(ev.data, dict) else {}
        if ev.type == "thinking":
            self.live_thinking += data.get("delta", "")
        elif ev.type == "metadata":
            self.live_sources, self.live_retrieved = _split_sources(data.get("citations", []))
        elif ev.type == "text":
            self.live_text += data.get("delta", "")
        elif ev.type == "tool":
            if data.get("status") == "running":
                self.live_tools = [*self.live_tools, str(data.get("name", ""))]
        elif ev.type == "memory":
            self.live_memory = str(data.get("line", ""))
        elif ev.type == "grounding":
            self.live_grounding = str(data.get("label", ""))
        elif ev.type == "status" and data.get("status") == RunStatus.STOPPED:
            self.live_status = "Settling…"
        elif ev.type == "done":
            return True
        return False

    def _apply_batch(self, batch: list[app_runs.RunEvent]) -> bool:
        """Apply a batch of the run's events (the cursor moves past them); True once it is done."""
        finished = False
        for ev in batch:
            self.cursor = ev.id
            finished = self._apply(ev) or finished
        return finished

    @rx.event(background=True)
    async def consume(self, gen: int):
        """Follow the live run's stream from the cursor until `done` (or superseded); the page
        scrolls to the new answer and follows it while it streams, unless the user scrolled up."""
        follower = app_runs.follower()
        first, followed = True, 0.0
        try:
            while True:
                async with self:
                    if self._gen != gen or not self.live_run_id:
                        return
                    if self.live_run_id != follower.run_id:
                        follower.follow(self.live_run_id, self.cursor or None)
                batch = await follower.next()
                if not batch:
                    continue
                async with self:
                    if self._gen != gen:
                        return
                    finished = self._apply_batch(batch)
                    if finished:
                        memory = self.live_memory
                        self._reset_live()
                        await run_off_loop(self._reload)
                        if memory and self.messages:
                            self.messages[-1].memory = memory
                if finished:
                    yield rx.call_script(FOLLOW_ANSWER_JS)
                    return
                now = time.monotonic()
                if first or now - followed >= FOLLOW_EVERY_S:  # not one script per streamed batch
                    yield rx.call_script(SHOW_ANSWER_JS if first else FOLLOW_ANSWER_JS)
                    first, followed = False, now
        finally:
            await follower.aclose()
