"""The snapshots endpoints' JSON shapes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from schedviz.accounts.serializers import TeamField

from .models import Snapshot


class SnapshotSerializer(serializers.ModelSerializer[Snapshot]):
    class Meta:
        model = Snapshot
        fields = [
            "id",
            "name",
            "content_hash",
            "source_format",
            "size_bytes",
            "created",
            "node_count",
            "pod_count",
            "pending_count",
            "kinds",
            "ignored",
            "config",
            "team",
            "status",
            "upload_name",
            "progress",
            "error",
            "duplicate_of",
        ]
        read_only_fields = fields

    progress = serializers.SerializerMethodField(
        help_text="How far the worker has read the upload: bytesRead of bytesTotal (as received, "
        "compressed or not), objectsParsed"
    )
    error = serializers.JSONField(
        read_only=True,
        allow_null=True,
        help_text="When failed: message, and problems (each with its document, object, field and message)",
    )
    duplicate_of = serializers.UUIDField(
        source="duplicate_of_id",
        read_only=True,
        allow_null=True,
        help_text="When failed because the same content is stored already: that snapshot",
    )

    def get_progress(self, obj: Snapshot) -> dict[str, int]:
        return {"bytesRead": obj.bytes_read, "bytesTotal": obj.size_bytes, "objectsParsed": obj.objects_parsed}


class SnapshotUploadSerializer(serializers.Serializer[Any]):
    file = serializers.FileField(required=False, help_text="The manifests: YAML, JSON, .tar.gz or .zip")
    content = serializers.CharField(required=False, trim_whitespace=False, help_text="The manifests as text")
    config = serializers.CharField(
        required=False, allow_blank=True, help_text="A KubeSchedulerConfiguration (YAML/JSON)"
    )
    config_file = serializers.FileField(required=False)
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    team = TeamField()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("file") and not attrs.get("content"):
            raise serializers.ValidationError(
                {"file": ["Upload a file, or send the manifests as `content`."]}
            )
        return attrs


# ----- response shapes ---------------------------------------------------------------------------------
# A snapshot's nodes, pods, namespaces and objects are dicts built by ``summary.py``; these serializers
# describe them for the OpenAPI schema.

D = serializers.DictField


class SnapshotNodeSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    zone = serializers.CharField()
    region = serializers.CharField()
    allocatable = D(child=serializers.IntegerField(), help_text="Scheduler units: millicores, bytes, counts")
    requested = D(child=serializers.IntegerField())
    nonZeroRequested = D(child=serializers.IntegerField())
    podCount = serializers.IntegerField()
    taints = serializers.ListField(child=D())
    unschedulable = serializers.BooleanField()
    labels = D(child=serializers.CharField())


class SnapshotPodSerializer(serializers.Serializer[Any]):
    key = serializers.CharField(help_text="namespace/name")
    namespace = serializers.CharField()
    name = serializers.CharField()
    state = serializers.ChoiceField(choices=["running", "pending", "finished"])
    phase = serializers.CharField()
    node = serializers.CharField(allow_null=True)
    nominatedNode = serializers.CharField(allow_null=True)
    requests = D(child=serializers.IntegerField())
    priority = serializers.IntegerField()
    priorityClassName = serializers.CharField()
    schedulerName = serializers.CharField()
    schedulingGates = serializers.ListField(child=serializers.CharField())
    labels = D(child=serializers.CharField())


class SnapshotNamespaceSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    labels = D(child=serializers.CharField())
    declared = serializers.BooleanField(help_text="false: only named by pods")
    podCount = serializers.IntegerField()


class SnapshotObjectSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField()
    key = serializers.CharField()
    name = serializers.CharField()
    namespace = serializers.CharField(allow_blank=True)
