"""The plans endpoint (``/api/v1/plans/``): ask a capacity, drain or scale-up question of a stored
snapshot, list the plans, read one's answer. Parse, authorise, delegate to services.py."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response

from schedviz.accounts.ownership import visible
from schedviz.api.errors import ApiError
from schedviz.api.schema import error
from schedviz.api.viewsets import OwnedViewSet, choice, request_user
from schedviz.engine.errors import InputError
from schedviz.ingestion.models import Snapshot
from schedviz.replays.models import Configuration

from . import serializers as s
from .models import Plan
from .services import create_plan, wait_for

POLL_SECONDS = 2


@extend_schema(tags=["plans"])
class PlanViewSet(OwnedViewSet, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin):
    """Capacity, drain and scale-up plans: each a replay underneath, run on the worker and stored."""

    model = Plan
    serializer_class = s.PlanSerializer

    def get_serializer_class(self) -> Any:
        return s.PlanListSerializer if self.action == "list" else s.PlanSerializer

    def get_queryset(self) -> QuerySet[Any]:
        queryset = super().get_queryset().select_related("snapshot")
        if self.action == "list":
            queryset = queryset.defer("result", "request", "config")
        return queryset

    def filter_queryset(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.action != "list":
            return queryset
        kind = choice(self.request, "kind", Plan.Kind.values)
        if kind:
            queryset = queryset.filter(kind=kind)
        return queryset

    @extend_schema(
        request=s.PlanCreateSerializer,
        responses={
            201: OpenApiResponse(
                s.PlanSerializer, description="The plan: done within `wait` seconds, or queued"
            ),
            400: error(
                "Invalid fields (`invalid`), or a plan whose question is wrong (`invalid_plan`: the field named)"
            ),
            404: error("`snapshot` or `configuration` is not among those you may read."),
            409: error("The snapshot's upload has not been read yet (`snapshot_not_ready`)."),
        },
    )
    def create(self, request: Request) -> Response:
        """Ask a question: `kind` capacity (`pods`, `order`, `max`), drain (`nodes` or `selector`,
        `respect_pdb`) or scale-up (`templates`, `max_nodes`). Poll the plan until it ends."""
        form = s.PlanCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        d = form.validated_data
        user = request_user(request)
        snap = get_object_or_404(visible(Snapshot.objects.all(), user), pk=d["snapshot"])
        if getattr(snap, "status", "ready") != "ready":
            raise ApiError(f"snapshot {snap.pk} is not ready", code="snapshot_not_ready", status_code=409)
        config = None
        if d.get("configuration"):
            conf = get_object_or_404(visible(Configuration.objects.all(), user), pk=d["configuration"])
            config = conf.parsed
        question: dict[str, Any] = {"allNodes": d["all_nodes"], "replay": d["replay"]}
        kind = d["kind"]
        if kind == Plan.Kind.CAPACITY:
            question.update({"pods": d.get("pods") or [], "order": d["order"], "max": d.get("max")})
        elif kind == Plan.Kind.DRAIN:
            question.update(
                {
                    "nodes": d.get("nodes") or [],
                    "selector": d.get("selector") or "",
                    "respectPdb": d["respect_pdb"],
                }
            )
        else:
            question.update({"templates": d.get("templates") or [], "maxNodes": d["max_nodes"]})
        try:
            plan = create_plan(user, snap, kind, question, config, name=d.get("name", ""))
        except InputError as exc:
            raise ApiError(str(exc), code="invalid_plan", details={"field": exc.field}) from None
        plan = wait_for(plan, float(d.get("wait", 0)))
        headers = (
            {}
            if plan.status in (Plan.Status.SUCCEEDED, Plan.Status.FAILED)
            else {"Retry-After": str(POLL_SECONDS)}
        )
        return Response(s.PlanSerializer(plan).data, status=status.HTTP_201_CREATED, headers=headers)
