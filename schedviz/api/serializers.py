"""Serializers: the API's JSON shapes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from schedviz.accounts.models import ApiToken
from schedviz.ingestion.models import Snapshot
from schedviz.replays.models import Configuration, Cycle, Replay


class SnapshotSerializer(serializers.ModelSerializer[Snapshot]):
    class Meta:
        model = Snapshot
        fields = [
            "id", "name", "content_hash", "source_format", "size_bytes", "created", "node_count", "pod_count",
            "pending_count", "kinds", "ignored", "config",
        ]
        read_only_fields = fields


class SnapshotUploadSerializer(serializers.Serializer[Any]):
    file = serializers.FileField(required=False, help_text="The manifests: YAML, JSON, .tar.gz or .zip")
    content = serializers.CharField(required=False, trim_whitespace=False, help_text="The manifests as text")
    config = serializers.CharField(required=False, allow_blank=True, help_text="A KubeSchedulerConfiguration (YAML/JSON)")
    config_file = serializers.FileField(required=False)
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("file") and not attrs.get("content"):
            raise serializers.ValidationError({"file": ["Upload a file, or send the manifests as `content`."]})
        return attrs


class ConfigurationSerializer(serializers.ModelSerializer[Configuration]):
    valid = serializers.BooleanField(read_only=True)

    class Meta:
        model = Configuration
        fields = ["id", "name", "text", "parsed", "errors", "valid", "created", "updated"]
        read_only_fields = ["id", "parsed", "errors", "valid", "created", "updated"]


class ConfigurationValidateSerializer(serializers.Serializer[Any]):
    text = serializers.CharField(trim_whitespace=False)


class ReplayCreateSerializer(serializers.Serializer[Any]):
    snapshot = serializers.UUIDField()
    configuration = serializers.UUIDField(required=False, allow_null=True)
    config = serializers.JSONField(required=False, allow_null=True, help_text="An inline KubeSchedulerConfiguration")
    all_nodes = serializers.BooleanField(required=False, default=False)
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)


class ReplaySerializer(serializers.ModelSerializer[Replay]):
    snapshot = serializers.UUIDField(source="snapshot_id", read_only=True)
    configuration = serializers.UUIDField(source="configuration_id", read_only=True, allow_null=True)
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Replay
        fields = [
            "id", "name", "snapshot", "configuration", "config", "options", "status", "reason", "attempt",
            "cycles_done", "cycles_total", "progress", "created", "started", "finished", "summary",
        ]
        read_only_fields = fields

    def get_progress(self, obj: Replay) -> float:
        if obj.cycles_total <= 0:
            return 1.0 if obj.status == Replay.Status.SUCCEEDED else 0.0
        return round(obj.cycles_done / obj.cycles_total, 4)


class CycleSerializer(serializers.ModelSerializer[Cycle]):
    class Meta:
        model = Cycle
        fields = [
            "seq", "pod", "namespace", "profile", "result", "node", "message", "nominated_node", "feasible_count",
            "evaluated_count", "tied_count", "winner_total",
        ]
        read_only_fields = fields


class TokenSerializer(serializers.ModelSerializer[ApiToken]):
    active = serializers.BooleanField(source="is_active", read_only=True)

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "created", "expires", "last_used", "revoked", "active"]
        read_only_fields = fields


class TokenCreateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=100)
    ttl_days = serializers.IntegerField(required=False, min_value=1, max_value=3650, default=90, allow_null=True)


class ReportCreateSerializer(serializers.Serializer[Any]):
    snapshot = serializers.FileField(required=False, help_text="Manifests to replay (or give snapshot_id)")
    snapshot_id = serializers.UUIDField(required=False)
    config = serializers.FileField(required=False, help_text="The candidate KubeSchedulerConfiguration")
    baseline = serializers.FileField(required=False, help_text="The baseline configuration to compare with")
    wait = serializers.FloatField(required=False, min_value=0, max_value=300, default=30)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("snapshot") and not attrs.get("snapshot_id"):
            raise serializers.ValidationError({"snapshot": ["Upload a snapshot file or give snapshot_id."]})
        return attrs
