"""API views: parse the request, apply the ownership rule, delegate to the domain modules."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle

from schedviz.accounts.models import ApiToken
from schedviz.accounts.ownership import visible
from schedviz.engine.errors import ConfigError, InputError
from schedviz.ingestion.models import Snapshot
from schedviz.ingestion.parsing import UploadError
from schedviz.ingestion.services import create_snapshot, validate_config_text
from schedviz.replays import services as replay_services
from schedviz.replays.models import Configuration, Cycle, Replay, Report
from schedviz.replays.pages import NodeQuery, cycle_page

from . import serializers as s
from .errors import ApiError


def _user(request: Request) -> Any:
    """The authenticated user (every view here requires authentication)."""
    return request.user


def _upload_error(exc: UploadError) -> ApiError:
    return ApiError(str(exc), code="invalid_upload", details=exc.as_dicts())


def _config_error(exc: ConfigError | InputError) -> ApiError:
    problems = getattr(exc, "problems", None) or [str(exc)]
    return ApiError("invalid KubeSchedulerConfiguration", code="invalid_config", details={"problems": problems})


class OwnedViewSet(viewsets.GenericViewSet):  # type: ignore[type-arg]
    """Every object comes through the ownership rule: other users' ids are 404."""

    model: Any = None

    def get_queryset(self) -> QuerySet[Any]:
        return visible(self.model.objects.all(), _user(self.request))


class SnapshotViewSet(OwnedViewSet, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin):
    model = Snapshot
    serializer_class = s.SnapshotSerializer

    def get_throttles(self) -> list[Any]:
        if self.action == "create":
            self.throttle_scope = "uploads"
            return [ScopedRateThrottle()]
        return super().get_throttles()

    @extend_schema(request=s.SnapshotUploadSerializer, responses={201: s.SnapshotSerializer, 200: s.SnapshotSerializer})
    def create(self, request: Request) -> Response:
        """Upload manifests; the same content twice answers 200 with the snapshot already stored."""
        form = s.SnapshotUploadSerializer(data=request.data)
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
                _user(request), payload, filename, name=data.get("name", ""), config_text=config_text
            )
        except UploadError as exc:
            raise _upload_error(exc) from None
        body = s.SnapshotSerializer(snap).data
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(parameters=[OpenApiParameter("page", int), OpenApiParameter("page_size", int)])
    @action(detail=True, methods=["get"])
    def nodes(self, request: Request, pk: str | None = None) -> Response:
        """Nodes with allocatable and requested resources, taints, zone."""
        return self._listing(self.get_object().summary().get("nodes", []))

    @extend_schema(parameters=[OpenApiParameter("state", str, enum=["running", "pending", "finished"])])
    @action(detail=True, methods=["get"])
    def pods(self, request: Request, pk: str | None = None) -> Response:
        pods = self.get_object().summary().get("pods", [])
        state = request.query_params.get("state")
        if state:
            pods = [p for p in pods if p.get("state") == state]
        return self._listing(pods)

    @action(detail=True, methods=["get"])
    def namespaces(self, request: Request, pk: str | None = None) -> Response:
        return self._listing(self.get_object().summary().get("namespaces", []))

    @extend_schema(parameters=[OpenApiParameter("kind", str)])
    @action(detail=True, methods=["get"])
    def objects(self, request: Request, pk: str | None = None) -> Response:
        objs = self.get_object().summary().get("objects", [])
        kind = request.query_params.get("kind")
        if kind:
            objs = [o for o in objs if o.get("kind") == kind]
        return self._listing(objs)

    def _listing(self, items: list[Any]) -> Response:
        page = self.paginate_queryset(items)
        return self.get_paginated_response(page)


class ConfigurationViewSet(
    OwnedViewSet,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
):
    model = Configuration
    serializer_class = s.ConfigurationSerializer

    def _validated(self, text: str) -> dict[str, Any]:
        try:
            return validate_config_text(text)
        except (ConfigError, InputError) as exc:
            raise _config_error(exc) from None

    def create(self, request: Request) -> Response:
        ser = s.ConfigurationSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        parsed = self._validated(ser.validated_data["text"])
        obj = Configuration.objects.create(owner=_user(request), parsed=parsed, errors=[], **ser.validated_data)
        return Response(s.ConfigurationSerializer(obj).data, status=status.HTTP_201_CREATED)

    def update(self, request: Request, pk: str | None = None) -> Response:
        obj = self.get_object()
        ser = s.ConfigurationSerializer(obj, data=request.data, partial=request.method == "PATCH")
        ser.is_valid(raise_exception=True)
        text = ser.validated_data.get("text", obj.text)
        parsed = self._validated(text)
        ser.save(parsed=parsed, errors=[])
        return Response(ser.data)

    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        return self.update(request, pk)

    @extend_schema(request=s.ConfigurationValidateSerializer, responses={200: None})
    @action(detail=False, methods=["post"])
    def validate(self, request: Request) -> Response:
        """Validate a configuration without storing it: the problems, or the profiles it defines."""
        ser = s.ConfigurationValidateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        return Response(replay_services.describe_config(ser.validated_data["text"]))


