"""Exports a researcher can cite from (issue 39): generated papers that print their venue,
year and DOI (and a CreationDate of another year) are ingested for real; a map cites passages
on different pages. The Markdown and DOCX exports carry each claim's page at its marker and
render the references in the picked CSL style; BibTeX has the entry type, journal, volume,
pages and DOI (the Zotero/Better BibTeX key where the paper came from Zotero); the LaTeX
export's ``\\cite`` keys are exactly those of the BibTeX."""

from __future__ import annotations

import io
import re

import bibtexparser
import pytest
from docx import Document as Docx
from sqlmodel import select

from bayes_app.maps import citations, export, export_tex, service
from bayes_app.models import Chunk, Document, ZoteroItem, ZoteroLibrary
from tests.support.maplab import MapLab
from tests.support.reference_sets import PrintedPaper, printed_pdf

JOURNAL = PrintedPaper(
    "Uncertainty estimates for protein structure",
    ("Journal of Computational Biology 10 (2012) 100-120", "doi:10.5555/jcb.2012.77"),
    2012,
    2026,
    "10.5555/jcb.2012.77",
)
VANC = PrintedPaper("Learning to rank for citation recommendation", ("Bioinformatics 2019;35(4):210-219",), 2019, 1988)
UNDATED = PrintedPaper("A technical note on reading tools", ("Technical Note",), 0, 2026)
PAGE = {
    JOURNAL.title: ("Ensembles of folding models give calibrated error bars on held-out proteins.",),
    VANC.title: ("Pairwise ranking losses recommend the cited paper first in most held-out cases.",),
    UNDATED.title: ("Readers found related work faster when reference lists were linked.",),
}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    d = tmp_path_factory.mktemp("cite")
    paths = []
    for i, p in enumerate((JOURNAL, VANC, UNDATED)):
        path = d / f"paper{i}.pdf"
        path.write_bytes(printed_pdf(p, more_pages=((), ("Filler line.",), PAGE[p.title])))  # the claim on p. 4
        paths.append(path)
    with MapLab(paths) as lab:
        yield lab


def _map(lab: MapLab) -> str:
    with lab.sessions() as db:
        docs = {d.title: d for d in db.exec(select(Document).where(Document.owner_id == lab.user_id))}
        # the journal paper came from Zotero, whose item carries a Better BibTeX citation key
        zlib = ZoteroLibrary(owner_id=lab.user_id, library_key="42")
        db.add(zlib)
        db.flush()
        db.add(
            ZoteroItem(
                library_id=zlib.id,
                key="ABCD1234",
                item_type="journalArticle",
                data={"itemType": "journalArticle", "extra": "Citation Key: okafor2012uncertainty\nother: x"},
            )
        )
        jdoc = docs[JOURNAL.title]
        jdoc.zotero_library_id, jdoc.zotero_item_key = zlib.id, "ABCD1234"
        db.add(jdoc)
        db.commit()
        m = service.create_map(db, lab.user_id, "Related work", "What do the papers report?")
        root = service.map_view(db, lab.user_id, m["id"])["root_id"]
        theme = service.add_child(db, lab.user_id, m["id"], root, "Findings", kind="theme")
        for p in (JOURNAL, VANC, UNDATED):
            doc = docs[p.title]
            [chunk] = [
                c for c in db.exec(select(Chunk).where(Chunk.document_id == doc.id)) if PAGE[p.title][0][:30] in c.text
            ]
            assert chunk.page == 4
            first = [c for c in db.exec(select(Chunk).where(Chunk.document_id == doc.id)) if c.page == 1][0]
            node = service.add_child(db, lab.user_id, m["id"], theme["id"], PAGE[p.title][0], kind="claim")
            citations.attach_citation(db, lab.user_id, m["id"], node["id"], chunk.id)
            if p is VANC:  # a claim citing two pages of one paper
                citations.attach_citation(db, lab.user_id, m["id"], node["id"], first.id)
    return m["id"]


def test_printed_year_title_and_doi_after_ingestion(lab):
    with lab.sessions() as db:
        got = {d.title: (d.year, d.doi) for d in db.exec(select(Document).where(Document.owner_id == lab.user_id))}
    assert got == {JOURNAL.title: (2012, JOURNAL.doi), VANC.title: (2019, None), UNDATED.title: (None, None)}


def test_markdown_docx_bibtex_and_latex(lab):
    mid = _map(lab)
    with lab.sessions() as db:
        md = export.markdown(db, lab.user_id, mid)
        md_ieee = export.markdown(db, lab.user_id, mid, style="ieee")
        docx = export.docx_bytes(db, lab.user_id, mid, style="vancouver")
        bib = export_tex.bibtex(db, lab.user_id, mid)
        tex = export_tex.latex(db, lab.user_id, mid)
    # every claim's marker carries its page
    for p in (JOURNAL, UNDATED):
        assert re.search(re.escape(PAGE[p.title][0][:-1]) + r" \[\d, p\. 4\]\.", md), md
    assert re.search(re.escape(PAGE[VANC.title][0][:-1]) + r" \[\d, pp\. 1, 4\]\.", md)
    assert "pp. 1, 4" not in md.split("## References")[1]  # pages are at the markers, not pooled
    # references in the picked CSL style
    refs = md.split("## References")[1]
    assert "Okafor, L., \\& Rossi, M. (2012)." in refs
    assert "Journal of Computational Biology, 10, 100–120" in refs
    assert "L. Okafor and M. Rossi, “Uncertainty estimates for protein structure”" in md_ieee
    paras = [p.text for p in Docx(io.BytesIO(docx)).paragraphs]
    assert any(
        "Okafor L, Rossi M. Learning to rank for citation recommendation. Bioinformatics 2019;35" in x for x in paras
    )
    assert any(re.search(r"\[\d, p\. 4\]", x) for x in paras)

    entries = {e["ID"]: e for e in bibtexparser.loads(bib).entries}
    j = entries["okafor2012uncertainty"]  # the Better BibTeX key from the Zotero item
    assert j["ENTRYTYPE"] == "article"
    assert j["doi"] == JOURNAL.doi
    assert j["journal"] == "Journal of Computational Biology"
    assert (j["volume"], j["pages"], j["year"]) == ("10", "100--120", "2012")
    [v] = [e for k, e in entries.items() if k != "okafor2012uncertainty" and e.get("year") == "2019"]
    assert v["ENTRYTYPE"] == "article"
    assert (v["journal"], v["volume"], v["number"]) == ("Bioinformatics", "35", "4")
    [u] = [e for e in entries.values() if "year" not in e]
    assert u["ENTRYTYPE"] == "misc"  # nothing printed: no type or year made up

    cites = re.findall(r"\\cite\[[^\]]*\]\{([^}]+)\}", tex)
    assert cites, tex
    assert len(cites) == 3
    assert set(cites) == set(entries)  # every \cite key is in export.bib, and all are used
    assert r"\cite[p.~4]{okafor2012uncertainty}" in tex
    assert r"\cite[pp.~1,~4]{okafor2019learning}" in tex
    assert r"\bibliography{sources}" in tex
    assert tex.count("{") == tex.count("}")


def test_export_style_is_checked(lab):
    with lab.sessions() as db:
        mid = service.create_map(db, lab.user_id, "Empty")["id"]
        with pytest.raises(ValueError, match="Unknown reference style"):
            export.markdown(db, lab.user_id, mid, style="harvard-made-up")
