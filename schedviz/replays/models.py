"""Scheduler configurations, replays and their stored cycles."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import models

from schedviz.accounts.models import Owned
from schedviz.ingestion.models import Snapshot


class Configuration(Owned):
    """A KubeSchedulerConfiguration kept on its own, editable and validated."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    text = models.TextField(help_text="The configuration as YAML or JSON")
    parsed = models.JSONField(null=True, blank=True)
    errors = models.JSONField(default=list, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated"]

    def __str__(self) -> str:
        return self.name

    @property
    def valid(self) -> bool:
        return not self.errors and self.parsed is not None


class Replay(Owned):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="replays")
    configuration = models.ForeignKey(Configuration, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    config = models.JSONField(null=True, blank=True, help_text="The configuration used (a copy, null = default)")
    options = models.JSONField(default=dict, blank=True)
    name = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED, db_index=True)
    reason = models.TextField(blank=True)
    attempt = models.IntegerField(default=0)
    cycles_done = models.IntegerField(default=0)
    cycles_total = models.IntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    node_names_blob = models.BinaryField(null=True, blank=True)
    summary = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"replay {self.id} ({self.status})"

    @property
    def finished_ok(self) -> bool:
        return self.status == self.Status.SUCCEEDED

    def node_names(self) -> list[str]:
        from schedviz.ingestion.models import unpack

        if not self.node_names_blob:
            return []
        value: list[str] = unpack(self.node_names_blob)
        return value


class Cycle(models.Model):
    """One stored scheduling cycle: a queryable summary row plus the compact per-node payload.

    Rows belong to one attempt of the replay; only the current attempt's rows are ever read, so a
    worker that died mid-run leaves nothing visible as complete.
    """

    replay = models.ForeignKey(Replay, on_delete=models.CASCADE, related_name="cycles")
    attempt = models.IntegerField()
    seq = models.IntegerField()
    pod = models.CharField(max_length=320)
    namespace = models.CharField(max_length=64, db_index=True)
    profile = models.CharField(max_length=200)
    result = models.CharField(max_length=16, db_index=True)
    node = models.CharField(max_length=256, blank=True, db_index=True)
    message = models.TextField(blank=True)
    nominated_node = models.CharField(max_length=256, blank=True)
    feasible_count = models.IntegerField(default=0)
    evaluated_count = models.IntegerField(default=0)
    tied_count = models.IntegerField(default=0)
    winner_total = models.BigIntegerField(null=True, blank=True)
    duration_micros = models.BigIntegerField(default=0)
    timings = models.JSONField(default=dict, blank=True, help_text="Microseconds per 'Point/Plugin'")
    payload = models.BinaryField()

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["replay", "attempt", "seq"], name="cycle_unique_seq")]
        indexes = [models.Index(fields=["replay", "attempt", "pod"])]

    def __str__(self) -> str:
        return f"{self.pod} #{self.seq}"

    def decoded(self) -> tuple[Any, list[tuple[str, ...]]]:
        """The engine's CycleRecord and the reasons table it refers to."""
        from schedviz.cycles.codec import decode_cycle

        return decode_cycle(bytes(self.payload))


class Report(Owned):
    """A CI report: a snapshot replayed under a candidate configuration, against an optional baseline."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="reports")
    candidate = models.JSONField(null=True, blank=True)
    baseline = models.JSONField(null=True, blank=True)
    has_baseline = models.BooleanField(default=False)
    # how it was asked for: {"extendersNotCalled": {"candidate": [...], "baseline": [...]}} when skipped
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"report {self.id} ({self.status})"
