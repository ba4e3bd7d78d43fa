"""The long-lived worker behind ``manage.py watch_clusters`` (no Celery): it watches every enabled
cluster it holds the lease of.

Several workers may run: each cluster is held by one of them at a time through a lease
(``LiveCluster.worker`` and ``lease_expires``, taken and renewed with conditional UPDATEs, so any
database serialises them). A worker that stops releases its clusters and leaves a checkpoint of each
mirrored state, with the decisions not replayed yet (waiting for their grace, or for the mirror to
catch up with them); the next one (or the same, restarted) resumes from it: it replays those, and
watches on from the checkpoint's resourceVersions, or relists and diffs when they are too old, so
decisions made while no worker ran are still found (flagged as seen after a gap) and none is stored
twice.

Every tick (a second by default) the worker renews its leases, starts and stops watchers as
clusters are added, enabled, disabled, changed or deleted, writes each cluster's health, fulfils
"snapshot now" requests and, every ``checkpoint_seconds``, stores checkpoints.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from django.db import OperationalError, connections
from django.db.models import Q
from django.utils import timezone

from schedviz.ingestion.models import pack
from schedviz.kube.kubeconfig import KubeconfigError
from schedviz.kube.watch import Timing

from . import crypto, services
from .divergence import Outcome
from .models import LiveCluster, LiveCycle, LiveSnapshotRequest
from .runtime import DEGRADED, WATCHING, ClusterWatcher, Options

log = logging.getLogger(__name__)


T = TypeVar("T")


def retry_locked(fn: Callable[[], T], attempts: int = 40) -> T:
    """``fn()``, again while SQLite says a table or the database is locked (the embedded default
    shares one file between the web server and the worker; PostgreSQL never says so)."""
    for attempt in range(attempts):
        try:
            return fn()
        except OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.02 * (1 + attempt % 5))
    raise AssertionError("unreachable")  # pragma: no cover


class DbSink:
    """Stores a watcher's outcomes (called from its processor thread)."""

    def __init__(self, cluster_id: Any) -> None:
        self.cluster_id = cluster_id

    def seen(self, dedup: str) -> bool:
        return retry_locked(
            lambda: LiveCycle.objects.filter(cluster_id=self.cluster_id, dedup=dedup).exists()
        )

    def store(self, outcome: Outcome) -> None:
        retry_locked(lambda: services.store_outcome(self.cluster_id, outcome))

    def close(self) -> None:
        connections.close_all()  # this thread's connections


@dataclass
class Running:
    watcher: ClusterWatcher
    version: int
    checkpointed: float
    status: tuple[str, str] = ("", "")
    renew_at: float = 0.0  # when the lease and the heartbeat are written next
    health: dict[str, Any] | None = None  # as last written
    checkpoint_marker: Any = None


