"""The live clusters API's JSON shapes. Credentials are write-only: no serializer reads them."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from schedviz.accounts.serializers import TeamField
from schedviz.api.serializers import OptionalText
from schedviz.ingestion.serializers import SnapshotSerializer
from schedviz.replays.serializers import CycleDetailSerializer, ExplanationSerializer

from . import services
from .models import LiveCluster, LiveCycle, LiveSnapshotRequest

D = serializers.DictField


class LiveWorkerSerializer(serializers.Serializer[Any]):
    id = serializers.CharField(
        allow_blank=True, help_text="The worker holding the cluster's lease ('' when none)"
    )
    alive = serializers.BooleanField(help_text="A worker holds an unexpired lease")
    leaseExpires = serializers.DateTimeField(allow_null=True)
    heartbeat = serializers.DateTimeField(allow_null=True)


class LiveSummarySerializer(serializers.Serializer[Any]):
    cycles = serializers.IntegerField()
    match = serializers.IntegerField()
    tie = serializers.IntegerField()
    diverged = serializers.IntegerField()
    skipped = serializers.IntegerField(help_text="Decisions that could not be replayed (e.g. an unknown pod)")
    byCode = D(
        child=serializers.IntegerField(), help_text="Divergences (ties included) by main explanation code"
    )
    lastCycleAt = serializers.DateTimeField(allow_null=True)


class LiveClusterSerializer(serializers.ModelSerializer[LiveCluster]):
    credentials_stored = serializers.SerializerMethodField(
        help_text="Whether credentials are stored (never their value)"
    )
    worker = serializers.SerializerMethodField()
    summary = serializers.SerializerMethodField()

    class Meta:
        model = LiveCluster
        fields = [
            "id",
            "name",
            "source",
            "context",
            "path",
            "server",
            "credential_kind",
            "credentials_stored",
            "config_source",
            "config_map",
            "config_map_key",
            "config_notes",
            "all_nodes",
            "enabled",
            "team",
            "created",
            "updated",
            "status",
            "status_message",
            "worker",
            "summary",
            "checkpoint_at",
        ]
        read_only_fields = fields

    def get_credentials_stored(self, obj: LiveCluster) -> bool:
        return obj.source != LiveCluster.Source.KUBECONFIG or bool(obj.credentials)

    @staticmethod
    def _worker(obj: LiveCluster) -> dict[str, Any]:
        return {
            "id": obj.worker,
            "alive": obj.worker_alive,
            "leaseExpires": obj.lease_expires,
            "heartbeat": obj.heartbeat,
        }

    @extend_schema_field(LiveWorkerSerializer)
    def get_worker(self, obj: LiveCluster) -> dict[str, Any]:
        data: dict[str, Any] = LiveWorkerSerializer(self._worker(obj)).data
        return data

    @extend_schema_field(LiveSummarySerializer)
    def get_summary(self, obj: LiveCluster) -> dict[str, Any]:
        data: dict[str, Any] = LiveSummarySerializer(services.summary(obj)).data
        return data


class LiveClusterWriteSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=LiveCluster.Source.choices,
        required=False,
        help_text="kubeconfig (uploaded), path (a kubeconfig on the server, under SCHEDVIZ_KUBECONFIG_DIRS) "
        "or in-cluster (SchedViz's own ServiceAccount)",
    )
    kubeconfig = serializers.FileField(
        required=False, help_text="source=kubeconfig: the file (exec plugins and file references are refused)"
    )
    kubeconfig_text = serializers.CharField(
        required=False, trim_whitespace=False, write_only=True, help_text="...or its text"
    )
    context = serializers.CharField(  # type: ignore[assignment]
        required=False, allow_blank=True, max_length=253, help_text="Default: the current context"
    )
    path = serializers.CharField(required=False, allow_blank=True, max_length=1024)
    config_source = serializers.ChoiceField(choices=LiveCluster.ConfigSource.choices, required=False)
    config = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="config_source=uploaded: a KubeSchedulerConfiguration",
    )
    config_file = serializers.FileField(required=False, help_text="...or as a file")
    config_map = serializers.CharField(
        required=False, allow_blank=True, max_length=320, help_text="config_source=configmap: namespace/name"
    )
    config_map_key = serializers.CharField(
        required=False, allow_blank=True, max_length=253, help_text="Its key (needed when it has several)"
    )
    all_nodes = serializers.BooleanField(
        required=False,
        help_text="Filter and score every node (default true); false samples as kube-scheduler does",
    )
    enabled = serializers.BooleanField(required=False)
    verify = serializers.BooleanField(
        required=False, default=True, help_text="Connect before saving (default true)"
    )
    team = TeamField()


class ContextsRequestSerializer(serializers.Serializer[Any]):
    kubeconfig = serializers.FileField(required=False)
    kubeconfig_text = serializers.CharField(required=False, trim_whitespace=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("kubeconfig") and not attrs.get("kubeconfig_text"):
            raise serializers.ValidationError(
                {"kubeconfig": ["Upload a kubeconfig file, or send its text as `kubeconfig_text`."]}
            )
        return attrs


class ContextSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    cluster = serializers.CharField()
    server = serializers.CharField()
    user = serializers.CharField()
    namespace = serializers.CharField()
    usable = serializers.BooleanField()
    problem = serializers.CharField(
        allow_null=True, help_text="Why the context cannot be used (exec plugin, file reference)"
    )


class ContextsSerializer(serializers.Serializer[Any]):
    current = serializers.CharField()
    contexts = ContextSerializer(many=True)


class ConnectionSerializer(serializers.Serializer[Any]):
    server = serializers.CharField()
    version = serializers.CharField(help_text="The API server's gitVersion")


class StreamHealthSerializer(serializers.Serializer[Any]):
    stream = serializers.CharField(help_text="Kind, or Event/<reason> for the scheduler's events")
    kind = serializers.CharField()
    state = serializers.ChoiceField(
        choices=["starting", "listing", "watching", "backoff", "error", "unavailable", "stopped"]
    )
    since = serializers.FloatField(help_text="Unix time of the last state change")
    resourceVersion = serializers.CharField(allow_blank=True)
    synced = serializers.BooleanField()
    objects = serializers.IntegerField()
    lists = serializers.IntegerField()
    relists = serializers.IntegerField()
    expired = serializers.IntegerField(help_text="410 Gone received")
    events = serializers.IntegerField()
    bookmarks = serializers.IntegerField()
    reconnects = serializers.IntegerField()
    errors = serializers.IntegerField()  # type: ignore[assignment]
    lastError = serializers.CharField(allow_null=True)
    lastErrorAt = serializers.FloatField(allow_null=True)
    lastEventAt = serializers.FloatField(allow_null=True)
    lastListAt = serializers.FloatField(allow_null=True)
    retryAt = serializers.FloatField(allow_null=True)


class LiveHealthSerializer(serializers.Serializer[Any]):
    status = serializers.CharField(help_text="pending, starting, syncing, watching, degraded, error, stopped")
    message = serializers.CharField(allow_blank=True)
    worker = LiveWorkerSerializer()
    streams = StreamHealthSerializer(many=True)
    config = D(allow_null=True, help_text="source, configMap, key, profiles, unknownPlugins, extenders")
    configError = serializers.CharField(allow_null=True)
    queue = serializers.IntegerField(help_text="Decisions waiting to be replayed")
    waitingFor = serializers.CharField(
        allow_null=True,
        help_text="The streams the next decision waits for (not caught up with its resourceVersion yet)",
    )
    droppedEvents = serializers.IntegerField(
        help_text="Scheduling events found by a relist and left out as too old (by the cluster's clock)"
    )
    lastDropped = serializers.CharField(allow_null=True, help_text="The last of them, and how old it was")
    processed = serializers.IntegerField()
    failures = serializers.IntegerField()
    lastFailure = serializers.CharField(allow_null=True)
    objects = serializers.IntegerField(help_text="Objects in the mirrored state")
    restoredAt = serializers.FloatField(allow_null=True, help_text="Started from a checkpoint written then")
    startedAt = serializers.FloatField(allow_null=True)
    updatedAt = serializers.DateTimeField(allow_null=True)


class LiveCycleSerializer(serializers.ModelSerializer[LiveCycle]):
    node = OptionalText()
    message = OptionalText()
    actual_node = OptionalText()
    actual_message = OptionalText()

    class Meta:
        model = LiveCycle
        fields = [
            "seq",
            "pod",
            "namespace",
            "trigger",
            "trigger_source",
            "observed",
            "occurred",
            "resource_version",
            "actual_result",
            "actual_node",
            "actual_message",
            "actual_scheduler",
            "profile",
            "result",
            "node",
            "message",
            "tied_count",
            "feasible_count",
            "evaluated_count",
            "winner_total",
            "agreement",
            "divergence",
            "explanations",
            "notes",
            "exact",
            "gap",
            "error",
        ]
        read_only_fields = fields


class ExplanationItemSerializer(serializers.Serializer[Any]):
    code = serializers.CharField(
        help_text="tie, stale-state, missing-plugin, extender, different-scheduler, sampling, filter, score, result, message, error"
    )
    message = serializers.CharField()
    details = D(required=False)


class LiveActualSerializer(serializers.Serializer[Any]):
    result = serializers.CharField()
    node = serializers.CharField(allow_null=True)
    message = serializers.CharField(allow_null=True)
    scheduler = serializers.CharField(allow_null=True)


class LiveReplayResultSerializer(serializers.Serializer[Any]):
    result = serializers.CharField(allow_null=True)
    node = serializers.CharField(allow_null=True)
    message = serializers.CharField(allow_null=True)
    tiedCount = serializers.IntegerField()


class LiveComparisonSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    pod = serializers.CharField()
    trigger = serializers.CharField()
    triggerSource = serializers.CharField()
    observed = serializers.DateTimeField()
    occurred = serializers.DateTimeField(allow_null=True)
    resourceVersion = serializers.CharField(
        allow_null=True, help_text="The change that revealed the decision: the timeline is in its order"
    )
    actual = LiveActualSerializer()
    replay = LiveReplayResultSerializer()
    agreement = serializers.ChoiceField(choices=["match", "tie", "diverged", "skipped"])
    divergence = serializers.CharField(allow_null=True)
    explanations = ExplanationItemSerializer(many=True)
    notes = serializers.ListField(child=serializers.CharField())
    exact = serializers.BooleanField()
    gap = serializers.BooleanField()
    error = serializers.CharField(allow_null=True)


class LiveCycleDetailSerializer(CycleDetailSerializer):
    live = LiveComparisonSerializer()


class LiveExplanationSerializer(ExplanationSerializer):
    live = LiveComparisonSerializer()


class DivergencesSerializer(serializers.Serializer[Any]):
    summary = LiveSummarySerializer()
    recent = LiveCycleSerializer(many=True)


class SnapshotRequestCreateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    wait = serializers.FloatField(
        required=False, default=10.0, min_value=0, max_value=60, help_text="Seconds to wait for the worker"
    )


class SnapshotRequestSerializer(serializers.ModelSerializer[LiveSnapshotRequest]):
    snapshot = SnapshotSerializer(read_only=True, allow_null=True)
    cluster = serializers.UUIDField(source="cluster_id", read_only=True)

    class Meta:
        model = LiveSnapshotRequest
        fields = ["id", "cluster", "name", "status", "snapshot", "error", "created", "finished"]
        read_only_fields = fields
