"""The one rule for who may see what: the owner, and members of the object's team.

Every API view and websocket consumer gets its objects through ``visible`` so that another
user's ids answer 404, never 403 and never data.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.db.models import Model, Q, QuerySet

M = TypeVar("M", bound=Model)


def visible(qs: QuerySet[M], user: Any) -> QuerySet[M]:
    if user is None or not user.is_authenticated:
        return qs.none()
    # the user's teams as a subquery: no join over the members, so no duplicate rows and no DISTINCT
    # (which would compare every column, snapshot blobs included)
    from .models import Team

    teams = Team.objects.filter(members=user).values("pk")
    return qs.filter(Q(owner=user) | Q(team__in=teams))


def can_read(obj: Any, user: Any) -> bool:
    if user is None or not user.is_authenticated:
        return False
    if obj.owner_id == user.pk:
        return True
    return obj.team_id is not None and obj.team.members.filter(pk=user.pk).exists()
