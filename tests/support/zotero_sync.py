"""Helpers for the Zotero sync tests: run the real engine against the fake server."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

from sqlmodel import Session, select

from bayes_app.db import get_engine
from bayes_app.models import Collection, Document, DocumentCollection, ZoteroItem
from bayes_app.zotero import engine
from bayes_app.zotero.http import Policy
from bayes_app.zotero.service import ConnectRequest, connect

_ids = itertools.count(1000)
SECRET = "test-secret-for-zotero-keys"


@dataclass
class Recorder:
    """Records what the sync asks of the broker (ingest, purge, re-group) after each commit."""

    ingested: list[tuple[str, int]] = field(default_factory=list)
    purged: list[tuple[str, str | None]] = field(default_factory=list)
    regrouped: list[str] = field(default_factory=list)

    def hooks(self) -> engine.Hooks:
        return engine.Hooks(
            lambda d, g: self.ingested.append((d, g)), lambda d, s: self.purged.append((d, s)), self.regrouped.append
        )

    def clear(self) -> None:
        self.ingested.clear(), self.purged.clear(), self.regrouped.clear()


def new_ids() -> tuple[int, str]:
    n = next(_ids)
    return n, f"key{n}x{n}"


def sessions(db_url: str):
    return lambda: Session(get_engine(db_url), expire_on_commit=False)


def options(fz, tmp_path: Path, policy: Policy | None = None, **kw) -> engine.SyncOptions:
    return engine.SyncOptions(
        files_root=tmp_path / "files",
        max_file_bytes=20 << 20,
        web_api_url=fz.base,
        local_api_url=fz.base + "/api",
        lease_s=30,
        policy=policy or Policy(base_delay_s=0.05, max_delay_s=0.5),
        secret=SECRET,
        **kw,
    )


def connect_web(
    db_url: str, owner_id: str, fz, api_key: str, library_type: str = "user", library_id: str | None = None
) -> str:
    from bayes_app.db import session_scope

    with session_scope(db_url) as s:
        row = connect(s, owner_id, ConnectRequest("web", library_type, library_id, api_key), web_api_url=fz.base)
        return row.id


def snapshot(db_url: str, owner_id: str) -> dict:
    """{attachment key: (title, sorted collection names, zotero version)} for the owner's docs."""
    with Session(get_engine(db_url)) as s:
        docs = list(s.exec(select(Document).where(Document.owner_id == owner_id)))
        names = {c.id: c.name for c in s.exec(select(Collection).where(Collection.owner_id == owner_id))}
        out = {}
        for d in docs:
            cols = sorted(
                names[link.collection_id]
                for link in s.exec(select(DocumentCollection).where(DocumentCollection.document_id == d.id))
            )
            out[d.zotero_attachment_key] = (d.title, cols, d.zotero_version)
        return out


def problems(db_url: str, library_id: str) -> dict[str, str]:
    with Session(get_engine(db_url)) as s:
        return {
            r.key: r.problem_code
            for r in s.exec(
                select(ZoteroItem).where(ZoteroItem.library_id == library_id, ZoteroItem.problem_code != None)
            )
        }
