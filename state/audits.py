"""The Check-a-draft page's state: upload a draft, follow the check live, read its findings."""

from __future__ import annotations

import asyncio
from urllib.parse import quote as urlquote

import reflex as rx

from bayes_app.usecases import audits as app_audits
from bayes_app.usecases import library as app_lib
from bayes_app.usecases.schemas.audits import AuditOut, AuditSentence
from state.auth import AuthState
from state.offloop import run_off_loop

POLL_S = 0.7
VERDICT_LABEL = {
    "supported": "supported",
    "partial": "partly supported",
    "unsupported": "not supported",
    "contradicted": "contradicted",
    "not_in_library": "not in library",
}
VERDICT_COLOR = {
    "supported": "green",
    "partial": "amber",
    "unsupported": "red",
    "contradicted": "crimson",
    "not_in_library": "gray",
}


def _href(document_id: str, page: int, quote: str) -> str:
    return f"/documents/{document_id}?page={page}&quote={urlquote(quote[:300])}"


def _sentence_row(s: AuditSentence) -> dict:
    chips = []
    for k, c in enumerate(s.citations):
        ev = c.evidence
        chips.append(
            {
                "key": f"{s.index}-{k}",
                "marker": c.marker,
                "verdict": c.verdict,
                "label": VERDICT_LABEL.get(c.verdict, c.verdict),
                "color": VERDICT_COLOR.get(c.verdict, "gray"),
                "score": f"{c.score:.2f}" if c.score is not None else "",
                "reference": c.reference,
                "title": c.title,
                "reason": c.reason,
                "quote": ev.quote if ev else "",
                "page": str(ev.page) if ev else "",
                "href": _href(ev.document_id, ev.page, ev.quote) if ev else "",
            }
        )
    suggestions = [
        {
            "title": g.title or "a library paper",
            "page": str(g.page),
            "quote": g.quote,
            "score": f"{g.score:.2f}",
            "href": _href(g.document_id, g.page, g.quote),
        }
        for g in s.suggestions
    ]
    return {
        "index": str(s.index + 1),
        "text": s.text,
        "flagged": "1" if s.flagged else "",
        "uncited": "1" if (s.finding and not s.citations) else "",
        "chips": chips,
        "suggestions": suggestions,
    }


class AuditState(AuthState):
    """One draft check at a time on the page, and the user's earlier checks."""

    history: list[dict[str, str]] = []
    collections: list[dict[str, str]] = []
    collection_id: str = ""
    audit_id: str = ""
    status: str = ""
    filename: str = ""
    done: int = 0
    total: int = 0
    summary: dict[str, str] = {}
    sentences: list[dict] = []
    missing: list[dict[str, str]] = []
    only_problems: bool = False
    error: str = ""
    busy: bool = False
    _watch_gen: int = 0

    @rx.var
    def running(self) -> bool:
        return self.status in ("queued", "running")

    @rx.var
    def pct(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    @rx.var
    def shown(self) -> list[dict]:
        return [s for s in self.sentences if s["flagged"]] if self.only_problems else self.sentences

    @rx.var
    def report_base(self) -> str:
        return f"/api/v1/audits/{self.audit_id}/report" if self.audit_id else ""

    def _apply(self, a: AuditOut) -> None:
        self.audit_id, self.status, self.filename = a.id, a.status, a.filename
        self.done, self.total = a.progress.done, a.progress.total
        self.summary = {k: str(v) for k, v in a.summary.model_dump().items()}
        self.sentences = [_sentence_row(s) for s in a.sentences]
        self.missing = [{"reference": m.reference, "doi": m.doi or ""} for m in a.missing]

    @rx.event
    async def load(self):
        """The page opens: the user's collections and earlier checks (the newest shown)."""
        rows, refused = await run_off_loop(self._as_user, app_audits.list_audits)
        if refused:
            return refused
        assert rows is not None
        cols, _ = await run_off_loop(self._as_user, app_lib.collections)
        self.collections = [{"id": c.id, "name": c.name} for c in cols or []]
        self.history = [
            {"id": r.id, "filename": r.filename, "status": r.status, "created_at": r.created_at[:16].replace("T", " ")}
            for r in rows.audits
        ]
        if rows.audits and not self.audit_id:
            return AuditState.open_audit(rows.audits[0].id)  # type: ignore[operator]
        return None

    @rx.event
    def set_collection(self, value: str):
        self.collection_id = "" if value == "all" else value

    @rx.event
    def toggle_problems(self, value: bool):
        self.only_problems = bool(value)

    @rx.event
    async def open_audit(self, audit_id: str):
        a, refused = await run_off_loop(self._as_user, app_audits.get, audit_id, error_var="error")
        if refused:
            return refused
        assert a is not None
        self._apply(a)
        if self.running:
            self._watch_gen += 1
            return AuditState.watch(self._watch_gen)  # type: ignore[misc]
        return None

    @rx.event
    async def handle_upload(self, files: list[rx.UploadFile]):
        """The draft (and a LaTeX draft's .bib) dropped: start the check."""
        self.error = ""
        if not files:
            return None
        draft = next((f for f in files if not (f.filename or "").lower().endswith(".bib")), None)
        bib = next((f for f in files if (f.filename or "").lower().endswith(".bib")), None)
        if draft is None:
            self.error = "Add the draft itself (.md, .txt, .tex or .docx), not only its .bib."
            return None
        data = await draft.read()
        bib_data = await bib.read() if bib is not None else None
        self.busy = True
        started, refused = await run_off_loop(
            self._as_user,
            app_audits.start,
            draft.filename or "draft.txt",
            data,
            bib_data,
            self.collection_id or None,
            error_var="error",
        )
        self.busy = False
        if refused:
            return refused
        assert started is not None
        self.audit_id, self.status, self.only_problems = started.id, started.status, False
        self.sentences, self.summary, self.done, self.total = [], {}, 0, 0
        return [AuditState.open_audit(started.id), AuditState.load]  # type: ignore[operator]

    @rx.event
    def files_rejected(self, rejected: list[dict]):  # noqa: ARG002 - the upload's on_drop_rejected passes the files
        self.error = "Only .md, .txt, .tex (with its .bib) and .docx drafts can be checked."

    @rx.event(background=True)
    async def watch(self, gen: int):
        """Follow the running check: progress and the findings so far, until it ends."""
        while True:
            await asyncio.sleep(POLL_S)
            async with self:
                if gen != self._watch_gen or not self.audit_id:
                    return None
                a, refused = await run_off_loop(self._as_user, app_audits.get, self.audit_id, error_var="error")
                if refused or a is None:
                    return None
                self._apply(a)
                if not self.running:
                    return AuditState.load

    @rx.event
    async def cancel(self):
        out, refused = await run_off_loop(self._as_user, app_audits.cancel, self.audit_id, error_var="error")
        if refused:
            return refused
        assert out is not None
        self.status = out.status
        return AuditState.open_audit(self.audit_id)  # type: ignore[operator]

    @rx.event
    async def delete(self, audit_id: str):
        _, refused = await run_off_loop(self._as_user, app_audits.delete, audit_id)
        if refused:
            return refused
        if audit_id == self.audit_id:
            self.audit_id, self.status, self.sentences, self.summary, self.missing = "", "", [], {}, []
            self._watch_gen += 1
        return AuditState.load
