"""Checking a draft through the running app: a small library (a bundled paper and SciFact train
abstracts, uploaded and indexed by the worker, their metadata as a reference manager has it),
the same draft as Markdown, LaTeX + .bib and DOCX with Zotero fields, checked by the `audit`
run (durable, charged, with progress); verdicts rest on verbatim passages; the reports; another
user's 404s; bad files refused with nothing stored; cancel and delete."""

from __future__ import annotations

import io
import textwrap
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.integration.test_library import upload, wait_done
from tests.support import audit_drafts
from tests.support.tiny_pdf import text_pdf

PAPERS = Path(__file__).resolve().parents[1] / "fixtures" / "papers"


def _client(app_stack, app_db_url) -> httpx.Client:
    from bayes_app.accounts import service
    from bayes_app.credits import ledger
    from bayes_app.db import session_scope
    from bayes_app.models import MICRO

    email, pw = f"a{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex[:12]
    with session_scope(app_db_url) as db:
        user = service.register(db, email, pw)
        ledger.grant(db, user, 5 * MICRO, f"grant:{user.id}", "test")  # test users start at 0 credits
    c = httpx.Client(base_url=app_stack.url + "/api/v1", timeout=60)
    c.headers["Authorization"] = (
        "Bearer " + c.post("/auth/token", json={"email": email, "password": pw}).json()["token"]
    )
    return c


@pytest.fixture(scope="module")
def library(app_stack, app_db_url):
    papers, items = audit_drafts.scifact_set(
        counts={"correct": 3, "wrong": 2, "contradicted": 1, "uncited": 1, "missing": 2}, library_size=6
    )
    c = _client(app_stack, app_db_url)
    ids: dict[str, str] = {}
    docs = [upload(c, (PAPERS / "pasa.pdf").read_bytes(), "pasa.pdf").json()["id"]]
    for p in papers:
        lines = textwrap.wrap(p.abstract, 95)
        doc = upload(c, text_pdf(p.title[:90], lines), f"sf{p.id}.pdf").json()
        ids[p.id] = doc["id"]
        docs.append(doc["id"])
    for d in docs:
        assert wait_done(c, d)["status"] == "indexed"
    for p in papers:  # the metadata a reference manager has for it
        body = {"title": p.title, "authors": [a.split(",")[0] for a in p.authors], "year": p.year, "doi": p.doi}
        assert c.patch(f"/documents/{ids[p.id]}", json=body).status_code == 200
    yield c, papers, items, ids
    c.close()


def _draft(fmt: str, items) -> dict:
    if fmt == "md":
        return {"files": {"file": ("draft.md", audit_drafts.markdown(items).encode(), "text/markdown")}}
    if fmt == "tex":
        tex, bib = audit_drafts.latex(items)
        return {
            "files": {
                "file": ("draft.tex", tex.encode(), "text/x-tex"),
                "bib": ("refs.bib", bib.encode(), "text/plain"),
            }
        }
    return {"files": {"file": ("draft.docx", audit_drafts.docx(items), "application/octet-stream")}}


def _wait(c: httpx.Client, audit_id: str, timeout: float = 240) -> tuple[dict, list[tuple[int, int]]]:
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        a = c.get(f"/audits/{audit_id}").json()
        seen.append((a["progress"]["done"], a["progress"]["total"]))
        if a["status"] in ("succeeded", "failed", "cancelled"):
            return a, seen
        time.sleep(0.3)
    raise TimeoutError(audit_id)


def _page_text(app_db_url: str, document_id: str, page: int) -> str:
    from bayes_app.db import session_scope
    from bayes_app.models import PageText

    with session_scope(app_db_url) as db:
        row = db.get(PageText, (document_id, page))
        return row.text if row else ""


