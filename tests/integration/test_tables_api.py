"""Extraction tables through the running app: a table over generated papers whose sample size,
design and finding are known is filled by a real worker offline; every filled cell quotes a
verbatim sentence of its paper with its page; an edit survives a re-fill and reaches the CSV;
the XLSX opens; a fill stopped at once ends cancelled and settled; members and strangers see
what their role allows (a stranger 404 on every route)."""

from __future__ import annotations

import io
import time
import uuid

import httpx
import pytest

from tests.integration.test_library import upload, wait_done
from tests.support.table_papers import PAPERS, fund, paper_pdf

COLUMNS = [
    {"key": "participants", "question": "How many participants were studied?", "type": "number"},
    {"key": "rct", "question": "Is this a randomized controlled trial?", "type": "yes_no"},
    {"key": "finding", "question": "What is the main finding?", "type": "text"},
]


def _client(app_stack, app_db_url) -> tuple[httpx.Client, str]:
    from bayes_app.accounts import service
    from bayes_app.db import session_scope

    email, pw = f"t{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex[:12]
    with session_scope(app_db_url) as db:
        service.register(db, email, pw)
    fund(app_db_url, email)
    c = httpx.Client(base_url=app_stack.url + "/api/v1", timeout=60)
    c.headers["Authorization"] = (
        "Bearer " + c.post("/auth/token", json={"email": email, "password": pw}).json()["token"]
    )
    return c, email


def wait_run(c: httpx.Client, run_id: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = c.get(f"/runs/{run_id}").json()
        if run["finalized_at"]:
            return run
        time.sleep(0.3)
    raise TimeoutError(run)


@pytest.fixture(scope="module")
def library(app_stack, app_db_url):
    c, email = _client(app_stack, app_db_url)
    coll = c.post("/collections", json={"name": "review"}).json()
    ids = {}
    for p in PAPERS:
        doc = upload(c, paper_pdf(p), p.title[:20] + ".pdf").json()
        assert wait_done(c, doc["id"])["status"] == "indexed"
        ids[p.title] = doc["id"]
        assert c.patch(f"/documents/{doc['id']}", json={"collection_ids": [coll["id"]]}).status_code == 200
    yield c, email, coll["id"], ids
    c.close()


@pytest.fixture(scope="module")
def filled(library):
    c, _, coll, ids = library
    r = c.post("/tables", json={"title": "Sample sizes", "collection_id": coll, "columns": COLUMNS})
    assert r.status_code == 201, r.text
    table = r.json()
    assert [row["document_id"] for row in table["rows"]]
    assert len(table["rows"]) == len(PAPERS)
    r = c.post(f"/tables/{table['id']}/fill")
    assert r.status_code == 202, r.text
    run = wait_run(c, r.json()["run_id"])
    assert run["status"] == "SUCCEEDED"
    assert run["charged_credits"] is not None
    return table["id"]


def test_fill_reads_values_off_verbatim_sentences(library, filled):
    c, _, _, ids = library
    table = c.get(f"/tables/{filled}").json()
    by_doc = {row["document_id"]: row["cells"] for row in table["rows"]}
    right_n = right_rct = findings = 0
    for p in PAPERS:
        cells = by_doc[ids[p.title]]
        for cell in cells.values():
            if cell["status"] == "found":
                assert cell["page"] == 1
                assert cell["quote"]
                assert " ".join(cell["quote"].split()) in " ".join(p.abstract.split())  # verbatim
        n = cells["participants"]
        right_n += n["value"] == p.participants
        if n["status"] == "found":
            assert str(n["value"]) in n["quote"].replace(",", "")  # the number is in its quote
        right_rct += cells["rct"]["value"] == ("yes" if p.randomized else "no")
        findings += p.finding in (cells["finding"]["quote"] or "")
    assert right_n == len(PAPERS)
    assert right_rct == len(PAPERS)
    assert findings >= len(PAPERS) - 1
    assert table["screening"] == [
        {"column": "rct", "screened": 4, "included": 2, "excluded": 2, "unsure": 0, "not_screened": 0}
    ]


def test_an_edit_survives_a_refill_and_reaches_the_exports(library, filled):
    c, _, _, ids = library
    doc = ids[PAPERS[1].title]
    r = c.patch(f"/tables/{filled}/cells", json={"document_id": doc, "column": "participants", "value": "3,400"})
    assert r.status_code == 200
    assert r.json()["status"] == "edited"
    assert r.json()["value"] == 3400
    bad = c.patch(f"/tables/{filled}/cells", json={"document_id": doc, "column": "rct", "value": "maybe"})
    assert bad.status_code == 400
    assert "yes, no or unsure" in bad.json()["error"]["message"]
    run = wait_run(c, c.post(f"/tables/{filled}/fill", json={"columns": ["participants"]}).json()["run_id"])
    assert run["status"] == "SUCCEEDED"
    cell = next(r for r in c.get(f"/tables/{filled}").json()["rows"] if r["document_id"] == doc)["cells"][
        "participants"
    ]
    assert (cell["value"], cell["status"]) == (3400, "edited")
    csv_text = c.get(f"/tables/{filled}/export.csv").text
    assert "3400" in csv_text
    assert "edited" in csv_text
    assert "participants quote" in csv_text.splitlines()[0]
    from openpyxl import load_workbook

    xlsx = c.get(f"/tables/{filled}/export.xlsx")
    assert xlsx.status_code == 200
    ws = load_workbook(io.BytesIO(xlsx.content))["Table"]
    assert ws.max_row == len(PAPERS) + 1
    assert ws.cell(1, 3).value == "participants"


def test_add_a_column_and_fill_only_it(library, filled):
    c, _, _, ids = library
    r = c.post(
        f"/tables/{filled}/columns",
        json={
            "key": "design",
            "question": "What is the study design?",
            "type": "choice",
            "choices": ["cohort", "case-control", "randomized trial"],
        },
    )
    assert r.status_code == 201
    assert [col["key"] for col in r.json()["columns"]][-1] == "design"
    run = wait_run(c, c.post(f"/tables/{filled}/fill", json={"columns": ["design"]}).json()["run_id"])
    assert run["status"] == "SUCCEEDED"
    values = {row["document_id"]: row["cells"]["design"]["value"] for row in c.get(f"/tables/{filled}").json()["rows"]}
    assert values[ids[PAPERS[1].title]] == "cohort"
    assert values[ids[PAPERS[3].title]] == "case-control"
    dup = c.post(f"/tables/{filled}/columns", json={"key": "design", "question": "Again?", "type": "text"})
    assert dup.status_code == 400


def test_cancel_at_once_ends_cancelled_and_settled(library, filled):
    c, *_ = library
    run_id = c.post(f"/tables/{filled}/fill").json()["run_id"]
    assert c.post(f"/runs/{run_id}/cancel").status_code in (200, 202)
    run = wait_run(c, run_id)
    assert run["status"] in ("CANCELLED", "SUCCEEDED")  # a fill of four papers may finish first
    assert run["finalized_at"]
    assert run["charged_credits"] is not None
    assert run["charged_credits"] <= run["reserved_credits"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"title": "t", "columns": []}, "bad_rows"),
        (
            {"title": "t", "document_ids": ["x"], "columns": [{"key": "a", "question": "Q?", "type": "date"}]},
            "bad_column_type",
        ),
        ({"title": "t", "document_ids": ["x"], "columns": []}, "no_columns"),
    ],
)
def test_bad_tables_are_refused_with_a_message(library, body, code):
    c, *_ = library
    r = c.post("/tables", json=body)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == code
    assert r.json()["error"]["message"]


