"""Library page state: documents with live ingestion progress, uploads, collections, edits."""

from __future__ import annotations

import asyncio

import reflex as rx

from bayes_app.errors import DomainError, NotFound
from bayes_app.usecases import library as app_lib
from bayes_app.usecases.schemas.library import Reference
from bayes_app.usecases.views import DocStatus
from state.auth import AuthState
from state.offloop import off_loop, run_off_loop

POLL_S = 0.7


def _place(n: int) -> str:
    """ "next in line" / "3rd in line"."""
    if n == 1:
        return "next in line"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix} in line"


def _row(v: app_lib.DocumentOut, names: dict[str, str]) -> dict:
    total = v.progress.total
    pct = int(100 * v.progress.done / total) if total else 0
    stage = {
        DocStatus.QUEUED: f"Queued · {_place(v.queue_position)}" if v.queue_position else "Queued",
        DocStatus.PARSING: "Reading pages",
        DocStatus.RECOGNISING: f"Recognising text, page {min(v.progress.done + 1, total)} of {total}",
        DocStatus.EMBEDDING: "Embedding passages",
        DocStatus.INDEXED: "Indexed",
        DocStatus.FAILED: "Failed",
    }.get(v.status, v.status)
    return {
        "id": v.id,
        "title": v.title,
        "filename": v.filename,
        "authors": ", ".join(v.authors[:4]) + (" et al." if len(v.authors) > 4 else ""),
        "authors_raw": ", ".join(v.authors),
        "year": str(v.year or ""),
        "doi": v.doi or "",
        "status": v.status,
        "stage": stage,
        "pct": pct,
        "progress": f"{v.progress.done} / {total}" if total else "",
        "pages": str(v.page_count or ""),
        "error": v.error.message if v.error else v.unread_pages,
        "ocr": f"OCR: {v.ocr_pages} of {v.page_count} pages" if v.ocr_pages else "",
        "ocr_lang": app_lib.ocr_language_name(v.ocr_language),
        "collections": ", ".join(names.get(c, "?") for c in v.collection_ids),
        "collection_ids": ",".join(v.collection_ids),
        "active": v.status in DocStatus.ACTIVE,
        "refs": str(v.reference_count or 0),
        "language": v.language,
        "language_name": v.language_name,
    }


def _reference_row(r: Reference) -> dict[str, str]:
    who = ", ".join(r.authors[:3]) + (" et al." if len(r.authors) > 3 else "")
    return {
        "who": who,
        "year": str(r.year or "n.d."),
        "title": r.title or r.raw[:300],
        "venue": r.venue or "",
        "doi": r.doi or "",
    }


