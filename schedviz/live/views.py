"""The live clusters API (``/api/v1/clusters/``): add a cluster, follow its health and its live
timeline of replayed decisions, and freeze its mirrored state into a snapshot."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from schedviz.api.errors import ApiError
from schedviz.api.schema import FORBIDDEN, NODE_PAGE_PARAMETERS, error
from schedviz.api.throttling import ScopedRateThrottle
from schedviz.api.viewsets import OwnedViewSet, choice, field_error, request_user
from schedviz.cycles.pages import NodeQuery, cycle_page

from . import serializers as s
from . import services
from .models import LiveCluster, LiveCycle, LiveSnapshotRequest

AGREEMENTS = ("match", "tie", "diverged", "skipped")
INVALID = error(
    "Invalid fields (`invalid`, `details` names them), an unusable kubeconfig (`invalid_kubeconfig`: an exec "
    "plugin, an auth-provider or a file reference, a missing context), a cluster that refused the credentials "
    "(`cluster_unauthorized`) or the reads (`cluster_forbidden`), an unreachable one (`cluster_unreachable`), "
    "an unreadable ConfigMap (`config_map_unreadable`) or an invalid KubeSchedulerConfiguration (`invalid_config`)."
)
NO_KEY = error("No usable encryption key (`encryption_key`): set SCHEDVIZ_ENCRYPTION_KEY.")


def _live_error(exc: services.LiveError) -> ApiError:
    details = exc.details
    if details is None and exc.field:
        details = {exc.field: [str(exc)]}
    return ApiError(str(exc), code=exc.code, details=details, status_code=exc.status)


def _read_text(data: dict[str, Any], file_field: str, text_field: str) -> str | bytes | None:
    f = data.get(file_field)
    if f is not None:
        content: bytes = f.read()
        return content
    text = data.get(text_field)
    return text if text else None


@extend_schema(tags=["live clusters"])
class LiveClusterViewSet(
    OwnedViewSet, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin
):
    """Watched clusters: yours and your teams' (credentials are never returned)."""

    model = LiveCluster
    serializer_class = s.LiveClusterSerializer
    owner_actions = OwnedViewSet.owner_actions | {"check"}

    def get_queryset(self) -> QuerySet[Any]:
        return super().get_queryset().defer("credentials", "checkpoint_blob", "config_text")

    def get_throttles(self) -> list[Any]:
        if self.action in ("create", "contexts", "check"):
            self.throttle_scope = "uploads"
            return [ScopedRateThrottle()]
        return super().get_throttles()

    @extend_schema(
        request={
            "multipart/form-data": s.LiveClusterWriteSerializer,
            "application/json": s.LiveClusterWriteSerializer,
        },
        responses={201: s.LiveClusterSerializer, 400: INVALID, 503: NO_KEY},
    )
    def create(self, request: Request) -> Response:
        """Add a cluster to watch, from an uploaded kubeconfig (one context), a kubeconfig on the server,
        or SchedViz's in-cluster ServiceAccount. It is reached (and its ConfigMap read) before it is saved
        unless `verify` is false; the credentials are stored encrypted."""
        form = s.LiveClusterWriteSerializer(data=request.data, context={"user": request_user(request)})
        form.is_valid(raise_exception=True)
        d = form.validated_data
        if not d.get("source"):
            raise ApiError(
                "source: required (kubeconfig, path or in-cluster)",
                code="invalid",
                details={"source": ["required"]},
            )
        config_text = _read_text(d, "config_file", "config")
        try:
            cluster = services.create_cluster(
                request_user(request),
                name=d.get("name", ""),
                credentials=services.Credentials(
                    d["source"],
                    _read_text(d, "kubeconfig", "kubeconfig_text"),
                    d.get("context", ""),
                    d.get("path", ""),
                ),
                config_source=d.get("config_source") or "default",
                config_text=config_text.decode("utf-8", errors="replace")
                if isinstance(config_text, bytes)
                else (config_text or ""),
                config_map=d.get("config_map", ""),
                config_map_key=d.get("config_map_key", ""),
                all_nodes=d.get("all_nodes", True),
                team=d.get("team"),
                verify=d.get("verify", True),
                enabled=d.get("enabled", True),
            )
        except services.LiveError as exc:
            raise _live_error(exc) from None
        return Response(s.LiveClusterSerializer(cluster).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request={
            "multipart/form-data": s.LiveClusterWriteSerializer,
            "application/json": s.LiveClusterWriteSerializer,
        },
        responses={200: s.LiveClusterSerializer, 400: INVALID, 403: FORBIDDEN, 503: NO_KEY},
    )
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        """Change a cluster: name, team, enabled, all_nodes, its credentials (source and kubeconfig/path) or
        its configuration (config_source and the fields it needs). The worker restarts its watch when
        credentials, configuration or all_nodes change."""
        cluster = self.get_object()
        form = s.LiveClusterWriteSerializer(data=request.data, context={"user": request_user(request)})
        form.is_valid(raise_exception=True)
        d = form.validated_data
        changes: dict[str, Any] = {k: d[k] for k in ("name", "enabled", "all_nodes") if k in d}
        if "team" in request.data:
            changes["team"] = d.get("team")
        if d.get("source"):
            changes["credentials"] = services.Credentials(
                d["source"],
                _read_text(d, "kubeconfig", "kubeconfig_text"),
                d.get("context", ""),
                d.get("path", ""),
            )
        if d.get("config_source"):
            text = _read_text(d, "config_file", "config")
            changes.update(
                config_source=d["config_source"],
                config_text=text.decode("utf-8", errors="replace")
                if isinstance(text, bytes)
                else (text or ""),
                config_map=d.get("config_map", ""),
                config_map_key=d.get("config_map_key", ""),
            )
        try:
            cluster = services.update_cluster(cluster, changes, verify=d.get("verify", True))
        except services.LiveError as exc:
            raise _live_error(exc) from None
        return Response(s.LiveClusterSerializer(cluster).data)

    @extend_schema(responses={204: None, 403: FORBIDDEN})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Stop watching a cluster and delete it with its timeline (snapshots taken of it stay)."""
        return super().destroy(request, *args, **kwargs)

    @extend_schema(
        request={
            "multipart/form-data": s.ContextsRequestSerializer,
            "application/json": s.ContextsRequestSerializer,
        },
        responses={200: s.ContextsSerializer, 400: INVALID},
    )
    @action(detail=False, methods=["post"], url_path="kubeconfig-contexts")
    def contexts(self, request: Request) -> Response:
        """The contexts of a kubeconfig, to choose one (nothing is stored), each saying whether it can be used."""
        form = s.ContextsRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        text = _read_text(form.validated_data, "kubeconfig", "kubeconfig_text")
        assert text is not None
        try:
            return Response(services.kubeconfig_contexts(text))
        except services.LiveError as exc:
            raise _live_error(exc) from None

    @extend_schema(
        request=None, responses={200: s.ConnectionSerializer, 400: INVALID, 403: FORBIDDEN, 503: NO_KEY}
    )
    @action(detail=True, methods=["post"])
    def check(self, request: Request, pk: str | None = None) -> Response:
        """Connect to the cluster now with its stored credentials: its version, or why it cannot be reached."""
        try:
            return Response(services.check_connection(self.get_object()))
        except services.LiveError as exc:
            raise _live_error(exc) from None

    @extend_schema(responses=s.LiveHealthSerializer)
    @action(detail=True, methods=["get"])
    def health(self, request: Request, pk: str | None = None) -> Response:
        """The watch's health: the cluster's state, and per stream (kind) its state, resourceVersion,
        lists and relists, 410s, reconnects, errors and the last one."""
        c = self.get_object()
        h = c.health or {}
        alive = c.worker_alive
        body = {
            "status": c.status if alive or c.status in ("error", "stopped", "pending") else "stopped",
            "message": c.status_message
            if alive or c.status_message
            else "no worker is watching this cluster",
            "worker": {
                "id": c.worker,
                "alive": alive,
                "leaseExpires": c.lease_expires,
                "heartbeat": c.heartbeat,
            },
            "streams": h.get("streams", []),
            "config": h.get("config") or c.config_notes or None,
            "configError": h.get("configError"),
            "queue": h.get("queue", 0),
            "waitingFor": h.get("waitingFor"),
            "droppedEvents": h.get("droppedEvents", 0),
            "lastDropped": h.get("lastDropped"),
            "processed": h.get("processed", 0),
            "failures": h.get("failures", 0),
            "lastFailure": h.get("lastFailure"),
            "objects": h.get("objects", 0),
            "restoredAt": h.get("restoredAt"),
            "startedAt": h.get("startedAt"),
            "updatedAt": c.heartbeat,
        }
        return Response(s.LiveHealthSerializer(body).data)

    @extend_schema(
        parameters=[
            OpenApiParameter("agreement", str, enum=list(AGREEMENTS)),
            OpenApiParameter("divergence", str, description="Main explanation code (tie, stale-state, ...)"),
            OpenApiParameter("trigger", str, enum=["bound", "failed"]),
            OpenApiParameter("result", str, description="The replay's result"),
            OpenApiParameter("namespace", str),
            OpenApiParameter("pod", str, description="namespace/name"),
            OpenApiParameter("node", str, description="The node the cluster chose"),
            OpenApiParameter("after", int, description="Only cycles after this seq"),
        ],
        responses=s.LiveCycleSerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def cycles(self, request: Request, pk: str | None = None) -> Response:
        """The live timeline: each decision of the cluster, its replay and the comparison, newest last."""
        cluster = self.get_object()
        qs = LiveCycle.objects.filter(cluster=cluster).defer("payload", "explanation").order_by("seq")
        params = request.query_params
        for name, value in (
            ("agreement", choice(request, "agreement", AGREEMENTS)),
            ("trigger", choice(request, "trigger", ("bound", "failed"))),
        ):
            if value:
                qs = qs.filter(**{name: value})
        for name, fld in (
            ("divergence", "divergence"),
            ("result", "result"),
            ("namespace", "namespace"),
            ("pod", "pod"),
            ("node", "actual_node"),
        ):
            if params.get(name):
                qs = qs.filter(**{fld: params[name]})
        if params.get("after"):
            try:
                qs = qs.filter(seq__gt=int(params["after"]))
            except ValueError:
                raise field_error("after: must be an integer") from None
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(s.LiveCycleSerializer(page, many=True).data)

    @extend_schema(
        parameters=NODE_PAGE_PARAMETERS,
        responses={
            200: s.LiveCycleDetailSerializer,
            409: error(
                "The decision could not be replayed (`not_replayed`): `details.live` is its comparison, with the error."
            ),
        },
    )
    @action(detail=True, methods=["get"], url_path=r"cycles/(?P<seq>[0-9]+)")
    def cycle(self, request: Request, pk: str | None = None, seq: str = "") -> Response:
        """One live cycle as a replay's cycle page (stages, every node's verdict and scores, by page) plus
        `live`: what the cluster did, the agreement and the explanations."""
        cluster = self.get_object()
        row = LiveCycle.objects.select_related("nodeset").filter(cluster=cluster, seq=int(seq)).first()
        if row is None:
            raise ApiError(
                f"no cycle {seq:.20} in this cluster's timeline", code="not_found", status_code=404
            )
        live = services.cycle_detail(row)
        if row.payload is None:
            raise ApiError(
                f"cycle {row.seq} could not be replayed: {row.error or 'no record'}",
                code="not_replayed",
                details={"live": s.LiveComparisonSerializer(live).data},
                status_code=409,
            )
        try:
            q = NodeQuery.from_params(request.query_params)
        except ValueError as exc:
            raise field_error(str(exc)) from None
        rec, reasons = row.decoded()
        if q.plugin and q.plugin not in rec.filter_plugin_names:
            names = ", ".join(rec.filter_plugin_names) or "none"
            raise field_error(f"plugin: {q.plugin[:60]!r} is not a filter plugin of this cycle ({names})")
        return Response({**cycle_page(rec, reasons, row.node_names(), q), "live": live})

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "node",
                str,
                many=True,
                description="Nodes to compare with the winner (repeatable); those the stored explanation "
                "does not compare are compared from the stored cycle",
            )
        ],
        responses={
            200: s.LiveExplanationSerializer,
            400: error("A `node` the cycle does not have."),
            404: error("No such cluster, or no such cycle in its timeline."),
            409: error(
                "The decision could not be replayed (`not_replayed`), or its cycle was stored without an "
                "explanation (`no_explanation`: `details.reason` says why); `details.live` is its comparison."
            ),
        },
    )
    @action(detail=True, methods=["get"], url_path=r"cycles/(?P<seq>[0-9]+)/explain")
    def cycle_explain(self, request: Request, pk: str | None = None, seq: str = "") -> Response:
        """Why here? The decision's cycle explained when the worker replayed it, on the same state: the
        winner against the runner-up and the cluster's node plugin by plugin, the rejected nodes by
        reason, the checked fixes and suggestions (as a replay's explain answers), plus `live`."""
        cluster = self.get_object()
        row = LiveCycle.objects.select_related("nodeset").filter(cluster=cluster, seq=int(seq)).first()
        if row is None:
            raise ApiError(
                f"no cycle {seq:.20} in this cluster's timeline", code="not_found", status_code=404
            )
        live = s.LiveComparisonSerializer(services.cycle_detail(row)).data
        if row.payload is None:
            raise ApiError(
                f"cycle {row.seq} could not be replayed: {row.error or 'no record'}",
                code="not_replayed",
                details={"live": live},
                status_code=409,
            )
        stored = row.explained()
        if stored is None:
            reason = row.explanation_error or "the cycle was stored without one"
            raise ApiError(
                f"cycle {row.seq} has no explanation: {reason}",
                code="no_explanation",
                details={"reason": reason, "live": live},
                status_code=409,
            )
        try:
            body = services.cycle_explanation(row, stored, request.query_params.getlist("node"))
        except services.LiveError as exc:
            raise field_error(str(exc)) from None
        return Response({**body, "live": live})

    @extend_schema(responses=s.DivergencesSerializer)
    @action(detail=True, methods=["get"])
    def divergences(self, request: Request, pk: str | None = None) -> Response:
        """Agreement counts, divergences by explanation, and the 50 most recent divergent cycles."""
        cluster = self.get_object()
        recent = (
            LiveCycle.objects.filter(cluster=cluster)
            .exclude(agreement="match")
            .defer("payload", "explanation")
            .order_by("-seq")[:50]
        )
        return Response(
            {"summary": services.summary(cluster), "recent": s.LiveCycleSerializer(recent, many=True).data}
        )

    @extend_schema(
        request=s.SnapshotRequestCreateSerializer,
        responses={
            201: OpenApiResponse(
                s.SnapshotRequestSerializer, description="The snapshot was taken within `wait` seconds"
            ),
            202: OpenApiResponse(
                s.SnapshotRequestSerializer, description="Not yet: poll GET .../snapshots/<request id>/"
            ),
            409: error("No worker is watching the cluster (`not_watching`)."),
            422: error("The worker could not freeze the state (`snapshot_failed`)."),
        },
    )
    @action(detail=True, methods=["post"])
    def snapshot(self, request: Request, pk: str | None = None) -> Response:
        """Snapshot now: the worker freezes the mirrored state (and the configuration replays use) into a
        normal snapshot, owned by you, for what-if replays."""
        cluster = self.get_object()
        form = s.SnapshotRequestCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            req = services.request_snapshot(cluster, request_user(request), form.validated_data.get("name", ""))
        except services.LiveError as exc:
            raise _live_error(exc) from None
        req = services.wait_snapshot(req, form.validated_data.get("wait", 10.0))
        return self._snapshot_answer(req, created=True)

    @extend_schema(
        parameters=[OpenApiParameter("request_id", OpenApiTypes.UUID, OpenApiParameter.PATH)],
        responses={
            200: OpenApiResponse(s.SnapshotRequestSerializer, description="Done: the snapshot"),
            202: OpenApiResponse(s.SnapshotRequestSerializer, description="Still pending: poll again"),
            422: error("The worker could not freeze the state (`snapshot_failed`)."),
        },
    )
    @action(detail=True, methods=["get"], url_path=r"snapshots/(?P<request_id>[^/.]+)")
    def snapshot_request(self, request: Request, pk: str | None = None, request_id: str = "") -> Response:
        """A "snapshot now" request: pending, done (with the snapshot) or failed."""
        cluster = self.get_object()
        try:
            rid = uuid.UUID(request_id)
        except ValueError:
            raise field_error(f"request_id: must be a UUID, got {request_id[:40]!r}") from None
        req = LiveSnapshotRequest.objects.filter(cluster=cluster, requested_by=request_user(request), pk=rid).first()
        if req is None:
            raise ApiError(
                f"no snapshot request {request_id} of yours for this cluster",
                code="not_found",
                status_code=404,
            )
        return self._snapshot_answer(req, created=False)

    def _snapshot_answer(self, req: LiveSnapshotRequest, *, created: bool) -> Response:
        if req.status == LiveSnapshotRequest.Status.FAILED:
            raise ApiError(req.error, code="snapshot_failed", details={"id": str(req.pk)}, status_code=422)
        body = s.SnapshotRequestSerializer(req).data
        if req.status == LiveSnapshotRequest.Status.DONE:
            return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Retry-After": "1"})