def test_strangers_get_404_and_members_what_their_role_allows(library, filled, app_stack, app_db_url):
    c, _, coll, ids = library
    other, other_email = _client(app_stack, app_db_url)
    assert other.post("/tables", json={"title": "t", "collection_id": coll, "columns": COLUMNS}).status_code == 404
    doc = ids[PAPERS[0].title]
    for method, path, body in [
        ("GET", f"/tables/{filled}", None),
        ("DELETE", f"/tables/{filled}", None),
        ("POST", f"/tables/{filled}/fill", {}),
        ("POST", f"/tables/{filled}/columns", {"key": "z", "question": "Q?", "type": "text"}),
        ("PATCH", f"/tables/{filled}/cells", {"document_id": doc, "column": "rct", "value": "yes"}),
        ("GET", f"/tables/{filled}/export.csv", None),
        ("GET", f"/tables/{filled}/export.xlsx", None),
        ("GET", f"/tables/{filled}/members", None),
    ]:
        r = other.request(method, path, json=body)
        assert r.status_code == 404, (method, path, r.text)
    assert other.get(f"/documents/{doc}/file").status_code == 404
    assert c.post(f"/tables/{filled}/members", json={"email": other_email, "role": "viewer"}).status_code == 201
    assert other.get(f"/tables/{filled}").status_code == 200
    assert other.get(f"/documents/{doc}/file").status_code == 200  # the owner shared the table, so its papers
    r = other.patch(f"/tables/{filled}/cells", json={"document_id": doc, "column": "rct", "value": "yes"})
    assert r.status_code == 403
    assert "viewer" in r.json()["error"]["message"]
    assert [t["role"] for t in other.get("/tables").json()["tables"]] == ["viewer"]
    other.close()
