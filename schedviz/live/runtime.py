"""One watched cluster: its reflectors, mirror, trigger detector and the thread that replays.

``ClusterWatcher`` has no Django in it: the worker (``schedviz/live/worker.py``) gives it an API
client, a way to load the scheduler configuration, a checkpoint to resume from, and a ``Sink`` that
stores each outcome. Threads: one per stream (``Reflector.run``) and one processor that takes the
triggers in decision order (``Trigger.order``: resourceVersion, then as seen), rebuilds the state
before each decision, replays the pod's cycle and hands the outcome to the sink.

A decision is replayed once its ``not_before`` time has passed and the mirror has caught up with it:
every stream (the kinds' and the events') has reached the decision's resourceVersion, or is
watching with nothing left to deliver (``Options.quiet`` seconds waiting on a quiet server). So a
decision waits while a watch is reconnecting or relisting (after an API-server restart, a 410, a
dropped connection): the pod it is about, the changes before it and any earlier decision come in
first, and decisions are stored in the order the cluster made them. The wait is bounded
(``Options.catch_up`` seconds from when the decision was seen): after it the decision is replayed
against the state the mirror has, marked not exact, with the streams that lagged in its notes (or
in its error, when the pod itself never came).
"""

from __future__ import annotations

import contextlib
import dataclasses
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
from schedviz.kube.watch import (
    BACKOFF,
    ERROR,
    STOPPED,
    UNAVAILABLE,
    Reflector,
    Timing,
    describe_exception,
)

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
    # a watch waiting this long on the server with nothing left to deliver has caught up
    quiet: float = 0.25
    # the longest a decision waits for the mirror to catch up with it (seconds from when it was seen)
    catch_up: float = 60.0
    # each decision's cycle explained ("Why here?") with at most this many checks; None: not explained
    explain_checks: int | None = EXPLAIN_MAX_CHECKS


