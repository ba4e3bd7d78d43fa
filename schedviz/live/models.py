"""Watched clusters, their live timeline of replayed cycles, and snapshot requests."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from schedviz.accounts.models import Owned
from schedviz.ingestion.models import Snapshot, unpack


class LiveCluster(Owned):
    """A cluster SchedViz watches. Its credentials are stored encrypted and never shown."""

    class Source(models.TextChoices):
        KUBECONFIG = "kubeconfig"
        PATH = "path"
        IN_CLUSTER = "in-cluster"

    class ConfigSource(models.TextChoices):
        DEFAULT = "default"
        UPLOADED = "uploaded"
        CONFIGMAP = "configmap"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    source = models.CharField(max_length=16, choices=Source.choices)
    context = models.CharField(max_length=253, blank=True)
    path = models.CharField(
        max_length=1024, blank=True, help_text="source=path: the kubeconfig on the server"
    )
    server = models.CharField(max_length=1024, blank=True)
    credential_kind = models.CharField(max_length=32, blank=True)
    credentials = models.BinaryField(
        null=True, blank=True, help_text="Fernet token of the minimal kubeconfig"
    )
    config_source = models.CharField(
        max_length=16, choices=ConfigSource.choices, default=ConfigSource.DEFAULT
    )
    config_text = models.TextField(blank=True)
    config = models.JSONField(
        null=True, blank=True, help_text="The configuration replays use (null: default)"
    )
    config_map = models.CharField(max_length=320, blank=True, help_text="namespace/name")
    config_map_key = models.CharField(max_length=253, blank=True)
    config_notes = models.JSONField(default=dict, blank=True)
    all_nodes = models.BooleanField(default=True)
    enabled = models.BooleanField(default=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    settings_version = models.IntegerField(
        default=1, help_text="Bumped when credentials or configuration change"
    )
    # what the worker reports
    status = models.CharField(max_length=16, default="pending")
    status_message = models.TextField(blank=True)
    health = models.JSONField(default=dict, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    lease_expires = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    checkpoint_blob = models.BinaryField(null=True, blank=True)
    checkpoint_at = models.DateTimeField(null=True, blank=True)
    checkpoint_version = models.IntegerField(default=0)
    # the live timeline's counters
    last_seq = models.IntegerField(default=0)
    cycles_count = models.IntegerField(default=0)
    matches = models.IntegerField(default=0)
    ties = models.IntegerField(default=0)
    divergences = models.IntegerField(default=0)
    skipped = models.IntegerField(default=0)
    divergence_codes = models.JSONField(default=dict, blank=True)
    last_cycle_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.name} ({self.server or self.source})"

    @property
    def worker_alive(self) -> bool:
        return bool(self.worker) and self.lease_expires is not None and self.lease_expires > timezone.now()

    def checkpoint(self) -> dict[str, Any] | None:
        if not self.checkpoint_blob:
            return None
        value: dict[str, Any] = unpack(self.checkpoint_blob)
        return value


class LiveNodeSet(models.Model):
    """The node names of cycles (node indices in a stored cycle refer to them); shared while unchanged."""

    cluster = models.ForeignKey(LiveCluster, on_delete=models.CASCADE, related_name="nodesets")
    digest = models.CharField(max_length=64)
    count = models.IntegerField(default=0)
    names_blob = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "digest"], name="live_nodeset_unique")]

    def names(self) -> list[str]:
        value: list[str] = unpack(self.names_blob)
        return value


class LiveCycle(models.Model):
    """One decision of the cluster, replayed against the state just before it, and the comparison."""

    cluster = models.ForeignKey(LiveCluster, on_delete=models.CASCADE, related_name="cycles")
    seq = models.IntegerField()
    dedup = models.CharField(max_length=400)
    pod = models.CharField(max_length=320)
    namespace = models.CharField(max_length=64, db_index=True)
    pod_uid = models.CharField(max_length=64, blank=True)
    trigger = models.CharField(max_length=16, help_text="bound or failed")
    trigger_source = models.CharField(max_length=16, help_text="pod, event or relist")
    observed = models.DateTimeField()
    occurred = models.DateTimeField(null=True, blank=True)
    resource_version = models.CharField(
        max_length=64,
        blank=True,
        help_text="The resourceVersion of the change that revealed the decision (the timeline's order)",
    )
    actual_result = models.CharField(max_length=16)
    actual_node = models.CharField(max_length=256, blank=True)
    actual_message = models.TextField(blank=True)
    actual_scheduler = models.CharField(max_length=256, blank=True)
    profile = models.CharField(max_length=200, blank=True)
    result = models.CharField(max_length=16, blank=True, db_index=True)
    node = models.CharField(max_length=256, blank=True)
    message = models.TextField(blank=True)
    nominated_node = models.CharField(max_length=256, blank=True)
    feasible_count = models.IntegerField(default=0)
    evaluated_count = models.IntegerField(default=0)
    tied_count = models.IntegerField(default=0)
    winner_total = models.BigIntegerField(null=True, blank=True)
    duration_micros = models.BigIntegerField(default=0)
    timings = models.JSONField(default=dict, blank=True)
    agreement = models.CharField(max_length=12, db_index=True)
    divergence = models.CharField(max_length=32, blank=True, db_index=True)
    explanations = models.JSONField(default=list, blank=True)
    notes = models.JSONField(default=list, blank=True)
    exact = models.BooleanField(default=True)
    gap = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    nodeset = models.ForeignKey(
        LiveNodeSet, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    payload = models.BinaryField(null=True, blank=True)
    explanation = models.BinaryField(
        null=True, blank=True, help_text="The cycle's explanation (Explanation.to_dict()), packed"
    )
    explanation_error = models.TextField(blank=True, help_text="Why the cycle has no explanation")

    class Meta:
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "seq"], name="live_cycle_unique_seq"),
            models.UniqueConstraint(fields=["cluster", "dedup"], name="live_cycle_unique_decision"),
        ]
        indexes = [models.Index(fields=["cluster", "pod"])]

    def __str__(self) -> str:
        return f"{self.pod} #{self.seq} ({self.agreement})"

    def decoded(self) -> tuple[Any, list[tuple[str, ...]]]:
        from schedviz.cycles.codec import decode_cycle

        assert self.payload is not None
        return decode_cycle(bytes(self.payload))

    def node_names(self) -> list[str]:
        return self.nodeset.names() if self.nodeset is not None else []

    def explained(self) -> dict[str, Any] | None:
        """The stored explanation of the cycle, or None."""
        if self.explanation is None:
            return None
        value: dict[str, Any] = unpack(self.explanation)
        return value


class LiveSnapshotRequest(models.Model):
    """'Snapshot now': the worker freezes the mirrored state into a snapshot."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    cluster = models.ForeignKey(LiveCluster, on_delete=models.CASCADE, related_name="snapshot_requests")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    snapshot = models.ForeignKey(Snapshot, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
