"""API views: parse the request, apply the ownership rule, delegate to the domain modules."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.generics import get_object_or_404
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response

from schedviz.accounts.models import ApiToken
from schedviz.accounts.ownership import visible
from schedviz.api.throttling import ScopedRateThrottle
from schedviz.cycles.pages import NodeQuery, cycle_page
from schedviz.engine.errors import ConfigError, InputError
from schedviz.engine.trace import RESULTS
from schedviz.ingestion.models import Snapshot
from schedviz.ingestion.parsing import UploadError
from schedviz.ingestion.services import create_snapshot, validate_config_text
from schedviz.replays import services as replay_services
from schedviz.replays.models import Configuration, Cycle, Replay, Report

from . import serializers as s
from .errors import ApiError
from .schema import NODE_PAGE_PARAMETERS, SchedVizAutoSchema, error

# rest_framework.generics.get_object_or_404 answers 404 for a malformed id too (not a 500)

FORBIDDEN = error("You can read this object (it is shared with your team) but only its owner can change it.")
INVALID_CONFIG = (
    "an invalid KubeSchedulerConfiguration (`invalid_config`: `details.problems` lists the problems)"
)
THROTTLED_UPLOAD = error(
    "Too many uploads (the `uploads` throttle scope); `Retry-After` says when to try again."
)


def _user(request: Request) -> Any:
    """The authenticated user (every view here requires authentication)."""
    return request.user


def _upload_error(exc: UploadError) -> ApiError:
    return ApiError(str(exc), code="invalid_upload", details=exc.as_dicts())


def _config_error(exc: ConfigError | InputError) -> ApiError:
    problems = getattr(exc, "problems", None) or [str(exc)]
    return ApiError(
        "invalid KubeSchedulerConfiguration", code="invalid_config", details={"problems": problems}
    )


def _field_error(message: str) -> ApiError:
    """A 400 for a message of the form "field: problem", with ``details`` naming the field."""
    field, sep, problem = message.partition(": ")
    details = {field: [problem]} if sep and field.isidentifier() else None
    return ApiError(message, code="invalid", details=details)


def _choice(request: Request, name: str, choices: tuple[str, ...] | list[str]) -> str:
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
    """

    model: Any = None
    owner_actions = frozenset({"destroy", "update", "partial_update", "cancel", "rerun"})

    def get_queryset(self) -> QuerySet[Any]:
        return visible(self.model.objects.all(), _user(self.request))

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
        if self.action in self.owner_actions and obj.owner_id != _user(self.request).pk:
            raise ApiError(
                f"only the owner of this {self.model._meta.verbose_name} can change it (you read it as a team member)",
                code="forbidden",
                status_code=403,
            )
        return obj


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
        form = s.SnapshotUploadSerializer(data=request.data, context={"user": _user(request)})
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
                _user(request),
                payload,
                filename,
                name=data.get("name", ""),
                config_text=config_text,
                team=data.get("team"),
            )
        except UploadError as exc:
            raise _upload_error(exc) from None
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
        state = _choice(request, "state", ("running", "pending", "finished"))
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
        mode = _choice(self.request, "extenders", ("call", "skip")) or str(data.get("extenders") or "call")
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
            owner=_user(request), parsed=parsed, errors=[], **ser.validated_data
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
        return super().get_queryset().defer("node_names_blob")

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
        state = _choice(request, "status", Replay.Status.values)
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
        ser = s.ReplayCreateSerializer(data=request.data, context={"user": _user(request)})
        ser.is_valid(raise_exception=True)
        d = ser.validated_data
        snapshot = get_object_or_404(visible(Snapshot.objects.all(), _user(request)), pk=d["snapshot"])
        configuration = None
        if d.get("configuration"):
            configuration = get_object_or_404(
                visible(Configuration.objects.all(), _user(request)), pk=d["configuration"]
            )
        try:
            replay = replay_services.start_replay(
                _user(request),
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
        _choice(request, "result", RESULTS)
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
            raise _field_error(str(exc)) from None
        rec, reasons = row.decoded()
        if q.plugin and q.plugin not in rec.filter_plugin_names:
            names = ", ".join(rec.filter_plugin_names) or "none"
            raise _field_error(f"plugin: {q.plugin[:60]!r} is not a filter plugin of this cycle ({names})")
        return Response(cycle_page(rec, reasons, replay.node_names(), q))

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
            raise _field_error(str(exc)) from None

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


@extend_schema(tags=["tokens"])
class TokenViewSet(BaseViewSet, mixins.ListModelMixin, mixins.DestroyModelMixin):
    """Your API tokens (their values are never shown again after creation)."""

    serializer_class = s.TokenSerializer
    queryset = ApiToken.objects.none()  # for the schema: the real one is the user's own tokens

    def get_queryset(self) -> QuerySet[ApiToken]:
        return ApiToken.objects.filter(user=_user(self.request)).order_by("-created")

    @extend_schema(request=s.TokenCreateSerializer, responses={201: s.TokenCreatedSerializer})
    def create(self, request: Request) -> Response:
        """Create a token; its value is in the response once and never again."""
        ser = s.TokenCreateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        tok, raw = ApiToken.issue(
            _user(request), ser.validated_data["name"], ser.validated_data.get("ttl_days")
        )
        return Response({**s.TokenSerializer(tok).data, "token": raw}, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        """Revoke a token: it authenticates nothing from now on."""
        tok = get_object_or_404(self.get_queryset(), pk=pk)
        with transaction.atomic():
            if tok.revoked is None:
                from django.utils import timezone

                tok.revoked = timezone.now()
                tok.save(update_fields=["revoked"])
        return Response(status=status.HTTP_204_NO_CONTENT)


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
    return _choice(request, "format", REPORT_FORMATS) or "json"


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
                snap, _ = create_snapshot(_user(request), f.read(), f.name or "snapshot")
            except UploadError as exc:
                raise _upload_error(exc) from None
        else:
            snap = get_object_or_404(visible(Snapshot.objects.all(), _user(request)), pk=d["snapshot_id"])
        try:
            rep = create_report(
                _user(request), snap, candidate, baseline, d.get("baseline") is not None,
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
