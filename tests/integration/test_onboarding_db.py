"""First-run progress on both databases: each step ticks only for this user's own data."""

from __future__ import annotations

from bayes_app.accounts import onboarding, service
from bayes_app.chat import conversations
from bayes_app.maps import service as maps
from bayes_app.models import DocStatus, Document


def test_steps_tick_off_in_any_order_and_only_for_the_owner(dbs):
    me = service.register(dbs, "first@example.com", "correct-horse-42")
    other = service.register(dbs, "other@example.com", "correct-horse-42")
    dbs.commit()
    p = onboarding.progress(dbs, me.id)
    assert (p.papers, p.indexed, p.asked, p.mapped, p.done) == (0, 0, False, False, False)

    # another user's activity never ticks my steps
    dbs.add(Document(owner_id=other.id, filename="x.pdf", file_sha256="a" * 64, status=DocStatus.INDEXED))
    conversations.begin_turn(dbs, conversations.create(dbs, other.id, "q"), "What?")
    theirs = maps.create_map(dbs, other.id, "Their map")
    maps.add_child(dbs, other.id, theirs["id"], maps.root_of(dbs, theirs["id"]).id)
    dbs.commit()
    assert onboarding.progress(dbs, me.id) == onboarding.FirstRun(0, 0, False, False)

    # a map with only its root is not "built"; one more node is
    mine = maps.create_map(dbs, me.id, "My question")
    assert not onboarding.progress(dbs, me.id).mapped
    root = maps.root_of(dbs, mine["id"]).id
    maps.add_child(dbs, me.id, mine["id"], root, "A first idea")
    dbs.commit()
    assert onboarding.progress(dbs, me.id).mapped

    dbs.add(Document(owner_id=me.id, filename="a.pdf", file_sha256="b" * 64, status=DocStatus.QUEUED))
    dbs.commit()
    p = onboarding.progress(dbs, me.id)
    assert (p.papers, p.indexed, p.done) == (1, 0, False)

    conversations.begin_turn(dbs, conversations.create(dbs, me.id, "mine"), "What is PaSa?")
    dbs.commit()
    p = onboarding.progress(dbs, me.id)
    assert p.asked
    assert p.done
