"""Stored cluster snapshots."""

from __future__ import annotations

import json
import uuid
import zlib
from typing import Any

from django.db import models

from schedviz.accounts.models import Owned


def pack(value: Any) -> bytes:
    """JSON, compressed: how snapshots and traces keep their bulk."""
    return zlib.compress(json.dumps(value, separators=(",", ":")).encode(), 6)


def unpack(blob: bytes | memoryview) -> Any:
    return json.loads(zlib.decompress(bytes(blob)))


class Snapshot(Owned):
    """A cluster's objects as uploaded, content-hashed, with summaries for listing."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    content_hash = models.CharField(max_length=64, db_index=True)
    source_format = models.CharField(max_length=40)
    size_bytes = models.BigIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    node_count = models.IntegerField(default=0)
    pod_count = models.IntegerField(default=0)
    pending_count = models.IntegerField(default=0)
    kinds = models.JSONField(default=dict)
    ignored = models.JSONField(default=dict)
    config = models.JSONField(null=True, blank=True)
    objects_blob = models.BinaryField()
    summary_blob = models.BinaryField()

    class Meta:
        ordering = ["-created"]
        constraints = [models.UniqueConstraint(fields=["owner", "content_hash"], name="snapshot_unique_per_owner")]

    def __str__(self) -> str:
        return f"{self.name} ({self.node_count} nodes)"

    def objects_list(self) -> list[dict[str, Any]]:
        value: list[dict[str, Any]] = unpack(self.objects_blob)
        return value

    def summary(self) -> dict[str, Any]:
        value: dict[str, Any] = unpack(self.summary_blob)
        return value

    def engine_snapshot(self) -> Any:
        from schedviz.engine.loader import load_objects

        return load_objects(self.objects_list(), self.config, self.name)