@pytest.mark.parametrize("fmt", ["md", "tex", "docx"])
def test_a_draft_is_checked_against_the_library(library, app_db_url, fmt):
    from bayes_app.library.quotes import quote_in_text

    c, papers, items, ids = library
    before = c.get("/credits").json() if c.get("/credits").status_code == 200 else None
    r = c.post("/audits", **_draft(fmt, items))
    assert r.status_code == 202, r.text
    assert r.json()["status"] == "queued"
    a, seen = _wait(c, r.json()["id"])
    assert a["status"] == "succeeded", a
    assert a["progress"] == {"done": len(a["sentences"]), "total": len(a["sentences"])}
    assert all(done <= total for done, total in seen)
    assert [x["id"] for x in c.get("/audits").json()["audits"]][0] == a["id"]  # newest first
    by_claim = {audit_drafts._sentence(i.claim)[:40]: i for i in items}
    flagged_texts = []
    for s in a["sentences"]:
        item = by_claim[s["text"][:40]]
        if s["flagged"]:
            flagged_texts.append(s["text"])
        for cit in s["citations"]:
            if cit["evidence"] is not None:  # every verdict rests on a verbatim passage of the cited paper
                ev = cit["evidence"]
                assert ev["document_id"] == cit["document_id"]
                assert quote_in_text(_page_text(app_db_url, ev["document_id"], ev["page"]), ev["quote"])
            else:
                assert cit["verdict"] == "not_in_library"
        if item.kind == "missing":
            assert [x["verdict"] for x in s["citations"]] == ["not_in_library"]
            assert s["citations"][0]["document_id"] is None
            assert s["citations"][0]["reference"]
        elif item.kind == "uncited":
            assert s["citations"] == []
            assert s["flagged"]
            assert ids[item.evidence.id] in [x["document_id"] for x in s["suggestions"]]
        else:
            assert s["citations"][0]["document_id"] == ids[item.cited.id], (fmt, s)
            if item.kind == "wrong":
                assert s["citations"][0]["verdict"] == "unsupported"
                assert s["flagged"]
    assert a["summary"]["not_in_library"] == 2
    assert a["summary"]["sentences"] == len(items)
    assert len(a["missing"]) == 2
    md = c.get(f"/audits/{a['id']}/report.md")
    assert md.status_code == 200
    assert md.headers["content-type"].startswith("text/markdown")
    for t in flagged_texts:
        assert t.split()[0] in md.text
    assert md.text.count("## Sentence ") == len(flagged_texts)
    dx = c.get(f"/audits/{a['id']}/report.docx")
    assert dx.status_code == 200

    import docx

    comments = list(docx.Document(io.BytesIO(dx.content)).comments)
    flagged = [s for s in a["sentences"] if s["flagged"]]
    assert len(comments) == len(flagged) + sum(len(s["suggestions"]) for s in flagged)
    if before is not None:  # the run was settled through the ledger (the model judged: charged)
        runs = c.get(f"/runs/{a['run_id']}").json()
        assert runs["finalized_at"] is not None
        assert runs["charged_credits"] is not None


def test_other_users_get_404_on_every_audit_route(library, app_stack, app_db_url):
    c, _, items, _ = library
    r = c.post("/audits", **_draft("md", items[:3]))
    audit_id = r.json()["id"]
    _wait(c, audit_id)
    other = _client(app_stack, app_db_url)
    for method, path in [
        ("GET", f"/audits/{audit_id}"),
        ("POST", f"/audits/{audit_id}/cancel"),
        ("DELETE", f"/audits/{audit_id}"),
        ("GET", f"/audits/{audit_id}/report.md"),
        ("GET", f"/audits/{audit_id}/report.docx"),
    ]:
        resp = other.request(method, path)
        assert resp.status_code == 404, (method, path)
        assert resp.json()["error"]["code"] == "not_found", (method, path)
    assert other.get("/audits").json()["audits"] == []
    # the owner deletes it
    assert c.delete(f"/audits/{audit_id}").status_code == 204
    assert c.get(f"/audits/{audit_id}").status_code == 404
    other.close()


def test_bad_files_get_a_clear_4xx_and_nothing_is_stored(library, app_stack):
    c, _, _, _ = library
    count = len(c.get("/audits").json()["audits"])
    cases = [
        ({"files": {"file": ("draft.md", b"", "text/markdown")}}, 400, "empty_file"),
        ({"files": {"file": ("paper.pdf", b"%PDF-1.4 x", "application/pdf")}}, 415, "unsupported_type"),
        ({"files": {"file": ("draft.docx", b"PK\x03\x04 broken", "application/octet-stream")}}, 400, "unreadable"),
        ({"files": {"file": ("draft.txt", b"\x00\x01\x02binary", "text/plain")}}, 400, "unreadable"),
        ({"files": {"file": ("draft.md", b"a " * (6 << 20), "text/markdown")}}, 413, "too_large"),
        (
            {
                "files": {
                    "file": ("draft.tex", b"Text \\cite{a}.", "text/x-tex"),
                    "bib": ("refs.txt", b"x", "text/plain"),
                }
            },
            415,
            "unsupported_type",
        ),
        ({"files": {"bib": ("refs.bib", b"@article{a,}", "text/plain")}}, 400, "missing_fields"),
        (
            {"files": {"file": ("draft.md", b"A claim [1].", "text/markdown")}, "data": {"collection_id": "nope"}},
            404,
            "not_found",
        ),
    ]
    for kw, status, code in cases:
        r = c.post("/audits", **kw)
        assert r.status_code == status, (kw.get("files"), r.text)
        err = r.json()["error"]
        assert err["code"] in (code, "missing_fields")
        assert len(err["message"]) > 15
    assert len(c.get("/audits").json()["audits"]) == count
    assert httpx.get(app_stack.url + "/api/v1/health", timeout=10).status_code == 200


def test_cancel_stops_the_check(library):
    c, _, items, _ = library
    audit_id = c.post("/audits", **_draft("md", items * 6)).json()["id"]
    r = c.post(f"/audits/{audit_id}/cancel")
    assert r.status_code == 200
    a, _ = _wait(c, audit_id)
    assert a["status"] == "cancelled"
    assert a["progress"]["done"] < a["progress"]["total"]
