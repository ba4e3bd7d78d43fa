"""The configurations, replays and reports endpoints' JSON shapes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from schedviz.accounts.serializers import TeamField
from schedviz.api.serializers import OptionalText

from .models import Configuration, Cycle, Replay

EXTENDERS_HELP = (
    'call (default): refuse a configuration whose extenders this server may not call (their URLs '
    "are not under SCHEDVIZ_EXTENDER_URLS); skip: run without those extenders, named in "
    "options.extendersNotCalled"
)


def extenders_field() -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=["call", "skip"], required=False, default="call", help_text=EXTENDERS_HELP)


class ConfigurationSerializer(serializers.ModelSerializer[Configuration]):
    valid = serializers.BooleanField(read_only=True)

    class Meta:
        model = Configuration
        fields = ["id", "name", "text", "parsed", "errors", "valid", "created", "updated"]
        read_only_fields = ["id", "parsed", "errors", "valid", "created", "updated"]


class ConfigurationValidateSerializer(serializers.Serializer[Any]):
    text = serializers.CharField(trim_whitespace=False)
    extenders = extenders_field()


class ReplayCreateSerializer(serializers.Serializer[Any]):
    snapshot = serializers.UUIDField()
    configuration = serializers.UUIDField(required=False, allow_null=True)
    config = serializers.JSONField(
        required=False, allow_null=True, help_text="An inline KubeSchedulerConfiguration"
    )
    all_nodes = serializers.BooleanField(required=False, default=False)
    preemption = serializers.ChoiceField(
        choices=["evict", "dry-run"],
        required=False,
        default="evict",
        help_text="evict: a successful preemption deletes its victims and the preemptor is retried; "
        "dry-run: preemption is only recorded",
    )
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    team = TeamField(
        help_text="Share with this team (its id; you must be a member). Default: the snapshot's team"
    )
    extenders = extenders_field()


class ReplaySerializer(serializers.ModelSerializer[Replay]):
    snapshot = serializers.UUIDField(source="snapshot_id", read_only=True)
    configuration = serializers.UUIDField(source="configuration_id", read_only=True, allow_null=True)
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Replay
        fields = [
            "id",
            "name",
            "snapshot",
            "configuration",
            "config",
            "options",
            "status",
            "reason",
            "attempt",
            "cycles_done",
            "cycles_total",
            "progress",
            "created",
            "started",
            "finished",
            "summary",
            "team",
        ]
        read_only_fields = fields

    def get_progress(self, obj: Replay) -> float:
        if obj.cycles_total <= 0:
            return 1.0 if obj.status == Replay.Status.SUCCEEDED else 0.0
        return round(obj.cycles_done / obj.cycles_total, 4)


class CycleSerializer(serializers.ModelSerializer[Cycle]):
    # null, not "", when there is none: as the cycle's detail, the stream and the report say it
    node = OptionalText()
    message = OptionalText()
    nominated_node = OptionalText()

    class Meta:
        model = Cycle
        fields = [
            "seq",
            "pod",
            "namespace",
            "profile",
            "result",
            "node",
            "message",
            "nominated_node",
            "feasible_count",
            "evaluated_count",
            "tied_count",
            "winner_total",
        ]
        read_only_fields = fields


class ReportCreateSerializer(serializers.Serializer[Any]):
    snapshot = serializers.FileField(required=False, help_text="Manifests to replay (or give snapshot_id)")
    snapshot_id = serializers.UUIDField(required=False)
    config = serializers.FileField(required=False, help_text="The candidate KubeSchedulerConfiguration")
    baseline = serializers.FileField(required=False, help_text="The baseline configuration to compare with")
    wait = serializers.FloatField(required=False, min_value=0, max_value=300, default=30)
    extenders = extenders_field()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("snapshot") and not attrs.get("snapshot_id"):
            raise serializers.ValidationError({"snapshot": ["Upload a snapshot file or give snapshot_id."]})
        return attrs


# ----- response shapes ---------------------------------------------------------------------------------
# The endpoints below answer with dicts built by the engine and the domain modules; these serializers
# describe them for the OpenAPI schema (nested engine structures are documented as free-form objects).

D = serializers.DictField


class ConfigDescriptionSerializer(serializers.Serializer[Any]):
    valid = serializers.BooleanField()
    problems = serializers.ListField(child=serializers.CharField())
    percentageOfNodesToScore = serializers.IntegerField(required=False, allow_null=True)
    profiles = serializers.ListField(
        child=D(), required=False, help_text="schedulerName, plugins per extension point, pluginArgs"
    )


class StageSerializer(serializers.Serializer[Any]):
    point = serializers.CharField()
    plugin = serializers.CharField()
    code = serializers.CharField()
    reason = serializers.CharField(allow_null=True)
    durationMicros = serializers.IntegerField()
    details = D(required=False)


class CycleNodeSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    rank = serializers.IntegerField(
        help_text="Feasible nodes by total score, then rejected, then not evaluated"
    )
    evaluated = serializers.BooleanField()
    filter = D(allow_null=True, help_text="{code, plugin, reasons}; null when not evaluated")
    scores = D(
        required=False,
        help_text="Per score plugin: {raw, normalized, weighted}, or {skipped: true}; only for scored feasible nodes",
    )
    total = serializers.IntegerField(required=False, allow_null=True)


class CycleNodePageSerializer(serializers.Serializer[Any]):
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    pageSize = serializers.IntegerField()
    results = CycleNodeSerializer(many=True)


class CycleDetailSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    pod = serializers.CharField()
    profile = serializers.CharField(allow_null=True)
    result = serializers.CharField()
    selectedNode = serializers.CharField(allow_null=True)
    tiedNodes = serializers.ListField(child=serializers.CharField())
    message = serializers.CharField(allow_null=True)
    messageBeforePostFilter = serializers.CharField(allow_null=True)
    nominatedNode = serializers.CharField(allow_null=True)
    scored = serializers.BooleanField()
    scorePlugins = serializers.ListField(child=serializers.CharField())
    scoreWeights = D(child=serializers.IntegerField())
    skippedScorePlugins = serializers.ListField(child=serializers.CharField())
    startIndex = serializers.IntegerField()
    nodesToFind = serializers.IntegerField()
    evaluatedNodes = serializers.IntegerField()
    stages = StageSerializer(many=True)
    postFilter = D(required=False)
    error = serializers.CharField(required=False)
    nodeCounts = D(child=serializers.IntegerField(), help_text="passed, failed, notEvaluated")
    rejectedBy = D(child=serializers.IntegerField(), help_text="Rejected nodes per filter plugin")
    nodes = CycleNodePageSerializer()


class ComparisonSerializer(serializers.Serializer[Any]):
    node = serializers.CharField()
    feasible = serializers.BooleanField()
    total = serializers.IntegerField(required=False, allow_null=True)
    margin = serializers.IntegerField(
        required=False, allow_null=True, help_text="winner total - this node's total"
    )
    tied = serializers.BooleanField(required=False)
    plugins = D(
        required=False,
        help_text="Per score plugin: {weight, winner, other, difference, winnerRaw, otherRaw} (weighted scores)",
    )
    rejected = D(required=False, allow_null=True)
    fixes = serializers.ListField(child=serializers.CharField(), required=False)


class WinnerSerializer(serializers.Serializer[Any]):
    node = serializers.CharField()
    total = serializers.IntegerField(allow_null=True)
    tiedNodes = serializers.ListField(child=serializers.CharField())
    runnerUp = ComparisonSerializer(allow_null=True)


class ExplanationSerializer(serializers.Serializer[Any]):
    apiVersion = serializers.CharField()
    kind = serializers.CharField()
    kubernetesVersion = serializers.CharField()
    pod = serializers.CharField()
    profile = serializers.CharField(allow_null=True)
    seq = serializers.IntegerField()
    result = serializers.CharField()
    summary = serializers.CharField(
        allow_blank=True,
        help_text="The explanation in one line: the resources no node has enough of, or the winner's margin",
    )
    message = serializers.CharField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    nodes = D(child=serializers.IntegerField(), help_text="total, feasible, rejected")
    winner = WinnerSerializer(allow_null=True)
    compared = ComparisonSerializer(many=True, help_text="The winner against each node asked for with ?node=")
    rejected = serializers.ListField(
        child=D(), help_text="Rejected nodes grouped by {plugin, code, reasons, count, nodes}"
    )
    fixes = serializers.ListField(child=D(), help_text="Diagnoses with the changes checked against them")
    fixesOmitted = serializers.IntegerField()
    suggestions = serializers.ListField(child=D())
    suggestionsOmitted = serializers.IntegerField()
    checks = D(help_text="run, limit, capped")
    scheduler = D(help_text="The cycle as the replay runs it (node sampling included)")
    notes = serializers.ListField(child=serializers.CharField())


class CyclePodSerializer(serializers.Serializer[Any]):
    pod = serializers.CharField(help_text="namespace/name")
    requests = D(child=serializers.IntegerField(), help_text="Scheduler units: millicores, bytes, counts")
    priority = serializers.IntegerField()
    priorityClassName = serializers.CharField(allow_null=True)
    preemptionPolicy = serializers.CharField()
    schedulerName = serializers.CharField()
    nodeSelector = D(child=serializers.CharField())
    nodeAffinity = serializers.JSONField(allow_null=True, help_text="spec.affinity.nodeAffinity as written")
    podAffinity = serializers.JSONField(allow_null=True)
    podAntiAffinity = serializers.JSONField(allow_null=True)
    tolerations = serializers.ListField(child=D())
    topologySpreadConstraints = serializers.ListField(child=D())
    schedulingGates = serializers.ListField(child=serializers.CharField())
    labels = D(child=serializers.CharField())


class CycleNodeFactsSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    labels = D(child=serializers.CharField())
    taints = serializers.ListField(child=D())
    unschedulable = serializers.BooleanField()
    allocatable = D(child=serializers.IntegerField(), help_text="Scheduler units: millicores, bytes, counts")
    requested = D(child=serializers.IntegerField(), help_text="By the pods on the node when the cycle ran")
    free = D(child=serializers.IntegerField())
    podCount = serializers.IntegerField()


class FilterVerdictSerializer(serializers.Serializer[Any]):
    plugin = serializers.CharField()
    code = serializers.CharField(allow_null=True, help_text="null: not run (PreFilter rejected the pod)")
    reasons = serializers.ListField(child=serializers.CharField())
    ranByScheduler = serializers.BooleanField(
        help_text="false: kube-scheduler had stopped at an earlier rejection (or at PreFilter) and never ran it"
    )
    diagnosis = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="A rejection: what the plugin finds wrong with the node, with its numbers (as Why here? says it)",
    )


class AllFiltersSerializer(serializers.Serializer[Any]):
    preFilter = D(allow_null=True, help_text="code, plugin, reasons (and excludedBy: PreFilter left the node out)")
    filters = FilterVerdictSerializer(many=True)
    note = serializers.CharField()


class CycleNodeInspectionSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    pod = CyclePodSerializer()
    node = CycleNodeFactsSerializer()
    allFilters = AllFiltersSerializer(
        help_text="Every Filter plugin asked on its own: beyond what kube-scheduler ran, which stops at the first rejection"
    )


class TimelineEvictionSerializer(serializers.Serializer[Any]):
    pod = serializers.CharField()
    node = serializers.CharField()
    time = serializers.FloatField()
    requests = D(child=serializers.IntegerField())


class TimelineCycleSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    pod = serializers.CharField()
    profile = serializers.CharField()
    result = serializers.CharField()
    node = serializers.CharField(allow_null=True)
    nominatedNode = serializers.CharField(allow_null=True)
    requests = D(child=serializers.IntegerField())
    durationMicros = serializers.IntegerField()
    kind = serializers.ChoiceField(
        choices=["Scheduling", "Binding"],
        help_text="Binding: the record that ended the Permit wait of the cycle `follows` names",
    )
    follows = serializers.IntegerField(allow_null=True)
    attempt = serializers.IntegerField(help_text="The pod's scheduling attempt (2, 3, ... for retries)")
    evictions = TimelineEvictionSerializer(many=True)


class TimelineSerializer(serializers.Serializer[Any]):
    replay = serializers.UUIDField()
    status = serializers.CharField()
    cycles = TimelineCycleSerializer(many=True)


class LatencyPluginSerializer(serializers.Serializer[Any]):
    point = serializers.CharField()
    plugin = serializers.CharField()
    calls = serializers.IntegerField()
    totalMicros = serializers.IntegerField()
    meanMicros = serializers.FloatField()
    p50Micros = serializers.IntegerField()
    p95Micros = serializers.IntegerField()
    maxMicros = serializers.IntegerField()


class LatencySerializer(serializers.Serializer[Any]):
    replay = serializers.UUIDField()
    cycles = serializers.IntegerField()
    warmupCycles = serializers.IntegerField(
        help_text="The first cycles left out of the figures (they build what plugins index on first use)"
    )
    plugins = LatencyPluginSerializer(
        many=True, help_text="Time in SchedViz's engine per plugin call, warm-up cycles left out"
    )


class CompareSerializer(serializers.Serializer[Any]):
    a = serializers.UUIDField(help_text="The replay in the path (the reference)")
    b = serializers.UUIDField(help_text="The other replay")
    counts = D(child=serializers.IntegerField())
    pods = serializers.ListField(child=D(), help_text="Per pod: {pod, change, a, b} with each side's outcome")
    moved = serializers.ListField(child=D())
    newlyUnschedulable = serializers.ListField(child=D())
    newlyScheduled = serializers.ListField(child=D())
    resultChanged = serializers.ListField(child=D())
    onlyInA = serializers.ListField(child=serializers.CharField())
    onlyInB = serializers.ListField(child=serializers.CharField())
    scoreShifts = serializers.ListField(child=D())


class SchedulingReportSerializer(serializers.Serializer[Any]):
    """The report ``schedviz report`` writes as JSON (``kind: SchedulingReport``)."""

    apiVersion = serializers.CharField()
    kind = serializers.CharField()
    formatVersion = serializers.IntegerField()
    kubernetesVersion = serializers.CharField()
    snapshot = D(help_text="name, nodes, runningPods, pendingPods")
    options = D()
    hasBaseline = serializers.BooleanField()
    summary = D(
        help_text="pendingPods, scheduled, unschedulable, ...; with a baseline also changed, moved, ..."
    )
    baselineSummary = D(allow_null=True)
    pods = serializers.ListField(
        child=D(), help_text="Per pending pod: result, node, message, baseline, change"
    )
    changes = D(allow_null=True)
    utilization = serializers.ListField(child=D())
    utilizationTotals = D()


class ReportJobSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=["queued", "running", "succeeded", "failed"])
    url = serializers.URLField(help_text="Where to poll")
    report = SchedulingReportSerializer(allow_null=True, help_text="Once succeeded")
    error = serializers.CharField(allow_null=True, help_text="Once failed: why")