class LibraryState(AuthState):
    documents: list[dict] = []
    refs_doc: str = ""  # the document whose reference list is expanded
    refs: list[dict[str, str]] = []
    collections: list[dict] = []
    filter_collection: str = ""
    upload_results: list[dict[str, str]] = []
    uploading: bool = False
    # the OCR language for the next uploads' scanned pages: "auto" (detected) or a Tesseract code
    ocr_choice: str = "auto"
    ocr_languages: list[list[str]] = []  # [code, name] of the installed ones
    # metadata dialog
    edit_id: str = ""
    edit_title: str = ""
    edit_authors: str = ""
    edit_year: str = ""
    edit_doi: str = ""
    edit_collection: str = ""
    edit_error: str = ""
    _watch_gen: int = 0

    @rx.var
    def has_documents(self) -> bool:
        return len(self.documents) > 0

    @rx.var
    def collection_options(self) -> list[str]:
        return [c["name"] for c in self.collections]

    def _refresh(self) -> bool:
        """Reload documents and collections; True while some document is still ingesting."""
        cols = app_lib.collections(self.user_id)
        try:
            views = app_lib.documents(self.user_id, self.filter_collection or None)
        except NotFound:
            self.filter_collection = ""
            views = app_lib.documents(self.user_id)
        names = {c.id: c.name for c in cols}
        self.collections = [{"id": c.id, "name": c.name, "count": str(c.document_count)} for c in cols]
        self.documents = [_row(v, names) for v in views]
        self._follow_uploads({v.id: v for v in views})
        return any(d["active"] for d in self.documents)

    def _follow_uploads(self, views: dict[str, app_lib.DocumentOut]) -> None:
        """The upload list says where each new file is now (queued → indexed / failed)."""
        if not any(r.get("document_id") for r in self.upload_results):
            return
        out = []
        for r in self.upload_results:
            v = views.get(r.get("document_id", ""))
            if v is not None and r["ok"] == "yes":
                if v.status == DocStatus.INDEXED:
                    r = {**r, "message": "indexed"}
                elif v.status == DocStatus.FAILED:
                    r = {
                        **r,
                        "ok": "no",
                        "message": f"indexing failed: {(v.error.message if v.error else '') or 'unknown error'}",
                    }
                elif v.status != DocStatus.QUEUED:
                    r = {**r, "message": "indexing…"}
            out.append(r)
        self.upload_results = out

    @rx.event
    @off_loop
    def load(self):
        self.upload_results = []
        if not self._load_user():
            return None
        self.ocr_languages = [[code, name] for code, name in app_lib.ocr_languages()]
        if self._refresh():
            return LibraryState.start_watch
        return None

    @rx.event
    def start_watch(self):
        self._watch_gen += 1
        return LibraryState.watch(self._watch_gen)  # type: ignore[misc]

    @rx.event(background=True)
    async def watch(self, gen: int):
        """Poll progress while documents are ingesting (stops when all are done)."""
        while True:
            await asyncio.sleep(POLL_S)
            async with self:
                if gen != self._watch_gen or not self.user_id:
                    return
                if not await run_off_loop(self._refresh):
                    return

    # ---- uploads ------------------------------------------------------------------
    @rx.event
    async def handle_upload(self, files: list[rx.UploadFile]):
        if not await run_off_loop(self._load_user):
            return rx.redirect("/login")
        if not files:  # a drop of only refused files: `files_rejected` reports them
            return None
        results = []
        target = [self.filter_collection] if self.filter_collection else None
        for f in files:
            name = f.filename or "upload.pdf"
            try:
                acc = await run_off_loop(app_lib.upload, self.user_id, f.file, name, target, self.ocr_choice)
            except DomainError as err:
                results.append({"file": name, "ok": "no", "message": err.message})
                continue
            if acc.created:
                results.append(
                    {"file": name, "ok": "yes", "message": "queued for indexing", "document_id": acc.document_id}
                )
            else:
                results.append({"file": name, "ok": "dup", "message": "already in your library (same file)"})
        self.upload_results = results
        await run_off_loop(self._refresh)
        return LibraryState.start_watch

    @rx.event
    def set_ocr_choice(self, value: str):
        self.ocr_choice = value if value in {c for c, _ in self.ocr_languages} else "auto"

    @rx.event
    def files_rejected(self, names: list[str]):
        """Files the drop zone refused (not PDFs), by name: say so in the upload list."""
        results = []
        for name in names if isinstance(names, list) else []:
            results.append(
                {
                    "file": str(name or "file").lstrip("./")[:200],
                    "ok": "no",
                    "message": "not added: only PDF files can go into the library",
                }
            )
        self.upload_results = results

    # ---- documents ----------------------------------------------------------------
    @rx.event
    @off_loop
    def toggle_references(self, document_id: str):
        """Expand (or collapse) a document's parsed reference list."""
        if self.refs_doc == document_id:
            self.refs_doc, self.refs = "", []
            return
        if not self._load_user():
            return
        try:
            rows = app_lib.references(self.user_id, document_id)
        except NotFound:
            self.refs_doc, self.refs = "", []
            return
        self.refs_doc, self.refs = document_id, [_reference_row(r) for r in rows]

    @rx.event
    @off_loop
    def delete_document(self, document_id: str):
        if not self._load_user():
            return rx.redirect("/login")
        try:
            app_lib.delete_document(self.user_id, document_id)
        except NotFound:
            return rx.toast.error("That document no longer exists.")
        self._refresh()
        return rx.toast.success("Document deleted.")

    @rx.event
    @off_loop
    def reindex(self, document_id: str):
        if not self._load_user():
            return rx.redirect("/login")
        try:
            app_lib.reindex(self.user_id, document_id)
        except NotFound:
            return rx.toast.error("That document no longer exists.")
        self._refresh()
        return LibraryState.start_watch

    @rx.event
    def open_edit(self, doc: dict):
        self.edit_id = doc["id"]
        self.edit_title, self.edit_authors = doc["title"], doc["authors_raw"]
        self.edit_year, self.edit_doi = doc["year"], doc["doi"]
        first = doc["collection_ids"].split(",")[0] if doc["collection_ids"] else ""
        self.edit_collection = next((c["name"] for c in self.collections if c["id"] == first), "")
        self.edit_error = ""

    @rx.event
    def close_edit(self):
        self.edit_id = ""

    @rx.event
    def set_edit_collection(self, name: str):
        self.edit_collection = name

    @rx.event
    @off_loop
    def save_edit(self, form: dict):
        if not self._load_user():
            return rx.redirect("/login")
        ids = [c["id"] for c in self.collections if c["name"] == self.edit_collection]
        changes = {
            "title": form.get("title", ""),
            "authors": form.get("authors", ""),
            "year": form.get("year", ""),
            "doi": form.get("doi", ""),
            "collection_ids": ids,
        }
        _, refused = self._as_user(app_lib.update_metadata, self.edit_id, changes, error_var="edit_error")
        if refused:
            return refused
        self.edit_id = ""
        self._refresh()
        return None

    # ---- collections --------------------------------------------------------------
    @rx.event
    @off_loop
    def set_filter(self, collection_id: str):
        self.filter_collection = collection_id
        self._refresh()

    @rx.event
    @off_loop
    def create_collection(self, form: dict):
        _, refused = self._as_user(app_lib.create_collection, form.get("name", ""))
        if refused:
            return refused
        self._refresh()
        return None

    @rx.event
    @off_loop
    def rename_collection(self, form: dict):
        _, refused = self._as_user(app_lib.rename_collection, form.get("id", ""), form.get("name", ""))
        if refused:
            return refused
        self._refresh()
        return None

    @rx.event
    @off_loop
    def delete_collection(self, collection_id: str):
        if not self._load_user():
            return rx.redirect("/login")
        try:
            app_lib.delete_collection(self.user_id, collection_id)
        except NotFound:
            return rx.toast.error("That collection no longer exists.")
        if self.filter_collection == collection_id:
            self.filter_collection = ""
        self._refresh()
        return None
