"""The configurations, replays and reports endpoints (``/api/v1/configurations/``, ``/replays/``,
``/reports/``): parse the request, apply the ownership rule, delegate to the domain modules."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.generics import get_object_or_404
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response

from schedviz.accounts.ownership import visible
from schedviz.api.errors import ApiError
from schedviz.api.schema import FORBIDDEN, NODE_PAGE_PARAMETERS, THROTTLED_UPLOAD, error
from schedviz.api.throttling import ScopedRateThrottle
from schedviz.api.viewsets import OwnedViewSet, choice, field_error, request_user
from schedviz.cycles.pages import NodeQuery, cycle_page
from schedviz.engine.errors import ConfigError, InputError
from schedviz.engine.trace import RESULTS
from schedviz.ingestion.models import Snapshot
from schedviz.ingestion.parsing import UploadError
from schedviz.ingestion.services import create_snapshot, validate_config_text
from schedviz.ingestion.views import require_ready, upload_error

from . import serializers as s
from . import services as replay_services
from .models import Configuration, Cycle, Replay, Report

# rest_framework.generics.get_object_or_404 answers 404 for a malformed id too (not a 500)

INVALID_CONFIG = (
    "an invalid KubeSchedulerConfiguration (`invalid_config`: `details.problems` lists the problems)"
)


def _config_error(exc: ConfigError | InputError) -> ApiError:
    problems = getattr(exc, "problems", None) or [str(exc)]
    return ApiError(
        "invalid KubeSchedulerConfiguration", code="invalid_config", details={"problems": problems}
    )


@extend_schema(tags=["configurations"])
class ConfigurationViewSet(
    OwnedViewSet,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
):
    """Stored KubeSchedulerConfigurations, validated when saved."""

    model = Configuration
    serializer_class = s.ConfigurationSerializer

    def _validated(self, text: str) -> dict[str, Any]:
        data: Any = self.request.data
        mode = choice(self.request, "extenders", ("call", "skip")) or str(data.get("extenders") or "call")
        try:
            return validate_config_text(text, extenders=mode)
        except (ConfigError, InputError) as exc:
            raise _config_error(exc) from None

    @extend_schema(responses={201: s.ConfigurationSerializer, 400: error(INVALID_CONFIG)})
    def create(self, request: Request) -> Response:
        """Store a configuration; it must validate (`invalid_config` lists the problems otherwise)."""
        ser = s.ConfigurationSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        parsed = self._validated(ser.validated_data["text"])
        obj = Configuration.objects.create(
            owner=request_user(request), parsed=parsed, errors=[], **ser.validated_data
        )
        return Response(s.ConfigurationSerializer(obj).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: s.ConfigurationSerializer, 400: error(INVALID_CONFIG), 403: FORBIDDEN})
    def update(self, request: Request, pk: str | None = None) -> Response:
        obj = self.get_object()
        ser = s.ConfigurationSerializer(obj, data=request.data, partial=request.method == "PATCH")
        ser.is_valid(raise_exception=True)
        text = ser.validated_data.get("text", obj.text)
        parsed = self._validated(text)
        ser.save(parsed=parsed, errors=[])
        return Response(ser.data)

    @extend_schema(responses={200: s.ConfigurationSerializer, 400: error(INVALID_CONFIG), 403: FORBIDDEN})
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        return self.update(request, pk)

    @extend_schema(responses={204: None, 403: FORBIDDEN})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().destroy(request, *args, **kwargs)

    @extend_schema(request=s.ConfigurationValidateSerializer, responses={200: s.ConfigDescriptionSerializer})
    @action(detail=False, methods=["post"])
    def validate(self, request: Request) -> Response:
        """Validate a configuration without storing it: the problems, or the profiles it defines."""
        ser = s.ConfigurationValidateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        d = ser.validated_data
        return Response(replay_services.describe_config(d["text"], d.get("extenders", "call")))


@extend_schema(tags=["replays"])
class ReplayViewSet(OwnedViewSet, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin):
    """Replays of snapshots: status and progress, stored cycles, explain, compare."""

    model = Replay
    serializer_class = s.ReplaySerializer

    def get_queryset(self) -> QuerySet[Any]:
        # the snapshot's bulk (its objects: hundreds of MB for a production cluster) is read only by
        # what needs it, and its summary only once per process (Snapshot.summary)
        return (
            super()
            .get_queryset()
            .defer("node_names_blob")
            .select_related("snapshot")
            .defer("snapshot__objects_blob", "snapshot__summary_blob")
        )

    def filter_queryset(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.action != "list":
            return queryset
        request = self.request
        snapshot = request.query_params.get("snapshot")
        if snapshot:
            try:
                queryset = queryset.filter(snapshot_id=serializers.UUIDField().to_internal_value(snapshot))
            except serializers.ValidationError:
                raise ApiError(
                    f"snapshot: must be a snapshot id (a UUID), got {snapshot[:40]!r}",
                    code="invalid",
                    details={"snapshot": ["must be a UUID"]},
                ) from None
        state = choice(request, "status", Replay.Status.values)
        if state:
            queryset = queryset.filter(status=state)
        return queryset

    @extend_schema(
        parameters=[
            OpenApiParameter("snapshot", OpenApiTypes.UUID, description="Only replays of this snapshot"),
            OpenApiParameter("status", str, enum=Replay.Status.values),
        ]
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(responses={204: None, 403: FORBIDDEN})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Delete a replay and its stored cycles."""
        return super().destroy(request, *args, **kwargs)

    @extend_schema(
        request=s.ReplayCreateSerializer,
        responses={
            201: s.ReplaySerializer,
            400: error(f"Invalid fields (`invalid`, e.g. a team you are not in) or {INVALID_CONFIG}"),
            404: error("The snapshot or configuration is not among those you may read."),
        },
    )
    def create(self, request: Request) -> Response:
        """Replay a snapshot's pending pods under a configuration (stored, inline, or the snapshot's own)."""
        ser = s.ReplayCreateSerializer(data=request.data, context={"user": request_user(request)})
        ser.is_valid(raise_exception=True)
        d = ser.validated_data
        snapshot = require_ready(
            get_object_or_404(visible(Snapshot.objects.all(), request_user(request)), pk=d["snapshot"])
        )
        configuration = None
        if d.get("configuration"):
            configuration = get_object_or_404(
                visible(Configuration.objects.all(), request_user(request)), pk=d["configuration"]
            )
        try:
            replay = replay_services.start_replay(
                request_user(request),
                snapshot,
                configuration=configuration,
                inline_config=d.get("config"),
                all_nodes=d.get("all_nodes", False),
                preemption=d.get("preemption", "evict"),
                name=d.get("name", ""),
                team=d.get("team"),
                extenders=d.get("extenders", "call"),
            )
        except (ConfigError, InputError) as exc:
            raise _config_error(exc) from None
        replay.refresh_from_db()
        return Response(s.ReplaySerializer(replay).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: s.ReplaySerializer, 403: FORBIDDEN})
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        """Cancel: a queued replay ends at once, a running one at its next batch of cycles."""
        replay = replay_services.cancel(self.get_object())
        return Response(s.ReplaySerializer(replay).data)

    @extend_schema(
        request=None,
        responses={
            202: s.ReplaySerializer,
            403: FORBIDDEN,
            409: error(
                "The replay is queued or running (with a live worker): it can be re-run once it has ended."
            ),
        },
    )
    @action(detail=True, methods=["post"])
    def rerun(self, request: Request, pk: str | None = None) -> Response:
        """Queue an ended replay (or one whose worker stopped reporting) again, as a new attempt."""
        try:
            replay = replay_services.rerun(self.get_object())
        except replay_services.NotRerunnable as exc:
            raise ApiError(str(exc), code="conflict", status_code=409) from None
        return Response(s.ReplaySerializer(replay).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        parameters=[
            OpenApiParameter("result", str, enum=[*RESULTS]),
            OpenApiParameter("namespace", str),
            OpenApiParameter("node", str, description="The selected node"),
            OpenApiParameter("pod", str, description="namespace/name"),
        ],
        responses=s.CycleSerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def cycles(self, request: Request, pk: str | None = None) -> Response:
        """The per-cycle summary (pod, result, node, message), filterable and paginated."""
        replay = self.get_object()
        qs = Cycle.objects.filter(replay=replay, attempt=replay.attempt).defer("payload").order_by("seq")
        params = request.query_params
        choice(request, "result", RESULTS)
        for field in ("result", "namespace", "node", "pod"):
            if params.get(field):
                qs = qs.filter(**{field: params[field]})
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(s.CycleSerializer(page, many=True).data)

    @extend_schema(
        parameters=NODE_PAGE_PARAMETERS,
        responses=s.CycleDetailSerializer,
    )
    @action(detail=True, methods=["get"], url_path=r"cycles/(?P<seq>[0-9]+)")
    def cycle(self, request: Request, pk: str | None = None, seq: str = "") -> Response:
        """One cycle: stages, and every node's verdict and score breakdown, paginated by node."""
        replay = self.get_object()
        row = Cycle.objects.filter(replay=replay, attempt=replay.attempt, seq=int(seq)).first()
        if row is None:
            raise ApiError(f"no cycle {seq:.20} in this replay", code="not_found", status_code=404)
        try:
            q = NodeQuery.from_params(request.query_params)
        except ValueError as exc:
            raise field_error(str(exc)) from None
        rec, reasons = row.decoded()
        if q.plugin and q.plugin not in rec.filter_plugin_names:
            names = ", ".join(rec.filter_plugin_names) or "none"
            raise field_error(f"plugin: {q.plugin[:60]!r} is not a filter plugin of this cycle ({names})")
        return Response(cycle_page(rec, reasons, replay.node_names(), q))

    @extend_schema(
        responses={200: s.CyclePodSerializer, 404: error("No such replay or cycle.")},
    )
    @action(detail=True, methods=["get"], url_path=r"cycles/(?P<seq>[0-9]+)/pod")
    def cycle_pod(self, request: Request, pk: str | None = None, seq: str = "") -> Response:
        """What the scheduler reads of the cycle's pod: requests, node selector and affinity, tolerations,
        spread constraints, priority."""
        replay = self.get_object()
        try:
            return Response(replay_services.cycle_pod(replay, int(seq)))
        except replay_services.NoSuchCycle as exc:
            raise ApiError(str(exc), code="not_found", status_code=404) from None

    @extend_schema(
        responses={
            200: s.CycleNodeInspectionSerializer,
            400: error("A node the replay's snapshot does not have."),
            404: error("No such replay or cycle."),
        },
    )
    @action(detail=True, methods=["get"], url_path=r"cycles/(?P<seq>[0-9]+)/nodes/(?P<node>[^/]+)")
    def cycle_node(self, request: Request, pk: str | None = None, seq: str = "", node: str = "") -> Response:
        """One node as the cycle found it (its resources, taints, labels), the pod's spec, and every Filter
        plugin's verdict on it, each asked on its own (beyond what kube-scheduler ran: it stops at the first
        rejection). The replay runs again up to the cycle, bounded as replays are."""
        replay = self.get_object()
        try:
            return Response(replay_services.cycle_node(replay, int(seq), node))
        except replay_services.NoSuchCycle as exc:
            raise ApiError(str(exc), code="not_found", status_code=404) from None
        except InputError as exc:
            raise ApiError(str(exc), code="invalid", details={"node": [str(exc)]}) from None
        except ValueError as exc:
            raise field_error(str(exc)) from None

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "pod", str, required=True, description="namespace/name (a bare name is in default)"
            ),
            OpenApiParameter(
                "node", str, many=True, description="Nodes to compare with the winner (repeatable)"
            ),
        ],
        responses={
            200: s.ExplanationSerializer,
            400: error("No or malformed `pod`, an unknown `node`, or a pod that is not pending (no cycle)."),
            404: error("No such replay, or no such pod in its snapshot."),
        },
    )
    @action(detail=True, methods=["get"])
    def explain(self, request: Request, pk: str | None = None) -> Response:
        """Why the pod went where it went, why other nodes were rejected, and what would make them fit."""
        replay = self.get_object()
        pod = request.query_params.get("pod", "")
        if not pod:
            raise ApiError("pod: required, as namespace/name", code="invalid", details={"pod": ["required"]})
        nodes = request.query_params.getlist("node")
        try:
            return Response(replay_services.explain(replay, pod, nodes))
        except replay_services.UnknownPod as exc:
            raise ApiError(str(exc), code="not_found", status_code=404) from None
        except InputError as exc:
            raise ApiError(str(exc), code="invalid", details={"pod": [str(exc)]}) from None
        except ValueError as exc:
            raise field_error(str(exc)) from None

    @extend_schema(responses=s.TimelineSerializer)
    @action(detail=True, methods=["get"])
    def timeline(self, request: Request, pk: str | None = None) -> Response:
        """Per cycle: the pod, its result and node, and its requests (to follow allocation over time)."""
        return Response(replay_services.timeline(self.get_object()))

    @extend_schema(responses=s.LatencySerializer)
    @action(detail=True, methods=["get"])
    def latency(self, request: Request, pk: str | None = None) -> Response:
        """Per extension point and plugin: the time the replay spent there."""
        return Response(replay_services.latency(self.get_object()))

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "other", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The other replay"
            )
        ],
        responses={
            200: s.CompareSerializer,
            404: error("Either replay is not among those you may read."),
            409: error("The replays are of different snapshots, or one of them has not succeeded."),
        },
    )
    @action(detail=True, methods=["get"], url_path=r"compare/(?P<other>[^/.]+)")
    def compare(self, request: Request, pk: str | None = None, other: str = "") -> Response:
        """Placement changes, newly unschedulable pods and score shifts against another replay of the same snapshot."""
        a = self.get_object()
        b = get_object_or_404(self.get_queryset(), pk=other)
        try:
            return Response(replay_services.compare(a, b))
        except ValueError as exc:
            raise ApiError(str(exc), code="conflict", status_code=409) from None


