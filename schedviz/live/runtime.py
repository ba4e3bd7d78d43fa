"""One watched cluster: its reflectors, mirror, trigger detector and the thread that replays.

``ClusterWatcher`` has no Django in it: the worker (``schedviz/live/worker.py``) gives it an API
client, a way to load the scheduler configuration, a checkpoint to resume from, and a ``Sink`` that
stores each outcome. Threads: one per stream (``Reflector.run``) and one processor that takes the
triggers in order of their ``not_before`` time, rebuilds the state before each decision, replays the
pod's cycle and hands the outcome to the sink.
"""

from __future__ import annotations

import contextlib
import heapq
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from schedviz.engine.errors import ConfigError, SchedVizError
from schedviz.kube.kinds import EVENTS_SCHEDULED, STREAMS, Stream
from schedviz.kube.mirror import Mirror
from schedviz.kube.watch import BACKOFF, ERROR, STOPPED, Reflector, Timing, describe_exception

from .divergence import EXPLAIN_MAX_CHECKS, Outcome, explain_trigger, recent_changes
from .schedconfig import LiveConfig
from .triggers import BOUND, Trigger, TriggerDetector, reporter

log = logging.getLogger(__name__)

# cluster states, as the API shows them
STARTING, SYNCING, WATCHING, DEGRADED, FAILING, STOPPED_STATE = (
    "starting",
    "syncing",
    "watching",
    "degraded",
    "error",
    "stopped",
)


class Sink(Protocol):
    def seen(self, dedup: str) -> bool:
        """The outcome of ``dedup`` is stored already (a restart saw the same decision)."""

    def store(self, outcome: Outcome) -> None: ...

    def close(self) -> None: ...


@dataclass
class Options:
    timing: Timing = field(default_factory=Timing)
    all_nodes: bool = True
    event_grace: float = 1.0
    settle: float = 0.3
    max_event_age: float = 120.0
    config_retry: float = 30.0
    changelog_limit: int = 50_000
    seed: int | None = None
    # each decision's cycle explained ("Why here?") with at most this many checks; None: not explained
    explain_checks: int | None = EXPLAIN_MAX_CHECKS


