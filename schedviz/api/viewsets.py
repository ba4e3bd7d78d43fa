"""The base of every API viewset: the generic error answers in the schema, no NUL in query
parameters, and the ownership rule (``OwnedViewSet``); and the small helpers the apps' views share.

The apps' views (``ingestion/views.py``, ``replays/views.py``, ``accounts/views.py``,
``live/views.py``) parse the request, apply the ownership rule through these, and delegate to their
domain modules.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from rest_framework import viewsets
from rest_framework.request import Request

from .errors import ApiError
from .schema import SchedVizAutoSchema


def request_user(request: Request) -> Any:
    """The authenticated user (every API view requires authentication)."""
    return request.user


def field_error(message: str) -> ApiError:
    """A 400 for a message of the form "field: problem", with ``details`` naming the field."""
    field, sep, problem = message.partition(": ")
    details = {field: [problem]} if sep and field.isidentifier() else None
    return ApiError(message, code="invalid", details=details)


def choice(request: Request, name: str, choices: tuple[str, ...] | list[str]) -> str:
    """The query parameter ``name`` ("" when absent); 400 naming it when it is not one of ``choices``."""
    value = request.query_params.get(name, "")
    if value and value not in choices:
        problem = f"must be one of {', '.join(choices)}"
        raise ApiError(f"{name}: {problem}, got {value[:40]!r}", code="invalid", details={name: [problem]})
    return value


class BaseViewSet(viewsets.GenericViewSet):  # type: ignore[type-arg]
    schema = SchedVizAutoSchema()

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        for name, values in request.query_params.lists():
            if any("\x00" in v for v in values):  # PostgreSQL refuses NUL in text: 400 here, not 500 there
                raise ApiError(
                    f"{name}: must not contain NUL characters",
                    code="invalid",
                    details={name: ["must not contain NUL characters"]},
                )


class OwnedViewSet(BaseViewSet):
    """Every object comes through the ownership rule: other users' ids are 404.

    Members of an object's team read it; only its owner changes it (``owner_actions``: 403 for a member).
    ``model`` is an owned model (``schedviz.accounts.models.Owned``): its ``visible_to(user)`` is the rule.
    """

    model: Any = None
    owner_actions = frozenset({"destroy", "update", "partial_update", "cancel", "rerun"})

    def get_queryset(self) -> QuerySet[Any]:
        queryset: QuerySet[Any] = self.model.visible_to(request_user(self.request))
        return queryset

    def get_object(self) -> Any:
        try:
            obj = super().get_object()
        except Http404:
            name = self.model._meta.verbose_name
            raise ApiError(
                f"no {name} {self.kwargs.get('pk', '')!s:.40} among those you may read",
                code="not_found",
                status_code=404,
            ) from None
        if self.action in self.owner_actions and obj.owner_id != request_user(self.request).pk:
            raise ApiError(
                f"only the owner of this {self.model._meta.verbose_name} can change it (you read it as a team member)",
                code="forbidden",
                status_code=403,
            )
        return obj