REPORT_FORMATS = ("json", "junit", "markdown")
REPORT_POLL_SECONDS = 1


class ReportFormatNegotiation(DefaultContentNegotiation):
    """``?format=`` names the report's format (answered by the view itself), not a DRF renderer.

    Without this, DRF reads ``?format=junit`` as "render with the junit renderer", finds none and
    answers 404. ``json`` and ``api`` (the browsable API) keep their usual meaning; errors are JSON.
    """

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None) -> Any:
        if request.query_params.get("format") not in (None, "json", "api"):
            for renderer in renderers:
                if renderer.format == "json":
                    return renderer, renderer.media_type
        return super().select_renderer(request, renderers, format_suffix)


def _format(request: Request) -> str:
    if request.query_params.get("format") == "api":  # DRF's browsable API: the JSON answer, as HTML
        return "json"
    return choice(request, "format", REPORT_FORMATS) or "json"


def _rendered(rep: Report, fmt: str) -> HttpResponse:
    from schedviz.reports import to_junit_xml, to_markdown

    assert rep.result is not None

    if fmt == "junit":
        return HttpResponse(to_junit_xml(rep.result), content_type="application/xml; charset=utf-8")
    return HttpResponse(to_markdown(rep.result), content_type="text/markdown; charset=utf-8")


