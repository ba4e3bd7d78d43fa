"""Stored cluster snapshots."""

from __future__ import annotations

import json
import threading
import uuid
import zlib
from collections import OrderedDict
from contextlib import AbstractContextManager
from typing import Any

from django.db import models

from schedviz.accounts.models import Owned
from schedviz.engine import jsonstream


def pack(value: Any) -> bytes:
    """JSON, compressed: how snapshots and traces keep their bulk."""
    return zlib.compress(json.dumps(value, separators=(",", ":")).encode(), 6)


def unpack(blob: bytes | memoryview) -> Any:
    """What ``pack`` packed (read as the engine reads JSON: msgspec's decoder, several times faster
    on a production cluster's objects, and the standard one for what strict JSON refuses and
    ``json.dumps`` may write, NaN)."""
    return jsonstream.loads(zlib.decompress(blob))


class _SummaryCache:
    """Decoded snapshot summaries, shared by the requests of a process (LRU, a few entries).

    A stored snapshot's summary never changes, and decoding a large one costs tens of milliseconds:
    pages of its nodes, pods and objects read the same decoded summary.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self.lock:
            value = self.items.get(key)
            if value is not None:
                self.items.move_to_end(key)
            return value

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)


_summaries = _SummaryCache(8)


class Snapshot(Owned):
    """A cluster's objects as uploaded, content-hashed, with summaries for listing.

    An upload of real size is stored as received (``UploadChunk``) and read on the worker: until then
    the snapshot is ``pending`` or ``parsing`` (with its progress), then ``ready``, or ``failed`` with
    the problems found (nothing else stored; ``duplicate_of`` when the same content was stored before).
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        PARSING = "parsing"
        READY = "ready"
        FAILED = "failed"

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
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.READY)
    upload_name = models.CharField(max_length=255, blank=True, default="")
    config_given = models.BooleanField(default=False)  # ``config`` came with the upload, not the manifests
    bytes_read = models.BigIntegerField(default=0)
    objects_parsed = models.IntegerField(default=0)
    error = models.JSONField(null=True, blank=True)
    duplicate_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "content_hash"],
                condition=models.Q(status="ready"),
                name="snapshot_unique_per_owner",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.node_count} nodes)"

    @property
    def ready(self) -> bool:
        return self.status == self.Status.READY

    def objects_list(self) -> list[dict[str, Any]]:
        if not self.ready:
            raise ValueError(f"snapshot {self.pk} is {self.status}: it holds no objects yet")
        value: list[dict[str, Any]] = unpack(self.objects_blob)
        return value

    def summary(self) -> dict[str, Any]:
        """The snapshot's summary, decoded once per process: shared, so callers must not change it."""
        key = f"{self.pk}:{self.content_hash}"
        value = _summaries.get(key)
        if value is None:
            value = unpack(self.summary_blob)  # loaded now when the query deferred it
            _summaries.put(key, value)
        return value

    @classmethod
    def without_bulk(cls, pk: Any) -> Snapshot:
        """The snapshot with its objects and summary left in the database until they are read (a
        production cluster's are hundreds of MB: a reading kept by the process never needs them)."""
        row: Snapshot = cls.objects.defer("objects_blob", "summary_blob").get(pk=pk)
        return row

    @property
    def engine_key(self) -> str:
        return f"{self.pk}:{self.content_hash}"

    @property
    def object_count(self) -> int:
        return sum(int(v) for v in (self.kinds or {}).values()) or self.node_count + self.pod_count

    def _read_engine_snapshot(self) -> Any:
        from schedviz.engine.loader import load_objects

        return load_objects(self.objects_list(), self.config, self.name)

    def engine_snapshot(self) -> Any:
        """The engine's reading of the snapshot (``engine.loader.Snapshot``), kept by the process
        when it fits its budget (``ingestion.enginecache``): shared, so callers must not change it."""
        from .enginecache import snapshots

        kept = snapshots.get(self.engine_key, self.object_count, self._read_engine_snapshot)
        return kept if kept is not None else self._read_engine_snapshot()

    def engine_snapshot_in_use(self) -> AbstractContextManager[Any]:
        """``engine_snapshot`` for a long use (a replay): a reading too large to keep is frozen out of
        the collector's sight while the block runs, and handed back after it."""
        from .enginecache import snapshots

        return snapshots.use(self.engine_key, self.object_count, self._read_engine_snapshot)


class UploadChunk(models.Model):
    """A piece of an upload as received (8 MiB at most), kept until the worker has read it."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="chunks")
    seq = models.IntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["snapshot", "seq"], name="upload_chunk_order")]
