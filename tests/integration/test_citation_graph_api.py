"""The citation graph through the running app: generated papers whose reference lists cite
each other (one by DOI only, one with a title typo) are uploaded and indexed by the worker;
the API lists who cites whom, what is missing from the library and from a map, and answers
404 for another user's documents and maps."""

from __future__ import annotations

import pytest

from tests.integration.test_library import upload, wait_done
from tests.support.cited_pdf import CitedPaper, paper_pdf, reference

SRM = CitedPaper("Scalable Reference Matching in Digital Libraries", 2019, doi="10.5555/srm.2019")
NRC = CitedPaper("Neural Ranking of Scientific Citations", 2020)
MISSING = "Large Language Models as Research Assistants"
GMLD = CitedPaper(
    "Graph Methods for Literature Discovery",
    2021,
    references=[
        reference("J. Smith and K. Lee", "Matching of references at scale", "Proc. JCDL", 2019, "10.5555/srm.2019"),
        reference("M. Chen", "Neural Rankng of Scientific Citatons", "TOIS", 2020),
        reference("P. Novak and Q. Ito", MISSING, "Nature Reviews", 2023),
    ],
)
SURVEY = CitedPaper(
    "A Survey of Reading Tools for Scientists",
    2022,
    references=[
        reference("M. Chen", "Neural Ranking of Scientific Citations", "TOIS", 2020),
        reference("P. Novak and Q. Ito", MISSING, "Nature Reviews", 2023),
    ],
)


@pytest.fixture(scope="module")
def library(app_stack, app_db_url):
    import uuid

    import httpx

    from bayes_app.accounts import service
    from bayes_app.db import session_scope

    email, pw = f"g{uuid.uuid4().hex[:10]}@example.com", "pw-" + uuid.uuid4().hex[:12]
    with session_scope(app_db_url) as db:
        service.register(db, email, pw)
    c = httpx.Client(base_url=app_stack.url + "/api/v1", timeout=60)
    c.headers["Authorization"] = (
        "Bearer " + c.post("/auth/token", json={"email": email, "password": pw}).json()["token"]
    )
    ids = {}
    for paper in (SRM, GMLD, NRC, SURVEY):  # NRC arrives after GMLD cites it: the incoming pass links it
        doc = upload(c, paper_pdf(paper), paper.title[:20] + ".pdf").json()
        assert wait_done(c, doc["id"])["status"] == "indexed"
        ids[paper.title] = doc["id"]
    yield c, ids
    c.close()


def _ids(papers: list[dict]) -> set[str]:
    return {p["document_id"] for p in papers}


def test_cites_and_cited_by(library):
    c, ids = library
    gmld = c.get(f"/documents/{ids[GMLD.title]}/citations").json()
    assert _ids(gmld["cites"]) == {ids[SRM.title], ids[NRC.title]}
    assert {p["document_id"]: p["how"] for p in gmld["cites"]} == {ids[SRM.title]: "doi", ids[NRC.title]: "fuzzy"}
    assert gmld["cited_by"] == []
    nrc = c.get(f"/documents/{ids[NRC.title]}/citations").json()
    assert _ids(nrc["cited_by"]) == {ids[GMLD.title], ids[SURVEY.title]}
    assert nrc["cites"] == []
    assert nrc["cited_by"][0]["title"] in (GMLD.title, SURVEY.title)


def test_missing_from_library_and_from_a_map(library, user_api):
    c, ids = library
    body = c.get("/library/missing").json()
    assert [(p["title"], p["cited_by_count"], p["year"]) for p in body["papers"]] == [(MISSING, 2, 2023)]
    assert set(body["papers"][0]["cited_by"]) == {ids[GMLD.title], ids[SURVEY.title]}
    col = c.post("/collections", json={"name": "two"}).json()
    assert c.get("/library/missing", params={"collection": col["id"]}).json() == {"count": 0, "papers": []}

    m = c.post("/mindmaps", json={"question": "How are references matched?"}).json()
    node = c.post(f"/mindmaps/{m['id']}/nodes", json={"parent_id": m["root_id"], "title": "claims"}).json()
    for title in (GMLD.title, SURVEY.title, NRC.title):
        hit = c.get("/search", params={"q": "reference lists across the papers", "document_id": ids[title]}).json()[0]
        assert (
            c.post(f"/mindmaps/{m['id']}/nodes/{node['id']}/citations", json={"chunk_id": hit["chunk_id"]}).status_code
            == 201
        )
    assert [p["title"] for p in c.get(f"/mindmaps/{m['id']}/missing").json()["papers"]] == [MISSING]
    cited = {x["document_id"]: x["cited_in_library"] for x in c.get(f"/mindmaps/{m['id']}").json()["citations"]}
    assert cited == {ids[GMLD.title]: 0, ids[SURVEY.title]: 0, ids[NRC.title]: 2}

    other = user_api()
    for path in (f"/documents/{ids[NRC.title]}/citations", f"/mindmaps/{m['id']}/missing"):
        assert other.get(path).status_code == 404
    assert other.get("/library/missing").json() == {"count": 0, "papers": []}
    assert other.get("/library/missing", params={"collection": col["id"]}).status_code == 404


def test_deleting_a_document_unlinks_it(library):
    c, ids = library
    assert c.delete(f"/documents/{ids[SRM.title]}").status_code == 204
    gmld = c.get(f"/documents/{ids[GMLD.title]}/citations").json()
    assert _ids(gmld["cites"]) == {ids[NRC.title]}