FORMAT_PARAMETER = OpenApiParameter(
    "format",
    str,
    enum=list(REPORT_FORMATS),
    description="The report as JSON (default), JUnit XML or Markdown",
)
REPORT_DOCUMENTS = {
    (200, "application/xml"): OpenApiResponse(OpenApiTypes.STR, description="?format=junit: JUnit XML"),
    (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description="?format=markdown: a PR comment"),
}


@extend_schema(tags=["reports"])
class ReportViewSet(OwnedViewSet):
    """CI reports: one call with a snapshot and a candidate configuration (and a baseline)."""

    model = Report
    content_negotiation_class = ReportFormatNegotiation

    def get_throttles(self) -> list[Any]:
        if self.action == "create":
            self.throttle_scope = "uploads"
            return [ScopedRateThrottle()]
        return super().get_throttles()

    @extend_schema(
        request={
            "multipart/form-data": s.ReportCreateSerializer,
            "application/json": s.ReportCreateSerializer,
        },
        parameters=[FORMAT_PARAMETER],
        responses={
            (200, "application/json"): OpenApiResponse(
                s.SchedulingReportSerializer,
                description="The report, when it was ready within `wait` seconds",
            ),
            **REPORT_DOCUMENTS,
            202: OpenApiResponse(
                s.ReportJobSerializer,
                description="Not ready within `wait`: poll `url` (GET); `Retry-After` suggests the delay",
            ),
            400: error(f"Invalid fields, an invalid snapshot upload (`invalid_upload`) or {INVALID_CONFIG}"),
            404: error("`snapshot_id` is not among the snapshots you may read."),
            422: error("The report could not be built (`report_failed`); `details.id` is the report's id."),
            429: THROTTLED_UPLOAD,
        },
    )
    def create(self, request: Request) -> Response:
        """Build a report; answers 200 with it when done within `wait` seconds, else 202 with its URL to poll."""
        from schedviz.replays.reporting import create_report, wait_for

        fmt = _format(request)
        form = s.ReportCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        d = form.validated_data

        def read_config(field: str) -> dict[str, Any] | None:
            f = d.get(field)
            if f is None:
                return None
            try:
                return validate_config_text(
                    f.read().decode("utf-8", errors="replace"), field, extenders=d.get("extenders", "call")
                )
            except (ConfigError, InputError) as exc:
                raise ApiError(
                    f"invalid KubeSchedulerConfiguration in {field}",
                    code="invalid_config",
                    details={"field": field, "problems": getattr(exc, "problems", None) or [str(exc)]},
                ) from None

        candidate = read_config("config")
        baseline = read_config("baseline")
        # the configurations first: a refused request stores no snapshot
        if d.get("snapshot") is not None:
            f = d["snapshot"]
            try:
                snap, _ = create_snapshot(request_user(request), f.read(), f.name or "snapshot")
            except UploadError as exc:
                raise upload_error(exc) from None
        else:
            snap = require_ready(
                get_object_or_404(visible(Snapshot.objects.all(), request_user(request)), pk=d["snapshot_id"])
            )
        try:
            rep = create_report(
                request_user(request), snap, candidate, baseline, d.get("baseline") is not None,
                extenders=d.get("extenders", "call"),
            )
        except (ConfigError, InputError) as exc:
            raise _config_error(exc) from None
        rep = wait_for(rep, float(d.get("wait", 30)))
        body = self._body(request, rep)
        if rep.status == rep.Status.SUCCEEDED:
            if fmt != "json":
                return _rendered(rep, fmt)  # type: ignore[return-value]
            return Response(body["report"], status=status.HTTP_200_OK)
        if rep.status == rep.Status.FAILED:
            raise ApiError(rep.error, code="report_failed", details={"id": str(rep.pk)}, status_code=422)
        return Response(
            body, status=status.HTTP_202_ACCEPTED, headers={"Retry-After": str(REPORT_POLL_SECONDS)}
        )

    @extend_schema(
        parameters=[FORMAT_PARAMETER],
        responses={
            (200, "application/json"): OpenApiResponse(
                s.ReportJobSerializer, description="The report's status, and the report once it succeeded"
            ),
            **REPORT_DOCUMENTS,
            409: error("?format=junit|markdown of a report that has not succeeded (yet)."),
        },
    )
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        """A report's status (poll this), with the report once it succeeded; or the report as JUnit XML or Markdown."""
        fmt = _format(request)
        rep = self.get_object()
        if fmt != "json":
            if rep.status != rep.Status.SUCCEEDED or rep.result is None:
                raise ApiError(f"report is {rep.status}: no {fmt} yet", code="conflict", status_code=409)
            return _rendered(rep, fmt)  # type: ignore[return-value]
        headers = (
            {}
            if rep.status in (rep.Status.SUCCEEDED, rep.Status.FAILED)
            else {"Retry-After": str(REPORT_POLL_SECONDS)}
        )
        return Response(self._body(request, rep), headers=headers)

    def _body(self, request: Request, rep: Any) -> dict[str, Any]:
        return {
            "id": str(rep.pk),
            "status": rep.status,
            "url": request.build_absolute_uri(f"/api/v1/reports/{rep.pk}/"),
            "report": rep.result,
            "error": rep.error or None,
        }
