"""Draft-audit routes: upload a draft to check (multipart, bounded), follow, list, cancel,
delete, and export the report (Markdown; the draft as DOCX with Word comments)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field, StrictStr
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import Response

from bayes_app.api.deps import MULTIPART, CookieUser, CurrentUser, StrictJSONRoute, media, read_by_hand
from bayes_app.api.errors import ApiError
from bayes_app.api.schemas import Binary
from bayes_app.usecases import audits as app_audits
from bayes_app.usecases.schemas.audits import AuditList, AuditOut, AuditStarted

router = APIRouter(route_class=StrictJSONRoute)
A = "/audits/{audit_id}"
SLACK = 64 * 1024  # multipart boundaries and part headers
LIMIT = 2 * app_audits.MAX_DRAFT_BYTES + SLACK  # the draft and its .bib


class DraftUpload(BaseModel):
    """The multipart body of `POST /audits`."""

    file: Binary = Field(description="The draft: .md, .txt, .tex or .docx (at most 5 MB).")
    bib: Binary | None = Field(None, description="The LaTeX draft's .bib file.")
    collection_id: StrictStr | None = Field(None, description="Check against this collection only.")


@dataclass(frozen=True)
class Draft:
    filename: str
    data: bytes
    bib: bytes | None
    collection_id: str | None


async def read_draft(request: Request) -> Draft:
    """The multipart draft, read within LIMIT bytes (413 past it, also without Content-Length)."""
    form = await _bounded_form(request)
    upload, bib = _draft_files(form)
    collection = form.get("collection_id")
    return Draft(
        filename=upload.filename or "draft.txt",
        data=await upload.read(),
        bib=await bib.read() if bib is not None else None,
        collection_id=collection if isinstance(collection, str) and collection else None,
    )


async def _bounded_form(request: Request) -> FormData:
    """The multipart form, its body read within LIMIT bytes (413 past it)."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise ApiError(415, "unsupported_media_type", "Send the draft as multipart/form-data, field 'file'.")
    too_large = ApiError(413, "too_large", "The upload is larger than 5 MB: upload the draft's text without images.")
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > LIMIT:
        raise too_large
    received = 0

    async def receive():  # type: ignore[no-untyped-def]
        nonlocal received
        message = await request.receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > LIMIT:
                raise too_large
        return message

    try:
        return await Request(request.scope, receive).form(max_files=2, max_fields=5)
    except ApiError:
        raise
    except Exception:  # noqa: BLE001 - malformed multipart bodies
        raise ApiError(400, "bad_request", "Malformed multipart body: send the draft as field 'file'.") from None


def _draft_files(form: FormData) -> tuple[UploadFile, UploadFile | None]:
    """The draft and its optional .bib (400 / 415 when they are not files of those kinds)."""
    upload, bib = form.get("file"), form.get("bib")
    if not isinstance(upload, UploadFile):
        raise ApiError(400, "missing_fields", "Missing file field 'file': attach the draft (.md, .txt, .tex or .docx).")
    if bib is not None and not isinstance(bib, UploadFile):
        raise ApiError(400, "invalid", "Field 'bib' must be a .bib file.")
    if bib is not None and not (bib.filename or "").lower().endswith(".bib"):
        raise ApiError(
            415, "unsupported_type", "Field 'bib' must be a .bib file (BibTeX), as your reference manager exports it."
        )
    return upload, bib


@router.post(
    "/audits",
    status_code=202,
    response_model=AuditStarted,
    openapi_extra=read_by_hand(DraftUpload, MULTIPART),
    summary="Check a draft's citations against the library (multipart `file`, optional `bib`, `collection_id`)",
)
def start_audit(user: CurrentUser, draft: Annotated[Draft, Depends(read_draft)]) -> AuditStarted:
    return app_audits.start(user.id, draft.filename, draft.data, draft.bib, draft.collection_id)


@router.get("/audits", response_model=AuditList, summary="Your draft checks, newest first")
def list_audits(user: CurrentUser) -> AuditList:
    return app_audits.list_audits(user.id)


@router.get(A, response_model=AuditOut, summary="A draft check: status, progress, sentences, verdicts, suggestions")
def get_audit(user: CurrentUser, audit_id: str) -> AuditOut:
    return app_audits.get(user.id, audit_id)


@router.post(A + "/cancel", response_model=AuditStarted, summary="Stop a draft check (its findings so far are kept)")
def cancel_audit(user: CurrentUser, audit_id: str) -> AuditStarted:
    return app_audits.cancel(user.id, audit_id)


@router.delete(A, status_code=204, response_class=Response, summary="Delete a draft check")
def delete_audit(user: CurrentUser, audit_id: str) -> Response:
    app_audits.delete(user.id, audit_id)
    return Response(status_code=204)


@router.get(
    A + "/report.md",
    response_class=Response,
    responses={200: media("text/markdown")},
    summary="The report: each flagged sentence, its verdict, the evidence and the suggestions",
)
def report_md(user: CookieUser, audit_id: str) -> Response:
    text = app_audits.report_markdown(user.id, audit_id)
    return Response(text, media_type="text/markdown; charset=utf-8")


DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@router.get(
    A + "/report.docx",
    response_class=Response,
    responses={200: media(DOCX)},
    summary="The draft as DOCX with a Word comment on each flagged sentence and suggestion",
)
def report_docx(user: CookieUser, audit_id: str) -> Response:
    name, data = app_audits.report_docx(user.id, audit_id)
    return Response(data, media_type=DOCX, headers={"Content-Disposition": f'attachment; filename="{name}"'})
