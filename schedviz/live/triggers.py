"""When to replay: a pod bound by the cluster, or a scheduling failure it reported.

``TriggerDetector`` listens to the mirror's changes and emits a ``Trigger`` for

- a pod whose ``spec.nodeName`` appears (pending -> bound), seen on the pods' watch, or through a
  relist after a gap (then flagged ``gap``: the state before it is approximate);
- a ``Scheduled`` event (``Successfully assigned ns/name to node``), which may arrive before the
  pod's update: it waits ``event_grace`` seconds so that the pod's own update, whose revision bounds
  the state before the bind exactly, wins; only one of them is ever replayed (``claim``);
- a ``FailedScheduling`` event: a new one, or a repeat whose message or count changed.

Nothing is replayed for the first list of each stream (the state SchedViz starts from), for pods
created already bound (``spec.nodeName`` set by their creator: no scheduler was involved), for
static pods' mirrors, or for events older than ``max_event_age`` found by a relist. Their age is
judged by the cluster's own clock, not this machine's: the list's ``Date`` header (the API server's
clock when it answered), else the offset learnt from the times of the events watched; the events
left out are counted (``dropped``, shown in the health).

Each trigger has a decision order (``Trigger.order``): its change's resourceVersion (etcd's
revision, one order across kinds), then the mirror's sequence number.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from schedviz.engine.errors import InputError
from schedviz.engine.objects import parse_time
from schedviz.kube.mirror import DELETED, Change

JSON = dict[str, Any]
BOUND, FAILED = "bound", "failed"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
_ASSIGNED = re.compile(r"^Successfully assigned (?P<pod>\S+) to (?P<node>\S+)$")


@dataclass(frozen=True)
class Trigger:
    kind: str  # bound, failed
    source: str  # pod (its update), event, relist
    pod: str  # namespace/name
    pod_uid: str
    node: str | None  # where the cluster bound it
    message: str | None  # the cluster's FailedScheduling message
    scheduler: str  # who reported it (the event's reporting component), "" when unknown
    seq: int  # the mirror change that revealed it
    rv: str  # that change's resourceVersion: the state before it is replayed
    observed: float  # when the mirror saw it
    occurred: float | None  # the event's own time, when it says
    gap: bool  # seen through a relist: the state before it is approximate
    dedup: str  # one stored cycle per value
    not_before: float = 0.0  # processed no earlier (lets the pod's update win over the event)
    pod_object: JSON | None = None  # the pod as seen (when the state before has no version of it)
    waiting_since: float = 0.0  # the wait for the mirror to catch up began then (0: when observed)

    @property
    def revision(self) -> int | None:
        """The decision's resourceVersion as a number (None: the API server's are opaque)."""
        return int(self.rv) if self.rv.isdigit() else None

    @property
    def order(self) -> tuple[int, int]:
        """When the cluster decided, as far as SchedViz can tell: by resourceVersion, then as seen."""
        return (self.revision or 0, self.seq)


def node_name(pod: JSON | None) -> str:
    return str(((pod or {}).get("spec") or {}).get("nodeName") or "")


def pod_key(obj: JSON) -> str:
    md = obj.get("metadata") or {}
    return f"{md.get('namespace') or 'default'}/{md.get('name') or ''}"


def event_time(ev: JSON) -> float | None:
    series = ev.get("series") or {}
    for value in (
        series.get("lastObservedTime"),
        ev.get("eventTime"),
        ev.get("lastTimestamp"),
        ev.get("firstTimestamp"),
        (ev.get("metadata") or {}).get("creationTimestamp"),  # the API server's, when the event has none
    ):
        if value:
            try:
                return parse_time(value, "Event", "time")
            except InputError:
                continue
    return None


def event_count(ev: JSON) -> int:
    series = ev.get("series") or {}
    try:
        return int(series.get("count") or ev.get("count") or 1)
    except (TypeError, ValueError):
        return 1


def reporter(ev: JSON) -> str:
    return str(ev.get("reportingComponent") or (ev.get("source") or {}).get("component") or "")


class TriggerDetector:
    """A mirror listener (it runs under the mirror's lock: it only looks and queues)."""

    def __init__(
        self,
        emit: Callable[[Trigger], None],
        *,
        event_grace: float = 1.0,
        settle: float = 0.3,
        max_event_age: float = 120.0,
        clock: Callable[[], float] = time.time,
        remember: int = 100_000,
    ) -> None:
        self.emit = emit
        self.event_grace = event_grace
        self.settle = settle
        self.max_event_age = max_event_age
        self.clock = clock
        self.remember = remember
        self._claimed: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        # the cluster's clock minus this machine's: from the last list's Date header, else the
        # largest seen in the times of watched events (an event is never stamped after it arrives)
        self.offset: float | None = None
        self.event_offset: float | None = None
        self.dropped = 0  # events found by a relist, left out as too old
        self.last_dropped = ""

    def cluster_now(self, ch: Change | None = None) -> float | None:
        """The cluster's clock now (None: nothing told it yet)."""
        if ch is not None and ch.server_time is not None:
            return ch.server_time + (self.clock() - ch.time)
        offset = self.offset if self.offset is not None else self.event_offset
        return None if offset is None else self.clock() + offset

    def claimed(self, dedup: str) -> bool:
        with self._lock:
            return dedup in self._claimed

    def claim(self, dedup: str) -> bool:
        """True the first time ``dedup`` is claimed (a pod's bind is replayed once)."""
        with self._lock:
            if dedup in self._claimed:
                return False
            self._claimed[dedup] = None
            while len(self._claimed) > self.remember:
                self._claimed.popitem(last=False)
            return True

    def __call__(self, ch: Change) -> None:
        if ch.initial:
            return
        if ch.kind == "Pod":
            self._pod(ch)
        elif ch.kind == "Event" and ch.type != DELETED and ch.new is not None:
            self._event(ch, ch.new)

    def _pod(self, ch: Change) -> None:
        new, old = ch.new, ch.old
        if new is None or not node_name(new) or (old is not None and node_name(old)):
            return
        if old is None and not ch.relist:
            return  # created with spec.nodeName: bound by its creator, not by a scheduler
        md = new.get("metadata") or {}
        if MIRROR_POD_ANNOTATION in (md.get("annotations") or {}):
            return
        uid = str(md.get("uid") or pod_key(new))
        dedup = f"bound:{uid}"
        if not self.claim(dedup):
            return
        now = self.clock()
        self.emit(
            Trigger(
                kind=BOUND,
                source="relist" if ch.relist else "pod",
                pod=pod_key(new),
                pod_uid=uid,
                node=node_name(new),
                message=None,
                scheduler="",
                seq=ch.seq,
                rv=ch.rv,
                observed=now,
                occurred=None,
                gap=ch.relist,
                dedup=dedup,
                not_before=now + self.settle,
                pod_object=new,
            )
        )

    def _event(self, ch: Change, ev: JSON) -> None:
        io = ev.get("involvedObject") or {}
        if io.get("kind") != "Pod" or not io.get("name"):
            return
        reason = ev.get("reason")
        occurred = event_time(ev)
        now = self.clock()
        key = f"{io.get('namespace') or 'default'}/{io['name']}"
        if ch.server_time is not None:
            self.offset = ch.server_time - ch.time
        if ch.relist:
            cluster_now = self.cluster_now(ch)
            if (
                occurred is not None
                and cluster_now is not None
                and cluster_now - occurred > self.max_event_age
            ):
                # history found after a gap: too old to compare with the state now
                self.dropped += 1
                self.last_dropped = (
                    f"{reason} {key}: {cluster_now - occurred:.0f}s old by the cluster's clock "
                    f"when a relist found it (limit {self.max_event_age:.0f}s)"
                )
                return
        elif occurred is not None and ev.get("reason") in ("Scheduled", "FailedScheduling"):
            seen = occurred - now
            if self.event_offset is None or seen > self.event_offset:
                self.event_offset = seen
        uid = str(io.get("uid") or key)
        message = str(ev.get("message") or "")
        if reason == "Scheduled":
            m = _ASSIGNED.match(message.strip())
            if m is None:
                return
            self.emit(
                Trigger(
                    kind=BOUND,
                    source="event",
                    pod=key,
                    pod_uid=uid,
                    node=m.group("node"),
                    message=None,
                    scheduler=reporter(ev),
                    seq=ch.seq,
                    rv=ch.rv,
                    observed=now,
                    occurred=occurred,
                    gap=ch.relist,
                    dedup=f"bound:{uid}",
                    not_before=now + self.event_grace,
                )
            )
        elif reason == "FailedScheduling":
            count = event_count(ev)
            if (
                ch.old is not None
                and ch.old.get("message") == ev.get("message")
                and event_count(ch.old) == count
            ):
                return  # an update that says nothing new
            ev_uid = str(
                (ev.get("metadata") or {}).get("uid") or (ev.get("metadata") or {}).get("name") or ""
            )
            self.emit(
                Trigger(
                    kind=FAILED,
                    source="event",
                    pod=key,
                    pod_uid=uid,
                    node=None,
                    message=message,
                    scheduler=reporter(ev),
                    seq=ch.seq,
                    rv=ch.rv,
                    observed=now,
                    occurred=occurred,
                    gap=ch.relist,
                    dedup=f"failed:{uid}:{ev_uid}:{count}",
                    not_before=now + self.settle,
                )
            )
