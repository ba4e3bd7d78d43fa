"""Pods held at Permit, and the replay clock (framework/runtime/waiting_pods_map.go).

kube-scheduler keeps a pod whose Permit plugins answered Wait in a map shared by every profile. The
pod keeps its assumed place on its node while its binding cycle blocks until one signal arrives:
Success once every plugin that asked it to wait has allowed it, or Unschedulable when a plugin
rejects it or when the timer of one of those plugins fires ("rejected due to timeout after waiting
<d> at plugin <p>"). Only the first signal counts (upstream sends it, without blocking, into a
channel that holds one).

A replay has neither goroutines nor a wall clock: time is the replay ``Clock``, a timer is a
deadline the replay checks between cycles, and a signalled pod is completed by the replay right
after the record during which the signal arrived (``Replay`` in runtime/replay.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..apimachinery import format_duration
from .status import Code, Status

if TYPE_CHECKING:
    from ..objects import Pod

NS_PER_SECOND = 1_000_000_000
# framework/runtime/framework.go maxTimeout: no pod waits longer at Permit.
MAX_TIMEOUT_NS = 15 * 60 * NS_PER_SECOND

WAIT = "Wait"
ALLOW = "Allow"
REJECT = "Reject"


def seconds_to_ns(seconds: float) -> int:
    return round(seconds * NS_PER_SECOND)


class Clock:
    """Replay time: ``start`` (seconds since the Unix epoch) plus ``ns`` nanoseconds elapsed since.

    Elapsed time is kept in integer nanoseconds, as Go's time.Duration, so that deadlines compare
    exactly.
    """

    def __init__(self, start: float = 0.0) -> None:
        self.start = start
        self.ns = 0

    def now(self) -> float:
        """The current replay time, in seconds since the Unix epoch."""
        return self.at(self.ns)

    def at(self, ns: int) -> float:
        return self.start + ns / NS_PER_SECOND

    def advance_to(self, ns: int) -> None:
        """Move the clock forward to ``ns`` (never backward)."""
        if ns > self.ns:
            self.ns = ns


@dataclass
class PermitEvent:
    """Something that happened to a pod waiting at Permit, at replay time ``time``.

    ``action``: ``Wait`` (a Permit plugin asked the pod to wait; ``timeout`` in seconds), ``Allow``
    (a plugin that had asked it to wait allowed it) or ``Reject`` (a plugin, or a timer, rejected
    it; ``plugin`` is empty when the runtime rejected it through ``RejectWaitingPod``).
    """

    time: float
    pod: str
    action: str
    plugin: str
    node: str = ""
    message: str = ""
    timeout: float | None = None


class WaitingPod:
    """One pod waiting at Permit (waiting_pods_map.go waitingPod)."""

    def __init__(self, owner: WaitingPods, pod: Pod, node: str, timeouts: dict[str, int]) -> None:
        self._owner = owner
        self.pod = pod
        self.node = node
        self.since_ns = owner.clock.ns
        # plugin -> how long it lets the pod wait (ns); plugin -> deadline (ns) while it has not allowed
        self.timeouts: dict[str, int] = dict(timeouts)
        self.pending: dict[str, int] = {p: self.since_ns + t for p, t in timeouts.items()}
        # The signal: Success (every plugin allowed) or Unschedulable (rejected); None while waiting.
        self.status: Status | None = None
        self.signalled_ns: int | None = None
        # What the runtime needs to finish the binding cycle (framework, cycle state, record seq).
        self.context: Any = None

    def get_pod(self) -> Pod:
        return self.pod

    def get_pending_plugins(self) -> list[str]:
        """The plugins that asked the pod to wait and have not allowed it yet, in profile order."""
        return list(self.pending)

    def allow(self, plugin: str) -> None:
        """``plugin`` allows the pod; once every waiting plugin has, the pod is signalled Success."""
        if self._owner.dry_run or self.status is not None:
            return
        if plugin in self.pending:
            del self.pending[plugin]
            self._owner.record(ALLOW, self, plugin)
        if not self.pending:
            self._owner.signal(self, Status.success())

    def reject(self, plugin: str, message: str) -> None:
        """``plugin`` rejects the pod: it is signalled Unschedulable with ``message``."""
        if self._owner.dry_run or self.status is not None:
            return
        self._owner.record(REJECT, self, plugin, message)
        self._owner.signal(self, Status(Code.Unschedulable, message, plugin=plugin))

    def deadline(self) -> tuple[int, str] | None:
        """The first timer to fire, (deadline ns, plugin); None once signalled.

        Timers that fire at the same instant fire in profile order (upstream: in any order).
        """
        if self.status is not None or not self.pending:
            return None
        plugin = min(self.pending, key=self.pending.__getitem__)
        return self.pending[plugin], plugin

    def expire(self) -> None:
        """The first timer fires (waiting_pods_map.go newWaitingPod's time.AfterFunc)."""
        first = self.deadline()
        if first is None:
            return
        plugin = first[1]
        waited = format_duration(self.timeouts[plugin])  # time.Duration.String
        self.reject(plugin, f"rejected due to timeout after waiting {waited} at plugin {plugin}")


class WaitingPods:
    """The pods waiting at Permit, shared by every profile (waiting_pods_map.go waitingPodsMap).

    Iteration is in the order pods started waiting (upstream iterates a Go map). ``events`` is where
    Wait/Allow/Reject events go: the runtime points it at the trace record being produced.
    ``signalled`` lists the pods allowed or rejected and not yet completed by the runtime.
    ``dry_run`` (set while the replay previews a cycle) makes Allow and Reject do nothing.
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock if clock is not None else Clock()
        self.events: list[PermitEvent] = []
        self.signalled: list[WaitingPod] = []
        self.dry_run = False
        self._pods: dict[str, WaitingPod] = {}

    def add(self, pod: Pod, node: str, timeouts: dict[str, int]) -> WaitingPod:
        """Hold ``pod`` on ``node``; ``timeouts``: each waiting plugin's timeout in ns."""
        wp = WaitingPod(self, pod, node, timeouts)
        self._pods[pod.uid] = wp
        for plugin, t in timeouts.items():
            self.record(WAIT, wp, plugin, timeout=t / NS_PER_SECOND)
        return wp

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def remove(self, uid: str) -> None:
        wp = self._pods.pop(uid, None)
        if wp is not None and wp in self.signalled:
            self.signalled.remove(wp)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)

    def next_deadline(self) -> tuple[int, WaitingPod] | None:
        """The waiting pod whose timer fires first (ties: the pod that started waiting first)."""
        best: tuple[int, WaitingPod] | None = None
        for wp in self._pods.values():
            d = wp.deadline()
            if d is not None and (best is None or d[0] < best[0]):
                best = (d[0], wp)
        return best

    def record(
        self, action: str, wp: WaitingPod, plugin: str, message: str = "", timeout: float | None = None
    ) -> None:
        self.events.append(
            PermitEvent(self.clock.now(), wp.pod.key, action, plugin, wp.node, message, timeout)
        )

    def signal(self, wp: WaitingPod, status: Status) -> None:
        wp.status = status
        wp.signalled_ns = self.clock.ns
        self.signalled.append(wp)
