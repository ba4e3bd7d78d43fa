"""The snapshots endpoints (``/api/v1/snapshots/``): upload manifests, read a snapshot's nodes, pods,
namespaces and objects, delete it."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from schedviz.api.errors import ApiError
from schedviz.api.schema import FORBIDDEN, THROTTLED_UPLOAD, error
from schedviz.api.throttling import ScopedRateThrottle
from schedviz.api.viewsets import OwnedViewSet, choice, request_user

from . import serializers as s
from .models import Snapshot
from .parsing import UploadError
from .services import create_snapshot


def upload_error(exc: UploadError) -> ApiError:
    """An upload's problems as the API's 400 (``invalid_upload``), each with its document, object and field."""
    return ApiError(str(exc), code="invalid_upload", details=exc.as_dicts())


@extend_schema(tags=["snapshots"])
class SnapshotViewSet(
    OwnedViewSet, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin
):
    """Cluster snapshots: yours and your teams' (another user's ids answer 404)."""

    model = Snapshot
    serializer_class = s.SnapshotSerializer

    def get_queryset(self) -> QuerySet[Any]:
        qs = super().get_queryset()
        # megabytes per row: the listings and details never show them, and the summary is read (once per
        # process) only when its decoded copy is not cached
        return qs.defer("objects_blob", "summary_blob")

    @extend_schema(responses={204: None, 403: FORBIDDEN})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Delete a snapshot with its replays and reports."""
        return super().destroy(request, *args, **kwargs)

    def get_throttles(self) -> list[Any]:
        if self.action == "create":
            self.throttle_scope = "uploads"
            return [ScopedRateThrottle()]
        return super().get_throttles()

    @extend_schema(
        request=s.SnapshotUploadSerializer,
        responses={
            201: s.SnapshotSerializer,
            200: OpenApiResponse(
                s.SnapshotSerializer, description="The same content was stored before: that snapshot"
            ),
            400: error(
                "Invalid upload (`invalid_upload`: `details` lists each problem with its document, "
                "object and field) or invalid form fields (`invalid`)."
            ),
            429: THROTTLED_UPLOAD,
        },
    )
    def create(self, request: Request) -> Response:
        """Upload manifests; the same content twice answers 200 with the snapshot already stored.

        With ``team`` (the id of a team you belong to) the snapshot is shared with that team.
        """
        form = s.SnapshotUploadSerializer(data=request.data, context={"user": request_user(request)})
        form.is_valid(raise_exception=True)
        data: dict[str, Any] = form.validated_data
        if data.get("file") is not None:
            f = data["file"]
            payload, filename = f.read(), f.name or "upload"
        else:
            payload, filename = data["content"].encode("utf-8"), "content.yaml"
        config_text = data.get("config")
        if data.get("config_file") is not None:
            config_text = data["config_file"].read().decode("utf-8", errors="replace")
        try:
            snap, created = create_snapshot(
                request_user(request),
                payload,
                filename,
                name=data.get("name", ""),
                config_text=config_text,
                team=data.get("team"),
            )
        except UploadError as exc:
            raise upload_error(exc) from None
        body = s.SnapshotSerializer(snap).data
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(responses=s.SnapshotNodeSerializer(many=True))
    @action(detail=True, methods=["get"])
    def nodes(self, request: Request, pk: str | None = None) -> Response:
        """Nodes with allocatable and requested resources, taints, zone."""
        return self._listing(self.get_object().summary().get("nodes", []))

    @extend_schema(
        parameters=[OpenApiParameter("state", str, enum=["running", "pending", "finished"])],
        responses=s.SnapshotPodSerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def pods(self, request: Request, pk: str | None = None) -> Response:
        """Pods with their state, node, requests and priority."""
        state = choice(request, "state", ("running", "pending", "finished"))
        pods = self.get_object().summary().get("pods", [])
        if state:
            pods = [p for p in pods if p.get("state") == state]
        return self._listing(pods)

    @extend_schema(responses=s.SnapshotNamespaceSerializer(many=True))
    @action(detail=True, methods=["get"])
    def namespaces(self, request: Request, pk: str | None = None) -> Response:
        """Namespaces, declared or only named by pods, with their pod counts."""
        return self._listing(self.get_object().summary().get("namespaces", []))

    @extend_schema(
        parameters=[OpenApiParameter("kind", str)], responses=s.SnapshotObjectSerializer(many=True)
    )
    @action(detail=True, methods=["get"])
    def objects(self, request: Request, pk: str | None = None) -> Response:
        """The other objects the scheduler reads (PVCs, storage classes, ...)."""
        objs = self.get_object().summary().get("objects", [])
        kind = request.query_params.get("kind")
        if kind:
            objs = [o for o in objs if o.get("kind") == kind]
        return self._listing(objs)

    def _listing(self, items: list[Any]) -> Response:
        page = self.paginate_queryset(items)
        return self.get_paginated_response(page)
