"""The plans endpoint's JSON shapes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from .models import Plan


class PlanCreateSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=Plan.Kind.choices)
    snapshot = serializers.UUIDField(help_text="The stored snapshot to plan on")
    configuration = serializers.UUIDField(
        required=False, allow_null=True, help_text="A stored configuration (default: the snapshot's own)"
    )
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    all_nodes = serializers.BooleanField(required=False, default=False)
    # capacity
    pods = serializers.ListField(
        child=serializers.JSONField(),
        required=False,
        help_text="capacity: the Pods to copy (an application: several), as objects or as YAML/JSON text",
    )
    order = serializers.ChoiceField(
        choices=["round-robin", "in-order"], required=False, default="round-robin"
    )
    max = serializers.IntegerField(
        required=False, min_value=0, max_value=100_000, help_text="capacity: copies of each pod at most"
    )
    # drain
    nodes = serializers.ListField(
        child=serializers.CharField(max_length=253), required=False, help_text="drain: node names"
    )
    selector = serializers.CharField(
        required=False, allow_blank=True, max_length=1000, help_text="drain: a label selector"
    )
    respect_pdb = serializers.BooleanField(required=False, default=False)
    # scale-up
    templates = serializers.ListField(
        child=serializers.JSONField(),
        required=False,
        help_text="scale-up: names of the snapshot's nodes, or Node objects (objects or YAML/JSON text)",
    )
    max_nodes = serializers.IntegerField(required=False, min_value=0, max_value=200, default=10)
    replay = serializers.BooleanField(
        required=False,
        default=True,
        help_text="Also store and replay the snapshot the plan replayed (for the cycle view)",
    )
    wait = serializers.FloatField(required=False, min_value=0, max_value=300, default=0)


class PlanSerializer(serializers.ModelSerializer[Plan]):
    snapshot_name = serializers.CharField(source="snapshot.name", read_only=True)

    class Meta:
        model = Plan
        fields = [
            "id", "kind", "name", "snapshot", "snapshot_name", "request", "config", "status", "result",
            "error", "replays", "created", "finished",
        ]  # fmt: skip
        read_only_fields = fields


class PlanListSerializer(serializers.ModelSerializer[Plan]):
    """A plan in a list: its answer's headline, not the whole answer."""

    snapshot_name = serializers.CharField(source="snapshot.name", read_only=True)
    headline = serializers.SerializerMethodField()

    class Meta:
        model = Plan
        fields = [
            "id",
            "kind",
            "name",
            "snapshot",
            "snapshot_name",
            "status",
            "headline",
            "error",
            "created",
            "finished",
        ]
        read_only_fields = fields

    def get_headline(self, plan: Plan) -> str:
        r = plan.result or {}
        if plan.status != Plan.Status.SUCCEEDED:
            return ""
        if plan.kind == Plan.Kind.CAPACITY:
            return f"{r.get('replicas', 0)} more copies fit"
        if plan.kind == Plan.Kind.DRAIN:
            s = r.get("summary") or {}
            return f"{s.get('recreated', 0)} recreated, {s.get('unschedulable', 0)} unschedulable"
        parts = []
        for t in r.get("templates") or []:
            needed = t.get("nodesNeeded")
            parts.append(
                f"{t.get('template')}: " + (f"{needed} node(s)" if needed is not None else str(t.get("stop")))
            )
        return "; ".join(parts)