class ClusterWatcher:
    def __init__(
        self,
        name: str,
        api_client: Any,
        load_config: Callable[[Any], LiveConfig],
        sink: Sink,
        *,
        options: Options | None = None,
        streams: Iterable[Stream] = STREAMS,
        checkpoint: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.api_client = api_client
        self.load_config = load_config
        self.sink = sink
        self.options = options or Options()
        self.streams = list(streams)
        self.mirror = Mirror(self.streams, changelog_limit=self.options.changelog_limit)
        self.restore_error = ""
        if checkpoint:
            try:
                self.mirror.restore(checkpoint)
            except (ValueError, TypeError, KeyError) as exc:
                self.restore_error = f"checkpoint not used: {exc}"
        self.detector = TriggerDetector(
            self._enqueue,
            event_grace=self.options.event_grace,
            settle=self.options.settle,
            max_event_age=self.options.max_event_age,
        )
        self.mirror.listeners.append(self.detector)
        self.stop_event = threading.Event()
        rng = random.Random(self.options.seed)
        self.reflectors = [
            Reflector(
                api_client,
                s,
                self.mirror,
                self.stop_event,
                timing=self.options.timing,
                rng=random.Random(rng.random()),
            )
            for s in self.streams
        ]
        self._threads: list[threading.Thread] = []
        self._queue: list[tuple[float, int, Trigger]] = []
        self._qcond = threading.Condition()
        self.config: LiveConfig | None = None
        self.config_error = ""
        self.processed = 0
        self.failures = 0
        self.last_failure = ""
        self.started_at = 0.0
        self.busy = False

    # ----- life ----------------------------------------------------------------------------------
    def start(self) -> None:
        self.started_at = time.time()
        for r in self.reflectors:
            t = threading.Thread(target=r.run, name=f"watch-{self.name}-{r.stream.name}", daemon=True)
            t.start()
            self._threads.append(t)
        t = threading.Thread(target=self._process, name=f"replay-{self.name}", daemon=True)
        t.start()
        self._threads.append(t)

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        for r in self.reflectors:
            r.stop()
        with self._qcond:
            self._qcond.notify_all()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        with contextlib.suppress(Exception):
            self.api_client.close()

    @property
    def alive(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    # ----- triggers ------------------------------------------------------------------------------
    def _enqueue(self, trigger: Trigger) -> None:
        with self._qcond:
            heapq.heappush(self._queue, (trigger.not_before, trigger.seq, trigger))
            self._qcond.notify_all()

    def pending(self) -> int:
        with self._qcond:
            return len(self._queue)

    def idle(self) -> bool:
        """Nothing queued and nothing being replayed (tests wait for this)."""
        with self._qcond:
            return not self._queue and not self.busy

    def _next(self) -> Trigger | None:
        with self._qcond:
            while not self.stop_event.is_set():
                if self._queue:
                    wait = self._queue[0][0] - time.time()
                    if wait <= 0 and self.config is not None:
                        self.busy = True
                        return heapq.heappop(self._queue)[2]
                    self._qcond.wait(max(0.01, min(wait, 0.5)) if self.config is not None else 0.5)
                else:
                    self._qcond.wait(0.5)
            return None

    def _process(self) -> None:
        try:
            while not self.stop_event.is_set():
                if self.config is None and not self._load_config():
                    self.stop_event.wait(self.options.config_retry)
                    continue
                trigger = self._next()
                if trigger is None:
                    break
                try:
                    self._handle(trigger)
                except Exception as exc:  # one bad cycle must not stop the cluster's timeline
                    self.failures += 1
                    self.last_failure = f"{trigger.pod}: {type(exc).__name__}: {exc}"
                    log.exception("live replay of %s failed", trigger.pod)
                finally:
                    with self._qcond:
                        self.busy = False
                        floor = min((s for _, s, _ in self._queue), default=self.mirror.seq)
                    self.mirror.release(floor)
        finally:
            self.sink.close()

    def _load_config(self) -> bool:
        try:
            self.config = self.load_config(self.api_client)
            self.config_error = ""
            return True
        except (ConfigError, SchedVizError) as exc:
            self.config_error = f"scheduler configuration: {exc}"
        except Exception as exc:
            self.config_error = f"scheduler configuration: {describe_exception(exc, str(self.api_client.configuration.host), 'reading it')}"
        log.warning("%s: %s", self.name, self.config_error)
        return False

    def _handle(self, trigger: Trigger) -> None:
        if trigger.source == "event" and trigger.kind == BOUND and not self.detector.claim(trigger.dedup):
            return  # the pod's own update was replayed
        if self.sink.seen(trigger.dedup):
            return
        assert self.config is not None
        if trigger.kind == BOUND and not trigger.scheduler:
            trigger = replace(trigger, scheduler=self._reporter(trigger.pod_uid))
        objects, exact = self.mirror.objects_before(trigger.seq, trigger.rv)
        recent = recent_changes(self.mirror.changes(after_seq=max(0, trigger.seq - 5000)), trigger)
        outcome = explain_trigger(
            objects,
            exact,
            trigger,
            self.config,
            all_nodes=self.options.all_nodes,
            recent=recent,
            earlier=lambda seq: self.mirror.objects_before(seq)[0],
            explain_checks=self.options.explain_checks,
        )
        self.sink.store(outcome)
        self.processed += 1

    def _reporter(self, pod_uid: str) -> str:
        """Who reported the pod's Scheduled event, when it came in (the pod's update does not say)."""
        for ev in self.mirror.values(EVENTS_SCHEDULED):
            if (ev.get("involvedObject") or {}).get("uid") == pod_uid:
                return reporter(ev)
        return ""

    # ----- what the worker reads ------------------------------------------------------------------
    def snapshot_objects(self) -> list[dict[str, Any]]:
        return self.mirror.objects()

    def checkpoint(self) -> dict[str, Any]:
        return self.mirror.checkpoint()

    def health(self) -> dict[str, Any]:
        streams = [r.snapshot() for r in self.reflectors]
        required = {s.name for s in self.streams if s.required}
        status, message = WATCHING, ""
        if self.stop_event.is_set():
            status = STOPPED_STATE
        elif self.config_error:
            status, message = FAILING, self.config_error
        else:
            failing = [h for h in streams if h["stream"] in required and h["state"] == ERROR]
            unsynced = [h for h in streams if h["stream"] in required and not h["synced"]]
            backing = [h for h in streams if h["state"] == BACKOFF]
            if failing:
                status, message = FAILING, failing[0]["lastError"] or "a watch failed"
            elif unsynced:
                waiting = [h for h in unsynced if h["lastError"]]
                status = SYNCING
                message = waiting[0]["lastError"] if waiting else "listing the cluster"
            elif backing:
                status = DEGRADED
                message = f"{len(backing)} watch(es) reconnecting: {backing[0]['lastError'] or ''}".rstrip(
                    ": "
                )
        if status == WATCHING and any(h["state"] == STOPPED for h in streams):
            status = STOPPED_STATE
        return {
            "status": status,
            "message": message,
            "streams": streams,
            "config": self.config.notes() if self.config is not None else None,
            "configError": self.config_error or None,
            "queue": self.pending(),
            "processed": self.processed,
            "failures": self.failures,
            "lastFailure": self.last_failure or None,
            "restoredAt": self.mirror.restored_at,
            "restoreError": self.restore_error or None,
            "startedAt": self.started_at,
            "objects": sum(
                c
                for name, c in self.mirror.counts().items()
                if name in {s.name for s in self.streams if s.mirrored}
            ),
        }
