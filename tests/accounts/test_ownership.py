"""The ownership rule: owners and their teams' members see an object, once; others do not."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, User

from schedviz.accounts.models import Team
from schedviz.accounts.ownership import can_read, visible
from schedviz.replays.models import Configuration


@pytest.mark.django_db
def test_visible_owned_and_can_read() -> None:
    alice, bob, carol, dave = (User.objects.create_user(n) for n in ("alice", "bob", "carol", "dave"))
    big = Team.objects.create(name="big")
    big.members.add(alice, bob, dave)
    small = Team.objects.create(name="small")
    small.members.add(bob)
    mine = Configuration.objects.create(owner=alice, name="mine", text="")
    shared = Configuration.objects.create(owner=alice, name="shared", text="", team=big)
    bobs = Configuration.objects.create(owner=bob, name="bobs", text="", team=small)
    qs = Configuration.objects.all()

    def names(user: object) -> list[str]:
        return sorted(c.name for c in visible(qs, user))

    # alice owns "shared" and is one of three members of its team: still one row, not three
    assert names(alice) == ["mine", "shared"]
    assert visible(qs, alice).count() == 2
    assert names(bob) == ["bobs", "shared"]
    assert names(dave) == ["shared"]
    assert names(carol) == []
    assert names(AnonymousUser()) == [] and names(None) == []
    assert can_read(shared, dave) and not can_read(mine, dave) and not can_read(bobs, alice)