def trigger_from_dict(d: dict[str, Any]) -> Trigger:
    """A decision kept in a checkpoint (``dataclasses.asdict`` of it)."""
    names = {f.name for f in dataclasses.fields(Trigger)}
    return Trigger(**{k: v for k, v in d.items() if k in names})


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
        self.detector = TriggerDetector(
            self._enqueue,
            event_grace=self.options.event_grace,
            settle=self.options.settle,
            max_event_age=self.options.max_event_age,
        )
        self._threads: list[threading.Thread] = []
        self._queue: list[tuple[tuple[int, int], int, Trigger]] = []
        self._pushed = 0
        self._current: Trigger | None = None  # being replayed
        self._qcond = threading.Condition()
        if checkpoint:
            try:
                self.mirror.restore(checkpoint)
                pending = [trigger_from_dict(d) for d in checkpoint.get("pending") or []]
            except (ValueError, TypeError, KeyError) as exc:
                self.mirror = Mirror(self.streams, changelog_limit=self.options.changelog_limit)
                self.restore_error = f"checkpoint not used: {exc}"
            else:
                restored = time.time()
                for t in pending:  # the decisions the last run had not replayed yet: they wait afresh
                    if t.source != "event" or t.kind != BOUND:
                        self.detector.claim(t.dedup)
                    self._enqueue(replace(t, waiting_since=restored))
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
        self.waiting_for = ""  # the streams the next decision waits for
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
            self._pushed += 1
            heapq.heappush(self._queue, (trigger.order, self._pushed, trigger))
            self._qcond.notify_all()

    def pending(self) -> int:
        with self._qcond:
            return len(self._queue)

    def idle(self) -> bool:
        """Nothing queued and nothing being replayed (tests wait for this)."""
        with self._qcond:
            return not self._queue and not self.busy

    def _next(self) -> tuple[Trigger, str] | None:
        """The earliest decision once it is due and the mirror has caught up with it (or the wait
        for that is over: then with the streams that lag)."""
        while not self.stop_event.is_set():
            with self._qcond:
                if not self._queue or self.config is None:
                    self._qcond.wait(0.5)
                    continue
                head = self._queue[0][2]
                if head.source == "event" and head.kind == BOUND and self.detector.claimed(head.dedup):
                    heapq.heappop(self._queue)  # the pod's own update came: nothing to wait for
                    continue
                wait = head.not_before - time.time()
                if wait > 0:
                    self._qcond.wait(max(0.01, min(wait, 0.5)))
                    continue
            lagging = self.lagging(head)  # outside the queue's lock: it reads the mirror
            if lagging and time.time() < (head.waiting_since or head.observed) + self.options.catch_up:
                self.waiting_for = lagging
                with self._qcond:
                    if self._queue and self._queue[0][2] is head:
                        self._qcond.wait(0.02)
                continue
            with self._qcond:
                if not self._queue or self._queue[0][2] is not head:
                    continue  # an earlier decision came in meanwhile
                heapq.heappop(self._queue)
                self._current = head
                self.busy = True
                self.waiting_for = ""
                return head, lagging
        return None

    def lagging(self, trigger: Trigger) -> str:
        """The streams that have not caught up with ``trigger`` ("" when all have): each must have
        reached its resourceVersion, or be watching with nothing left to deliver."""
        revision = trigger.revision
        out = []
        for r in self.reflectors:
            if r.health.state == UNAVAILABLE:
                continue  # not served (or not readable): nothing will come
            if revision is not None:
                have = self.mirror.resource_version(r.stream.name) or ""
                if have.isdigit() and int(have) >= revision:
                    continue
            if r.quiet_for() >= self.options.quiet:
                continue
            out.append(f"{r.stream.name} ({r.health.state})")
        return ", ".join(out)

    def _process(self) -> None:
        try:
            while not self.stop_event.is_set():
                if self.config is None and not self._load_config():
                    self.stop_event.wait(self.options.config_retry)
                    continue
                taken = self._next()
                if taken is None:
                    break
                trigger, lagging = taken
                try:
                    self._handle(trigger, lagging)
                except Exception as exc:  # one bad cycle must not stop the cluster's timeline
                    self.failures += 1
                    self.last_failure = f"{trigger.pod}: {type(exc).__name__}: {exc}"
                    log.exception("live replay of %s failed", trigger.pod)
                finally:
                    with self._qcond:
                        self.busy = False
                        self._current = None
                        floor = min((t.seq for _, _, t in self._queue), default=self.mirror.seq)
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

    def _handle(self, trigger: Trigger, lagging: str = "") -> None:
        if trigger.source == "event" and trigger.kind == BOUND and not self.detector.claim(trigger.dedup):
            return  # the pod's own update was replayed
        if self.sink.seen(trigger.dedup):
            return
        assert self.config is not None
        if trigger.kind == BOUND and not trigger.scheduler:
            trigger = replace(trigger, scheduler=self._reporter(trigger.pod_uid))
        objects, exact = self.mirror.objects_before(trigger.seq, trigger.rv)
        recent = recent_changes(self.mirror.changes(after_seq=max(0, trigger.seq - 5000)), trigger)
        behind = ""
        if lagging:
            at = f" (resourceVersion {trigger.rv})" if trigger.rv else ""
            behind = (
                f"the mirror had not caught up with the decision{at} after {self.options.catch_up:g}s: "
                f"{lagging} behind"
            )
        outcome = explain_trigger(
            objects,
            exact and not lagging,
            trigger,
            self.config,
            all_nodes=self.options.all_nodes,
            recent=recent,
            earlier=lambda seq: self.mirror.objects_before(seq)[0],
            explain_checks=self.options.explain_checks,
            behind=behind,
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
        """The mirror's checkpoint with the decisions not replayed yet (and the changes rebuilding
        the state before them needs): the next run replays them, none is lost or repeated."""
        with self.mirror.lock:  # listeners queue under it: the queue and the mirror agree
            with self._qcond:
                pending = [t for _, _, t in sorted(self._queue)]
                if self._current is not None:
                    pending.insert(0, self._current)
            revisions = [t.revision for t in pending if t.revision is not None]
            data = self.mirror.checkpoint(
                keep_seq=min(t.seq for t in pending) if pending else None,
                keep_rv=min(revisions) if revisions else None,
            )
        data["pending"] = [dataclasses.asdict(t) for t in pending]
        return data

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
            "waitingFor": self.waiting_for or None,
            "droppedEvents": self.detector.dropped,
            "lastDropped": self.detector.last_dropped or None,
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