def default_worker_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class Worker:
    def __init__(
        self,
        worker_id: str | None = None,
        *,
        cluster_ids: list[Any] | None = None,
        lease_seconds: float = 30.0,
        checkpoint_seconds: float = 30.0,
        retry_seconds: float = 10.0,
        timing: Timing | None = None,
        options: dict[str, Any] | None = None,
        heartbeat_file: str | Path | None = None,
    ) -> None:
        self.id = worker_id or default_worker_id()
        # touched after every tick that reached the database: a container health check reads its age
        self.heartbeat_file = Path(heartbeat_file) if heartbeat_file else None
        self.cluster_ids = [str(c) for c in cluster_ids] if cluster_ids else None
        self.lease = timedelta(seconds=lease_seconds)
        self.checkpoint_seconds = checkpoint_seconds
        self.retry_seconds = retry_seconds
        self.timing = timing or Timing()
        self.options = options or {}
        self.running: dict[str, Running] = {}
        self._retry_after: dict[str, float] = {}

    # ----- the loop ------------------------------------------------------------------------------
    def run(self, stop: threading.Event, tick_seconds: float = 1.0, max_seconds: float | None = None) -> None:
        started = time.monotonic()
        try:
            while not stop.is_set():
                try:
                    self.tick()
                except Exception:  # the database went away for a moment: try again next tick
                    log.exception("worker tick failed")
                else:
                    self._beat()
                if max_seconds is not None and time.monotonic() - started >= max_seconds:
                    break
                stop.wait(tick_seconds)
        finally:
            self.shutdown()
            connections.close_all()  # this thread's: a worker run in a thread leaves none open

    def tick(self) -> None:
        qs = LiveCluster.objects.filter(enabled=True)
        if self.cluster_ids is not None:
            qs = qs.filter(pk__in=self.cluster_ids)
        wanted = {str(pk) for pk in qs.values_list("pk", flat=True)}
        for pk in [pk for pk in self.running if pk not in wanted]:
            self._stop(pk, "stopped", "disabled or removed")
        now = timezone.now()
        for pk in sorted(wanted):
            if pk in self.running or self._retry_after.get(pk, 0.0) > time.monotonic():
                continue
            free = Q(worker="") | Q(worker=self.id) | Q(lease_expires__isnull=True) | Q(lease_expires__lt=now)
            if LiveCluster.objects.filter(free, pk=pk, enabled=True).update(
                worker=self.id, lease_expires=now + self.lease
            ):
                self._start(pk)
        for pk in list(self.running):
            self._report(pk)

    def _beat(self) -> None:
        if self.heartbeat_file is None:
            return
        try:
            self.heartbeat_file.touch()
        except OSError as exc:
            log.warning("heartbeat file %s: %s", self.heartbeat_file, exc)

    def shutdown(self) -> None:
        for pk in list(self.running):
            self._stop(pk, "stopped", "the worker stopped")

    # ----- one cluster -----------------------------------------------------------------------------
    def _options(self, cluster: LiveCluster) -> Options:
        return Options(timing=self.timing, all_nodes=cluster.all_nodes, **self.options)

    def _start(self, pk: str) -> None:
        cluster = LiveCluster.objects.get(pk=pk)
        try:
            src = services.source_of(cluster)
            api_client = src.client()
        except (KubeconfigError, crypto.EncryptionKeyError) as exc:
            self._retry_after[pk] = time.monotonic() + self.retry_seconds
            LiveCluster.objects.filter(pk=pk, worker=self.id).update(
                status="error",
                status_message=str(exc),
                worker="",
                lease_expires=None,
                heartbeat=timezone.now(),
            )
            log.warning("cluster %s (%s): %s", cluster.name, pk, exc)
            return
        checkpoint = None
        try:
            checkpoint = cluster.checkpoint()
        except Exception as exc:  # a checkpoint of another version: start afresh
            log.warning("cluster %s: checkpoint not used: %s", pk, exc)
        watcher = ClusterWatcher(
            pk,
            api_client,
            services.config_loader(cluster),
            DbSink(pk),
            options=self._options(cluster),
            checkpoint=checkpoint,
        )
        watcher.start()
        self.running[pk] = Running(watcher, cluster.settings_version, time.monotonic())
        LiveCluster.objects.filter(pk=pk).update(
            status="starting", status_message="", heartbeat=timezone.now()
        )
        log.info("watching cluster %s (%s)%s", cluster.name, pk, " from its checkpoint" if checkpoint else "")

    def _stop(self, pk: str, status: str | None, message: str | None) -> None:
        run = self.running.pop(pk, None)
        if run is None:
            return
        run.watcher.stop()
        fields: dict[str, Any] = {
            "worker": "",
            "lease_expires": None,
            "heartbeat": timezone.now(),
            "health": run.watcher.health(),  # stopped, every stream with it
        }
        if status is not None:
            fields.update(status=status, status_message=message or "")
        try:
            fields.update(checkpoint_blob=pack(run.watcher.checkpoint()), checkpoint_at=timezone.now())
        except Exception:  # pragma: no cover - best effort
            log.exception("checkpoint of %s failed", pk)
        retry_locked(lambda: LiveCluster.objects.filter(pk=pk, worker=self.id).update(**fields))

    def _report(self, pk: str) -> None:
        """Renew the lease, write the health when it changed (or a heartbeat is due), checkpoint,
        and fulfil snapshot requests. Writes only what changed: a quiet cluster costs a read a tick."""
        run = self.running[pk]
        cluster = (
            LiveCluster.objects.filter(pk=pk)
            .only("pk", "settings_version", "config_source", "worker")
            .first()
        )
        if cluster is None or cluster.worker != self.id:  # deleted, or another worker took it over
            self._stop(pk, None, None)
            return
        if cluster.settings_version != run.version:  # credentials or configuration changed: start again
            self._stop(pk, "starting", "settings changed: restarting")
            self._retry_after.pop(pk, None)
            return
        w = run.watcher
        health = w.health()
        due = time.monotonic() >= run.renew_at
        fields: dict[str, Any] = {}
        if due:
            fields["lease_expires"] = timezone.now() + self.lease
            run.renew_at = time.monotonic() + self.lease.total_seconds() / 3
        if due or health != run.health:
            fields.update(
                status=health["status"],
                status_message=health["message"],
                health=health,
                heartbeat=timezone.now(),
            )
            if w.config is not None:
                fields["config_notes"] = w.config.notes()
                if cluster.config_source == LiveCluster.ConfigSource.CONFIGMAP:
                    fields["config"] = w.config.raw
        if time.monotonic() - run.checkpointed >= self.checkpoint_seconds:
            marker = (
                w.mirror.seq,
                w.processed,  # the decisions still to replay are in the checkpoint too
                w.pending(),
                tuple(sorted((s.name, w.mirror.resource_version(s.name) or "") for s in w.streams)),
            )
            if marker != run.checkpoint_marker:
                fields.update(checkpoint_blob=pack(w.checkpoint()), checkpoint_at=timezone.now())
                run.checkpoint_marker = marker
            run.checkpointed = time.monotonic()
        if fields:
            if not retry_locked(lambda: LiveCluster.objects.filter(pk=pk, worker=self.id).update(**fields)):
                self._stop(pk, None, None)
                return
            if "health" in fields:
                run.health = health
        if (health["status"], health["message"]) != run.status:
            run.status = (health["status"], health["message"])
            services.publish(pk, {"type": "cluster.status", "status": health["status"]})
        if health["status"] in (WATCHING, DEGRADED):
            for req in LiveSnapshotRequest.objects.filter(
                cluster__pk=pk, status=LiveSnapshotRequest.Status.PENDING
            ).select_related("cluster", "requested_by"):
                config = w.config.raw if w.config is not None else None
                retry_locked(functools.partial(services.fulfil_snapshot, req, w.snapshot_objects(), config))
