"""The snapshots endpoints (``/api/v1/snapshots/``): upload manifests, read a snapshot's nodes, pods,
namespaces and objects, delete it."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
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
from .parsing import Limits, Problem, UploadError
from .services import create_snapshot, read_inline, start_upload

NOT_READY = error("The snapshot is not ready (`snapshot_not_ready`): still being read, or failed.")


def require_ready(snap: Snapshot) -> Snapshot:
    """The snapshot, if its upload has been read; else the API's 409 ``snapshot_not_ready``."""
    if snap.status != Snapshot.Status.READY:
        why = "failed: " + str((snap.error or {}).get("message", "")) if snap.status == "failed" else f"still {snap.status}"
        raise ApiError(f"snapshot {snap.pk} is not ready ({why})", code="snapshot_not_ready", status_code=409)
    return snap


def upload_error(exc: UploadError) -> ApiError:
    """An upload's problems as the API's 400 (``invalid_upload``), each with its document, object and field."""
    return ApiError(str(exc), code="invalid_upload", details=exc.as_dicts())


@extend_schema(tags=["snapshots"])
@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter(
                "status",
                str,
                enum=Snapshot.Status.values,
                description="Only snapshots in this state (`ready`: those that can be replayed)",
            )
        ]
    )
)
class SnapshotViewSet(
    OwnedViewSet, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin
):
    """Cluster snapshots: yours and your teams' (another user's ids answer 404)."""

    model = Snapshot
    serializer_class = s.SnapshotSerializer

    def get_queryset(self) -> QuerySet[Any]:
        qs = super().get_queryset()
        if self.action == "list":
            wanted = choice(self.request, "status", Snapshot.Status.values)
            if wanted:
                qs = qs.filter(status=wanted)
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
            202: OpenApiResponse(
                s.SnapshotSerializer,
                description="An upload of real size, stored as received and read on the worker: the "
                "snapshot, `status` pending. Poll `GET /api/v1/snapshots/<id>/` for its `status` "
                "(pending, parsing, ready, failed) and `progress` (bytesRead, bytesTotal, objectsParsed); "
                "once `failed`, `error` lists the problems (or `duplicate_of` names the snapshot already "
                "holding the same content) and nothing else is stored.",
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

        Small uploads are read in the request (201, or 200). Uploads of real size (over
        `SCHEDVIZ_INLINE_UPLOAD_BYTES`, 8 MiB, as received; any zstd stream; a gzip stream declaring
        more than `SCHEDVIZ_INLINE_DECOMPRESSED_BYTES`, 32 MiB, of text) are stored as received and
        read on the worker: 202 with the snapshot `pending`, to follow until `ready` or `failed`.

        With ``team`` (the id of a team you belong to) the snapshot is shared with that team.
        """
        form = s.SnapshotUploadSerializer(data=request.data, context={"user": request_user(request)})
        form.is_valid(raise_exception=True)
        data: dict[str, Any] = form.validated_data
        config_text = data.get("config")
        if data.get("config_file") is not None:
            config_text = data["config_file"].read().decode("utf-8", errors="replace")
        limits = Limits.from_env()
        if data.get("file") is not None:
            f = data["file"]
            filename = f.name or "upload"
            size = int(f.size or 0)
            if size > limits.max_upload_bytes:
                raise upload_error(
                    UploadError(
                        [
                            Problem(
                                document=filename,
                                message=f"the upload is {size} bytes; the limit is {limits.max_upload_bytes} bytes",
                            )
                        ]
                    )
                )
            f.seek(0)
            head = f.read(4)
            tail = b""
            if size >= 8:
                f.seek(size - 4)
                tail = f.read(4)
            f.seek(0)
            if not read_inline(head, tail, size, limits):
                try:
                    snap = start_upload(
                        request_user(request),
                        f.chunks(),
                        filename,
                        size,
                        name=data.get("name", ""),
                        config_text=config_text,
                        team=data.get("team"),
                        limits=limits,
                    )
                except UploadError as exc:
                    raise upload_error(exc) from None
                snap = Snapshot.objects.defer("objects_blob", "summary_blob").get(pk=snap.pk)
                return Response(s.SnapshotSerializer(snap).data, status=status.HTTP_202_ACCEPTED)
            payload = f.read()
        else:
            payload, filename = data["content"].encode("utf-8"), "content.yaml"
        try:
            snap, created = create_snapshot(
                request_user(request),
                payload,
                filename,
                name=data.get("name", ""),
                config_text=config_text,
                team=data.get("team"),
                limits=limits,
            )
        except UploadError as exc:
            raise upload_error(exc) from None
        body = s.SnapshotSerializer(snap).data
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(responses={200: s.SnapshotNodeSerializer(many=True), 409: NOT_READY})
    @action(detail=True, methods=["get"])
    def nodes(self, request: Request, pk: str | None = None) -> Response:
        """Nodes with allocatable and requested resources, taints, zone."""
        return self._listing(require_ready(self.get_object()).summary().get("nodes", []))

    @extend_schema(
        parameters=[OpenApiParameter("state", str, enum=["running", "pending", "finished"])],
        responses={200: s.SnapshotPodSerializer(many=True), 409: NOT_READY},
    )
    @action(detail=True, methods=["get"])
    def pods(self, request: Request, pk: str | None = None) -> Response:
        """Pods with their state, node, requests and priority."""
        state = choice(request, "state", ("running", "pending", "finished"))
        pods = require_ready(self.get_object()).summary().get("pods", [])
        if state:
            pods = [p for p in pods if p.get("state") == state]
        return self._listing(pods)

    @extend_schema(responses={200: s.SnapshotNamespaceSerializer(many=True), 409: NOT_READY})
    @action(detail=True, methods=["get"])
    def namespaces(self, request: Request, pk: str | None = None) -> Response:
        """Namespaces, declared or only named by pods, with their pod counts."""
        return self._listing(require_ready(self.get_object()).summary().get("namespaces", []))

    @extend_schema(
        parameters=[OpenApiParameter("kind", str)],
        responses={200: s.SnapshotObjectSerializer(many=True), 409: NOT_READY},
    )
    @action(detail=True, methods=["get"])
    def objects(self, request: Request, pk: str | None = None) -> Response:
        """The other objects the scheduler reads (PVCs, storage classes, ...)."""
        objs = require_ready(self.get_object()).summary().get("objects", [])
        kind = request.query_params.get("kind")
        if kind:
            objs = [o for o in objs if o.get("kind") == kind]
        return self._listing(objs)

    def _listing(self, items: list[Any]) -> Response:
        page = self.paginate_queryset(items)
        return self.get_paginated_response(page)