class ReplayViewSet(OwnedViewSet, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin):
    model = Replay
    serializer_class = s.ReplaySerializer

    def get_queryset(self) -> QuerySet[Any]:
        qs = super().get_queryset()
        params = self.request.query_params
        if params.get("snapshot"):
            qs = qs.filter(snapshot_id=params["snapshot"])
        if params.get("status"):
            qs = qs.filter(status=params["status"])
        return qs

    @extend_schema(request=s.ReplayCreateSerializer, responses={201: s.ReplaySerializer})
    def create(self, request: Request) -> Response:
        ser = s.ReplayCreateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        d = ser.validated_data
        snapshot = get_object_or_404(visible(Snapshot.objects.all(), _user(request)), pk=d["snapshot"])
        configuration = None
        if d.get("configuration"):
            configuration = get_object_or_404(visible(Configuration.objects.all(), _user(request)), pk=d["configuration"])
        try:
            replay = replay_services.start_replay(
                _user(request),
                snapshot,
                configuration=configuration,
                inline_config=d.get("config"),
                all_nodes=d.get("all_nodes", False),
                name=d.get("name", ""),
            )
        except (ConfigError, InputError) as exc:
            raise _config_error(exc) from None
        replay.refresh_from_db()
        return Response(s.ReplaySerializer(replay).data, status=status.HTTP_201_CREATED)

    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        replay = replay_services.cancel(self.get_object())
        return Response(s.ReplaySerializer(replay).data)

    @action(detail=True, methods=["post"])
    def rerun(self, request: Request, pk: str | None = None) -> Response:
        try:
            replay = replay_services.rerun(self.get_object())
        except replay_services.NotRerunnable as exc:
            raise ApiError(str(exc), code="conflict", status_code=409) from None
        return Response(s.ReplaySerializer(replay).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        parameters=[
            OpenApiParameter("result", str),
            OpenApiParameter("namespace", str),
            OpenApiParameter("node", str),
            OpenApiParameter("pod", str),
        ],
        responses=s.CycleSerializer(many=True),
    )
    @action(detail=True, methods=["get"])
    def cycles(self, request: Request, pk: str | None = None) -> Response:
        """The per-cycle summary (pod, result, node, message), filterable and paginated."""
        replay = self.get_object()
        qs = Cycle.objects.filter(replay=replay, attempt=replay.attempt).defer("payload").order_by("seq")
        params = request.query_params
        for field in ("result", "namespace", "node", "pod"):
            if params.get(field):
                qs = qs.filter(**{field: params[field]})
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(s.CycleSerializer(page, many=True).data)

    @extend_schema(
        parameters=[
            OpenApiParameter("page", int),
            OpenApiParameter("page_size", int),
            OpenApiParameter("sort", str, enum=["rank", "name", "verdict"]),
            OpenApiParameter("verdict", str, enum=["passed", "failed", "not-evaluated"]),
            OpenApiParameter("plugin", str),
            OpenApiParameter("search", str),
        ],
        responses={200: None},
    )
    @action(detail=True, methods=["get"], url_path=r"cycles/(?P<seq>[0-9]+)")
    def cycle(self, request: Request, pk: str | None = None, seq: str = "") -> Response:
        """One cycle: stages, and every node's verdict and score breakdown, paginated by node."""
        replay = self.get_object()
        row = get_object_or_404(Cycle.objects.filter(replay=replay, attempt=replay.attempt), seq=int(seq))
        try:
            q = NodeQuery.from_params(request.query_params)
        except ValueError as exc:
            raise ApiError(str(exc), code="invalid") from None
        rec, reasons = row.decoded()
        return Response(cycle_page(rec, reasons, replay.node_names(), q))

    @extend_schema(
        parameters=[OpenApiParameter("pod", str, required=True), OpenApiParameter("node", str, many=True)],
        responses={200: None},
    )
    @action(detail=True, methods=["get"])
    def explain(self, request: Request, pk: str | None = None) -> Response:
        """Why the pod went where it went, why other nodes were rejected, and what would make them fit."""
        replay = self.get_object()
        pod = request.query_params.get("pod", "")
        if not pod:
            raise ApiError("pod: required, as namespace/name", code="invalid")
        nodes = request.query_params.getlist("node")
        try:
            return Response(replay_services.explain(replay, pod, nodes))
        except KeyError:
            raise ApiError(f"pod {pod!r} has no cycle in this replay", code="not_found", status_code=404) from None
        except (ValueError, InputError) as exc:
            raise ApiError(str(exc), code="invalid") from None

    @extend_schema(responses={200: None})
    @action(detail=True, methods=["get"])
    def timeline(self, request: Request, pk: str | None = None) -> Response:
        """Per cycle: the pod, its result and node, and its requests (to follow allocation over time)."""
        return Response(replay_services.timeline(self.get_object()))

    @extend_schema(responses={200: None})
    @action(detail=True, methods=["get"])
    def latency(self, request: Request, pk: str | None = None) -> Response:
        """Per extension point and plugin: the time the replay spent there."""
        return Response(replay_services.latency(self.get_object()))

    @extend_schema(responses={200: None})
    @action(detail=True, methods=["get"], url_path=r"compare/(?P<other>[0-9a-f-]+)")
    def compare(self, request: Request, pk: str | None = None, other: str = "") -> Response:
        """Placement changes, newly unschedulable pods and score shifts against another replay of the same snapshot."""
        a = self.get_object()
        b = get_object_or_404(self.get_queryset(), pk=other)
        try:
            return Response(replay_services.compare(a, b))
        except ValueError as exc:
            raise ApiError(str(exc), code="conflict", status_code=409) from None


