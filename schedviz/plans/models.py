"""A plan: a capacity, drain or scale-up question on a stored snapshot, and its answer."""

from __future__ import annotations

import uuid

from django.db import models

from schedviz.accounts.models import Owned
from schedviz.ingestion.models import Snapshot


class Plan(Owned):
    class Kind(models.TextChoices):
        CAPACITY = "capacity"
        DRAIN = "drain"
        SCALE_UP = "scale-up"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="plans")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    name = models.CharField(max_length=200, blank=True)
    # the question: pods, order, max (capacity); nodes, selector, respectPdb (drain); templates,
    # maxNodes (scale-up); allNodes
    request = models.JSONField(default=dict, blank=True)
    config = models.JSONField(
        null=True, blank=True, help_text="The configuration used (null: the snapshot's)"
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED, db_index=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    # the replays of the snapshots the plan replayed (one per scale-up template), for the cycle view
    replays = models.JSONField(default=list, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.kind} plan {self.id} ({self.status})"
