"""A map scoped to a collection (SQLite and PostgreSQL): "Watch for new papers" proposes only the
new papers inside that collection; an unscoped map of the same owner takes them all."""

from __future__ import annotations

import numpy as np

from bayes_app.maps import service
from bayes_app.maps.arrivals import relevant_maps
from bayes_app.models import Collection, DocumentCollection
from tests.integration.test_maps_service import library, user


def test_watch_for_new_papers_keeps_to_the_maps_collection(dbs):
    owner = user(dbs)
    inside, outside = library(dbs, owner).document_id, library(dbs, owner).document_id
    c = Collection(owner_id=owner, name="Scope")
    dbs.add(c)
    dbs.flush()
    dbs.add(DocumentCollection(document_id=inside, collection_id=c.id))
    dbs.commit()
    scoped = service.create_map(dbs, owner, "Scoped", "Do small models win?", collection_id=c.id)["id"]
    whole = service.create_map(dbs, owner, "Whole", "Do small models win?")["id"]
    dbs.commit()

    same = np.ones((1, 4)) / 2.0  # every paper matches every map text: relevance 1.0
    found = relevant_maps(dbs, owner, [inside, outside], lambda _d: same, lambda t: np.ones((len(t), 4)) / 2.0, 0.5)
    assert [h["id"] for h in found[scoped]] == [inside]
    assert sorted(h["id"] for h in found[whole]) == sorted([inside, outside])


def test_deleting_the_collection_leaves_the_map_on_the_whole_library(dbs):
    from bayes_app.library.documents import delete_collection
    from bayes_app.models import Mindmap

    owner = user(dbs)
    c = Collection(owner_id=owner, name="Gone")
    dbs.add(c)
    dbs.commit()
    mid = service.create_map(dbs, owner, "Scoped", collection_id=c.id)["id"]
    dbs.commit()
    delete_collection(dbs, owner, c.id)
    dbs.commit()
    assert dbs.get(Mindmap, mid, populate_existing=True).collection_id is None
