"""The scheduling queue of a replay, and the replay's stand-in for the API server during preemption.

Mirrors what pkg/scheduler/backend/queue (scheduling_queue.go, active_queue.go, backoff_queue.go)
does for the pods a replay schedules, on the replay clock:

- the activeQ holds the pending pods in QueueSort order; a pod popped from it gets one more attempt;
- a pod retried after a failed cycle is re-added with its queue timestamp set to the failure time
  (``pInfo.Timestamp``) and waits in the backoffQ: ``podInitialBackoffSeconds`` doubled for each
  earlier failure, at most ``podMaxBackoffSeconds`` (calculateBackoffDuration); the count is the
  pod's unschedulable count, or its consecutive error count after a failure no plugin owned;
- with the SchedulerPopFromBackoffQ feature (on by default in v1.35), a backoff expiry is rounded
  down to the whole second (the ordering window), the backoffQ is flushed into the activeQ at every
  whole second, a pod counts as backing off while its expiry is not before the current window, and
  when the activeQ is empty the scheduler pops the backoffQ's head at once (earliest expiry, then
  QueueSort order), backoff or not. With the feature off, expiries are exact, the flush runs every
  second from the replay's start and the scheduler waits for it.

Only the replay's preemptors are ever re-added (runtime/replay.py): pods that failed for any other
reason stay out of the queue, as if no cluster event ever moved them back.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..cluster import ClusterState
from ..framework import Clock, Nominator, QueueSortPlugin
from ..objects import Pod
from ..trace import ClearedNomination, Eviction

NS = 1_000_000_000
# backoff_queue.go backoffQOrderingWindowDuration
WINDOW_NS = NS
POP_FROM_BACKOFF_Q = "SchedulerPopFromBackoffQ"


@dataclass
class QueuedPod:
    """framework.QueuedPodInfo: a pod and its queue bookkeeping (times in replay ns)."""

    pod: Pod
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors: int = 0
    # when the pod was last re-added after a failure (None: never; QueueSort then reads the pod's
    # creationTimestamp, as the replay's PrioritySort does for every pod of the snapshot)
    timestamp_ns: int | None = None
    backoff_ns: int = 0  # when its backoff ends (getBackoffTime)
    release_ns: int = 0  # the backoffQ flush that moves it to the activeQ
    error_backoff: bool = False  # in podErrorBackoffQ (no plugin owned the failure)


class SchedulingQueue:
    """activeQ and backoffQ of one replay; every profile shares it."""

    def __init__(
        self,
        pods: list[Pod],
        queue_sort: QueueSortPlugin | None,
        clock: Clock,
        initial_backoff_seconds: int,
        max_backoff_seconds: int,
        pop_from_backoff_q: bool = True,
    ) -> None:
        self.clock = clock
        self.queue_sort = queue_sort
        self.initial_ns = initial_backoff_seconds * NS
        self.max_ns = max_backoff_seconds * NS
        self.pop_from_backoff_q = pop_from_backoff_q
        self._info: dict[str, QueuedPod] = {}
        self._active: list[QueuedPod] = []
        for p in pods:  # already in QueueSort order
            qp = self._info.setdefault(p.uid, QueuedPod(p))
            self._active.append(qp)
        self._head = 0
        self._backoff: list[QueuedPod] = []
        self._sort_key: Callable[[QueuedPod], Any] = functools.cmp_to_key(self._cmp)
        # The replay clock's start in integer ns since the epoch (windows are whole epoch seconds).
        whole = math.floor(clock.start)
        self._start_abs_ns = whole * NS + round((clock.start - whole) * NS)

    # ----- order -------------------------------------------------------------------------
    def _cmp(self, a: QueuedPod, b: QueuedPod) -> int:
        qs = self.queue_sort
        if qs is None:
            return a.pod.index - b.pod.index
        if getattr(qs, "name", "") == "PrioritySort":
            ka, kb = self._priority_sort_key(a), self._priority_sort_key(b)
            return -1 if ka < kb else (1 if kb < ka else 0)
        if qs.less(a.pod, b.pod):
            return -1
        if qs.less(b.pod, a.pod):
            return 1
        return a.pod.index - b.pod.index

    def _priority_sort_key(self, qp: QueuedPod) -> tuple[int, int, float, int]:
        """queuesort/priority_sort.go Less: higher priority, then the earlier queue timestamp."""
        if qp.timestamp_ns is not None:
            return (-qp.pod.prio, 1, self.clock.at(qp.timestamp_ns), qp.pod.index)
        created = qp.pod.meta.creation
        return (-qp.pod.prio, 0 if created is None else 1, created or 0.0, qp.pod.index)

    # ----- popping -----------------------------------------------------------------------
    def __bool__(self) -> bool:
        return self._head < len(self._active) or bool(self._backoff)

    def attempts_of(self, pod: Pod) -> int:
        qp = self._info.get(pod.uid)
        return 0 if qp is None else qp.attempts

    def next_pop_time(self, earliest_ns: int) -> int | None:
        """The first replay time at or after ``earliest_ns`` when ``pop`` returns a pod; None when
        the queue is empty."""
        if self._head < len(self._active):
            return earliest_ns
        candidates = [qp for qp in self._backoff if not qp.error_backoff] if self.pop_from_backoff_q else []
        if candidates:
            return earliest_ns
        if not self._backoff:
            return None
        return max(earliest_ns, min(qp.release_ns for qp in self._backoff))

    def pop(self, now_ns: int) -> QueuedPod | None:
        """activeQueue.pop at replay time ``now_ns`` (after the backoffQ flushes due by then)."""
        self.flush(now_ns)
        qp: QueuedPod | None = None
        if self._head < len(self._active):
            qp = self._active[self._head]
            self._head += 1
            if self._head > 1024 and self._head * 2 > len(self._active):
                del self._active[: self._head]
                self._head = 0
        elif self.pop_from_backoff_q:
            candidates = [q for q in self._backoff if not q.error_backoff]
            if candidates:
                # lessBackoffCompletedWithPriority: earliest backoff expiry, then QueueSort order
                qp = min(candidates, key=lambda q: (q.backoff_ns, self._sort_key(q)))
                self._backoff.remove(qp)
        if qp is not None:
            qp.attempts += 1
        return qp

    def flush(self, now_ns: int) -> None:
        """flushBackoffQCompleted at every flush instant up to ``now_ns``: pods whose backoff is
        over move to the activeQ."""
        due = [qp for qp in self._backoff if qp.release_ns <= now_ns]
        for qp in due:
            self._backoff.remove(qp)
            self._insert_active(qp)

    def _insert_active(self, qp: QueuedPod) -> None:
        key = self._sort_key(qp)
        lo, hi = self._head, len(self._active)
        while lo < hi:
            mid = (lo + hi) // 2
            if key < self._sort_key(self._active[mid]):
                hi = mid
            else:
                lo = mid + 1
        self._active.insert(lo, qp)

    # ----- re-adding a pod after a failed cycle ------------------------------------------
    def requeue(self, pod: Pod, unschedulable: bool, now_ns: int) -> QueuedPod:
        """AddUnschedulableIfNotPresent, then the requeue its preemption's pod deletions trigger
        (queueAfterBackoff): the backoffQ while the pod backs off, the activeQ otherwise.

        ``unschedulable``: plugins rejected the pod (its FitError named some); otherwise the
        failure counts as an error (ConsecutiveErrorsCount)."""
        qp = self._info.setdefault(pod.uid, QueuedPod(pod))
        if unschedulable:
            qp.unschedulable_count += 1
            qp.consecutive_errors = 0
        else:
            qp.consecutive_errors += 1
        qp.error_backoff = not unschedulable
        qp.timestamp_ns = now_ns
        qp.backoff_ns = self._backoff_time(qp)
        if self._backing_off(qp, now_ns):
            qp.release_ns = self._release_time(qp)
            self._backoff.append(qp)
        else:
            self._insert_active(qp)
        return qp

    def backoff_duration_ns(self, count: int) -> int:
        """backoff_queue.go calculateBackoffDuration."""
        if count == 0:
            return 0
        shift = count - 1
        if self.initial_ns > self.max_ns >> shift:
            return self.max_ns
        return self.initial_ns << shift

    def _backoff_time(self, qp: QueuedPod) -> int:
        """getBackoffTime (replay ns): the failure time plus the backoff, rounded down to the
        ordering window with SchedulerPopFromBackoffQ."""
        count = qp.consecutive_errors if qp.consecutive_errors > 0 else qp.unschedulable_count
        assert qp.timestamp_ns is not None
        if self.max_ns == 0 or count == 0:
            return qp.timestamp_ns
        return self._align(qp.timestamp_ns + self.backoff_duration_ns(count))

    def _align(self, ns: int) -> int:
        if not self.pop_from_backoff_q:
            return ns
        absolute = self._start_abs_ns + ns
        return absolute - absolute % WINDOW_NS - self._start_abs_ns

    def _backing_off(self, qp: QueuedPod, now_ns: int) -> bool:
        """isPodBackingoff: the expiry is not before the current window (the current time without
        SchedulerPopFromBackoffQ)."""
        return qp.backoff_ns >= self._align(now_ns)

    def _release_time(self, qp: QueuedPod) -> int:
        """The first backoffQ flush at which the pod no longer backs off: flushes run at every whole
        epoch second with SchedulerPopFromBackoffQ, every second from the replay's start without."""
        if self.pop_from_backoff_q:
            # backoff_ns is a window boundary; the flush there still sees the pod backing off
            return qp.backoff_ns + WINDOW_NS
        return (qp.backoff_ns // NS + 1) * NS


class ClusterApi:
    """What DefaultPreemption asks the API server to do, played at once on the replay's cluster.

    ``preempt_pod`` deletes a victim as with a zero grace period: it leaves its node, the informer's
    pod list and any nomination at the current replay time. ``clear_nominated_node_name`` patches
    lower-priority pods' ``status.nominatedNodeName`` to "" (preemption.go clearNominatedNodeName),
    which takes them out of the nominator. Both record what they did in the lists the replay points
    at the record being produced.
    """

    def __init__(
        self, cluster: ClusterState, informer_pods: list[Pod], nominator: Nominator, clock: Clock
    ) -> None:
        self.cluster = cluster
        self.informer_pods = informer_pods
        self.nominator = nominator
        self.clock = clock
        self.evictions: list[Eviction] = []
        self.cleared: list[ClearedNomination] = []

    def preempt_pod(self, victim: Pod, preemptor: Pod, node: str) -> None:
        if victim.uid in self.cluster.pod_node:
            self.cluster.remove_pod(victim)
        for k, p in enumerate(self.informer_pods):
            if p.uid == victim.uid:
                del self.informer_pods[k]
                break
        self.nominator.delete(victim)
        self.evictions.append(Eviction(self.clock.now(), victim.key, node, preemptor.key))

    def clear_nominated_node_name(self, pods: list[Pod], node: str) -> None:
        for p in pods:
            if not self.nominator.status_of(p) and self.nominator.node_of(p) is None:
                continue
            self.nominator.set_status(p, "")
            self.nominator.delete(p)
            self.cleared.append(ClearedNomination(self.clock.now(), p.key, node))