class TokenViewSet(viewsets.GenericViewSet, mixins.ListModelMixin, mixins.DestroyModelMixin):  # type: ignore[type-arg]
    serializer_class = s.TokenSerializer

    def get_queryset(self) -> QuerySet[ApiToken]:
        return ApiToken.objects.filter(user=_user(self.request)).order_by("-created")

    @extend_schema(request=s.TokenCreateSerializer, responses={201: None})
    def create(self, request: Request) -> Response:
        """Create a token; its value is in the response once and never again."""
        ser = s.TokenCreateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        tok, raw = ApiToken.issue(_user(request), ser.validated_data["name"], ser.validated_data.get("ttl_days"))
        return Response({**s.TokenSerializer(tok).data, "token": raw}, status=status.HTTP_201_CREATED)

    def destroy(self, request: Request, pk: str | None = None) -> Response:
        """Revoke a token."""
        tok = get_object_or_404(self.get_queryset(), pk=pk)
        with transaction.atomic():
            if tok.revoked is None:
                from django.utils import timezone

                tok.revoked = timezone.now()
                tok.save(update_fields=["revoked"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReportViewSet(OwnedViewSet):
    """CI reports: one call with a snapshot and a candidate configuration (and a baseline)."""

    model = Report

    def get_throttles(self) -> list[Any]:
        if self.action == "create":
            self.throttle_scope = "uploads"
            return [ScopedRateThrottle()]
        return super().get_throttles()

    @extend_schema(request=s.ReportCreateSerializer, responses={200: None, 202: None})
    def create(self, request: Request) -> Response:
        """Build a report; answers 200 with it when done within `wait` seconds, else 202 with its URL to poll."""
        from schedviz.replays.reporting import create_report, wait_for

        form = s.ReportCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        d = form.validated_data
        if d.get("snapshot") is not None:
            f = d["snapshot"]
            try:
                snap, _ = create_snapshot(_user(request), f.read(), f.name or "snapshot")
            except UploadError as exc:
                raise _upload_error(exc) from None
        else:
            snap = get_object_or_404(visible(Snapshot.objects.all(), _user(request)), pk=d["snapshot_id"])

        def read_config(field: str) -> dict[str, Any] | None:
            f = d.get(field)
            if f is None:
                return None
            try:
                return validate_config_text(f.read().decode("utf-8", errors="replace"), field)
            except (ConfigError, InputError) as exc:
                raise ApiError(
                    f"invalid KubeSchedulerConfiguration in {field}",
                    code="invalid_config",
                    details={"field": field, "problems": getattr(exc, "problems", None) or [str(exc)]},
                ) from None

        candidate = read_config("config")
        baseline = read_config("baseline")
        rep = create_report(_user(request), snap, candidate, baseline, d.get("baseline") is not None)
        rep = wait_for(rep, float(d.get("wait", 30)))
        body = self._body(request, rep)
        if rep.status == rep.Status.SUCCEEDED:
            return Response(body["report"], status=status.HTTP_200_OK)
        if rep.status == rep.Status.FAILED:
            raise ApiError(rep.error, code="report_failed", details={"id": str(rep.pk)}, status_code=422)
        return Response(body, status=status.HTTP_202_ACCEPTED)

    @extend_schema(parameters=[OpenApiParameter("format", str, enum=["json", "junit", "markdown"])], responses={200: None})
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        rep = self.get_object()
        fmt = request.query_params.get("format", "json")
        if fmt in ("junit", "markdown"):
            from django.http import HttpResponse

            from schedviz.reports import to_junit_xml, to_markdown

            if rep.status != rep.Status.SUCCEEDED or rep.result is None:
                raise ApiError(f"report is {rep.status}", code="conflict", status_code=409)
            if fmt == "junit":
                return HttpResponse(to_junit_xml(rep.result), content_type="application/xml")  # type: ignore[return-value]
            return HttpResponse(to_markdown(rep.result), content_type="text/markdown; charset=utf-8")  # type: ignore[return-value]
        if fmt != "json":
            raise ApiError("format: must be json, junit or markdown", code="invalid")
        return Response(self._body(request, rep))

    def _body(self, request: Request, rep: Any) -> dict[str, Any]:
        return {
            "id": str(rep.pk),
            "status": rep.status,
            "url": request.build_absolute_uri(f"/api/v1/reports/{rep.pk}/"),
            "report": rep.result,
            "error": rep.error or None,
        }
