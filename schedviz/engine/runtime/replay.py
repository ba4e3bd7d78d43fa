"""The replay loop: queue, one scheduling cycle per pod, assume, bind (pkg/scheduler/schedule_one.go).

Determinism, where kube-scheduler is not deterministic:
- nodes are visited as with ``parallelism: 1``: the feasible-node search starts at the moving
  ``nextStartNodeIndex`` and stops at the first node that would be one feasible node too many;
- among nodes tied for the best total, the first in snapshot order is selected (the whole tie set is
  recorded);
- a PreFilterResult's node subset is visited in node-tree order (upstream iterates a Go map).

Preemption (``ReplayOptions.preemption``): with "evict", a successful preemption deletes its victims
at the preemptor's cycle time, nominates the preemptor to the node (status.nominatedNodeName) and
re-adds it to the scheduling queue (runtime/queue.py), where it waits out its backoff and comes back
for another cycle (a record with the next ``attempt``). Only preemptors are retried: no other failed
pod is re-added. Nominated pods, the snapshot's included, are honoured by every later Filter run
(``Framework.run_filter_with_nominated_pods``). With "dry-run" preemption changes nothing: the
victims stay, nobody is nominated by it and the preemptor is not retried.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..budget import STOP, Budget, Interrupted, ReplayStopped
from ..cluster import ClusterState
from ..config import SchedulerConfig, load_config
from ..errors import InputError
from ..framework import (
    Clock,
    Code,
    CycleState,
    Handle,
    NodeToStatus,
    Nominator,
    PermitEvent,
    Status,
    WaitingPod,
    WaitingPods,
)
from ..framework.cycle_state import BARE_NODE_INFOS
from ..loader import Snapshot
from ..objects import Pod
from ..trace import BINDING, NOT_EVALUATED, CycleRecord, ReplayTrace, narrowest
from . import extenders as ext
from .framework import CycleError, Framework, ReasonTable, Stage, attach_stage_details
from .queue import POP_FROM_BACKOFF_Q, ClusterApi, SchedulingQueue

IntArray = npt.NDArray[np.int64]

# pkg/scheduler/schedule_one.go
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODE_AVAILABLE = "0/{} nodes are available"
ERR_NO_NODES = "no nodes available to schedule pods"

# ReplayOptions.preemption
EVICT = "evict"
DRY_RUN = "dry-run"
PREEMPTION_MODES = (EVICT, DRY_RUN)


@dataclass
class ReplayOptions:
    """How to replay.

    ``cycle_seconds``: replay time each queue entry takes. The replay clock starts at the latest
    creationTimestamp of the snapshot's objects (0 when none has one); the first pod of the queue
    is tried at that time and every later one ``cycle_seconds`` after the previous one. Permit
    timers fire on the way (a deadline equal to a cycle's time fires before that cycle); once the
    queue is empty, the clock jumps from deadline to deadline until no pod waits at Permit.

    ``preemption``: "evict" (victims of a successful preemption are deleted, the preemptor is
    nominated and retried after its backoff) or "dry-run" (preemption is only recorded).

    ``budget``: wall-clock bounds (engine/budget.py). A cycle that runs past its limit ends as
    ``Error`` with the reason and the replay goes on with the next pod; building the scheduler past
    it raises ``WorkLimitExceeded``; ``Budget.stop`` ends the replay (``ReplayStopped``). None: no
    bound (the command line's default).
    """

    all_nodes: bool = False
    features: dict[str, bool] = field(default_factory=dict)
    cycle_seconds: float = 0.01
    preemption: str = EVICT
    # how extenders reach the network (runtime/extenders.py Transport); None: the process's transport
    extender_transport: ext.Transport | None = None
    budget: Budget | None = None


def start_time(snapshot: Snapshot) -> float:
    """The replay clock's start: the latest creationTimestamp among the snapshot's objects, or 0."""
    times = [
        o.meta.creation
        for o in (*snapshot.nodes, *snapshot.pods, *snapshot.objects)
        if o.meta.creation is not None
    ]
    return max(times, default=0.0)


def num_feasible_nodes_to_find(percentage: int | None, global_percentage: int | None, num_all: int) -> int:
    """schedule_one.go numFeasibleNodesToFind."""
    if num_all < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all
    pct = percentage if percentage is not None else (global_percentage or 0)
    if pct == 0:
        pct = 50 - num_all // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all * pct // 100
    if n < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return n


def fit_error_message(
    num_all: int, prefilter_msg: str, statuses: dict[int, Status], absent: Status, post_filter_msg: str
) -> str:
    """framework/types.go FitError.Error: the reasons histogram, sorted as strings."""
    msg = NO_NODE_AVAILABLE.format(num_all) + ":"
    if prefilter_msg:
        msg += f" {prefilter_msg}."
    else:
        counts: dict[str, int] = {}
        for s in statuses.values():
            for r in s.reasons:
                counts[r] = counts.get(r, 0) + 1
        if len(statuses) < num_all:
            for r in absent.reasons:
                counts[r] = counts.get(r, 0) + num_all - len(statuses)
        parts = sorted(f"{v} {k}" for k, v in counts.items())
        if parts:
            msg += " " + ", ".join(parts) + "."
    if post_filter_msg:
        msg += " " + post_filter_msg
    return msg


class Replay:
    """Replays the pending pods of a snapshot through the configured profiles."""

    def __init__(
        self,
        snapshot: Snapshot,
        config: SchedulerConfig | None = None,
        options: ReplayOptions | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.options = options or ReplayOptions()
        if self.options.preemption not in PREEMPTION_MODES:
            raise InputError(
                f"unsupported preemption mode {self.options.preemption!r}: evict or dry-run",
                field="preemption",
            )
        budget = self.options.budget
        if budget is None:
            self._build(config)
        else:
            # as bounded as a cycle: hundreds of profiles, a cluster of 100,000 pods
            with budget.phase("building the scheduler"):
                self._build(config)

    def _build(self, config: SchedulerConfig | None) -> None:
        snapshot = self.snapshot
        if config is None:
            config = load_config(snapshot.config)
        self.config = config
        # scheduler.go buildExtenders: non-ignorable extenders first; ignoredByScheduler resources
        # go into every profile's NodeResourcesFit ignoredResources.
        self.extenders = ext.build_extenders(config, self.options.extender_transport)
        self.cluster: ClusterState = snapshot.cluster()
        # Replay time and the pods waiting at Permit, shared by every profile (scheduler.go).
        self.clock = Clock(start_time(snapshot))
        self.waiting = WaitingPods(self.clock)
        self._informer_pods = [p for p in snapshot.pods if not p.terminal]
        # The scheduling queue's nominator and, when the replay evicts, its API server stand-in.
        self.nominator = Nominator()
        self.api: ClusterApi | None = None
        if self.options.preemption == EVICT:
            self.api = ClusterApi(self.cluster, self._informer_pods, self.nominator, self.clock)
        self.handle = self._new_handle("")
        self.frameworks: dict[str, Framework] = {}
        for prof in ext.profiles_with_ignored_resources(config):
            self.frameworks[prof.scheduler_name] = Framework(prof, self._new_handle(prof.scheduler_name))
        self.reasons = ReasonTable()
        self.next_start_node_index = 0
        self.trace = ReplayTrace(
            self.cluster.names,
            self.reasons.items,
            {
                "allNodes": self.options.all_nodes,
                "profiles": [p.scheduler_name for p in config.profiles],
                "preemption": self.options.preemption,
            },
        )
        self._seq = 0
        self._preview = False
        self._target: Pod | None = None
        self._stop_before: str | None = None
        # the records from where the replay stands, one generator across ``run_until``/``run_through``
        self._steps: Iterator[CycleRecord] | None = None
        self.stepped = 0  # the number of the last record ``run_through`` ran
        self._queue: SchedulingQueue | None = None
        # handleSchedulingFailure's nominatingInfo for the cycle being run: None is ModeNoop (keep
        # the pod's nomination), a string ModeOverride ("" clears it); whether PostFilter set it and
        # whether a preemption succeeded
        self._nominating: str | None = ""
        self._nominated_by_post_filter = False
        self._preempted = False
        self._nominate_pending_pods()

    def _new_handle(self, profile: str) -> Handle:
        h = Handle(self.cluster, self.options.features, profile)
        h.waiting_pods = self.waiting
        h.pods = self._informer_pods
        h.extenders = self.extenders
        h.nominator = self.nominator
        h.api = self.api
        return h

    def _nominate_pending_pods(self) -> None:
        """Pending pods with a status.nominatedNodeName are nominated when they enter the queue
        (scheduling_queue.go moveToActiveQ -> addNominatedPod, ModeNoop); gated pods are not."""
        if not any(p.nominated_node_name for p in self.snapshot.pending):
            return
        for pod in self.queue():
            if not pod.nominated_node_name:
                continue
            fw = self.frameworks.get(pod.scheduler_name)
            if fw is None or not fw.run_pre_enqueue(pod, []).is_success():
                continue
            self.nominator.add(pod, None)

    # ----- queue -------------------------------------------------------------------------
    def queue(self) -> list[Pod]:
        """Pending pods in QueueSort order (the first profile's QueueSort; upstream requires one for all)."""
        pending = self.snapshot.pending
        fw = next(iter(self.frameworks.values()), None)
        if fw is None or not fw.queue_sort:
            return sorted(pending, key=lambda p: p.index)
        qs = fw.queue_sort[0]

        def cmp(a: Pod, b: Pod) -> int:
            if qs.less(a, b):
                return -1
            if qs.less(b, a):
                return 1
            return a.index - b.index

        return sorted(pending, key=functools.cmp_to_key(cmp))

    def release(self) -> None:
        """Drop the cluster state and the pods this replay holds (its records stay). The framework's
        objects refer to one another, so without this a finished replay of 150,000 pods waits for a
        full garbage collection (seconds, the whole process stopped) to be freed; after it, what it
        held is freed as soon as its snapshot is. The replay cannot go on afterwards."""
        self._informer_pods.clear()  # the list the cluster API and the plugins' handles share
        self._queue = None
        self.cluster.release()

    def run(self, on_cycle: Callable[[CycleRecord], None] | None = None) -> ReplayTrace:
        for rec in self.cycles():
            if on_cycle is not None:
                on_cycle(rec)
        return self.trace

    def cycles(self) -> Iterator[CycleRecord]:
        """Every record, in order: one per queued pod (and one per retry of a preemptor), plus a
        Binding record for each pod that waited at Permit, right after the record during which it
        was allowed or rejected (or at the deadline where it timed out)."""
        yield from self._run()

    def _stepper(self) -> Iterator[CycleRecord]:
        if self._steps is None:
            self._steps = self._run()
        return self._steps

    def run_until(self, pod_key: str) -> Pod:
        """Run (and record) the cycles of the pods queued before ``pod_key``; return that pod, whose
        first cycle has not run yet (the clock is at its time). KeyError when ``pod_key``
        ("namespace/name") is not a pending pod.

        It goes on from where ``run_through`` left the replay; afterwards the replay can only be
        driven by hand (``schedule_one``): the queue has handed the pod out."""
        self._target = None
        self._stop_before = pod_key
        try:
            for _ in self._stepper():
                pass
        finally:
            self._stop_before = None
        if self._target is None:
            raise KeyError(pod_key)
        return self._target

    def run_through(self, seq: int) -> CycleRecord | None:
        """Run (and record) records until one numbered ``seq`` or later has run, or the replay has
        no more; the last record run (None when none ran: ``stepped`` was already at ``seq``).
        Later calls, and ``run_until``, go on from there, exactly as one uninterrupted ``cycles()``
        would: a replay can be stood at a cycle, looked at, and moved on."""
        last: CycleRecord | None = None
        steps = self._stepper()
        while self.stepped < seq:
            rec = next(steps, None)
            if rec is None:
                break
            last = rec
            self.stepped = rec.seq
        return last

    def scheduling_queue(self) -> SchedulingQueue:
        """The replay's scheduling queue (runtime/queue.py), built from ``queue()`` on first use."""
        if self._queue is None:
            fw = next(iter(self.frameworks.values()), None)
            self._queue = SchedulingQueue(
                self.queue(),
                fw.queue_sort[0] if fw is not None and fw.queue_sort else None,
                self.clock,
                self.config.pod_initial_backoff_seconds,
                self.config.pod_max_backoff_seconds,
                pop_from_backoff_q=self.options.features.get(POP_FROM_BACKOFF_Q, True),
            )
        return self._queue

    def _run(self) -> Iterator[CycleRecord]:
        step = round(self.options.cycle_seconds * 1e9)
        queue = self.scheduling_queue()
        first = True
        while (at := queue.next_pop_time(self.clock.ns + (0 if first else step))) is not None:
            yield from self._advance(at)
            qp = queue.pop(self.clock.ns)
            if qp is None:  # nothing due after all (cannot happen: next_pop_time said so)
                break
            first = False
            pod = qp.pod
            if pod.key == self._stop_before and qp.attempts == 1:
                self._target = pod
                return
            rec = self.schedule_one(pod, attempt=qp.attempts)
            self.trace.cycles.append(rec)
            self._handle_failure(pod, rec)
            yield rec
            yield from self._settle()
        # The queue is empty: the clock runs from one Permit deadline to the next.
        while (nxt := self.waiting.next_deadline()) is not None:
            yield from self._advance(nxt[0])

    def _handle_failure(self, pod: Pod, rec: CycleRecord) -> None:
        """schedule_one.go handleSchedulingFailure for a cycle that did not assume the pod: update
        its nomination (AddNominatedPod, and the status patch of updatePod), and re-add a preemptor
        whose preemption succeeded to the queue (only preemptors are retried in a replay)."""
        if rec.result not in ("Unschedulable", "Error"):
            return  # assumed (its nomination went at assume), gated or not handled: never queued
        if not (self._nominated_by_post_filter and self.options.preemption == DRY_RUN):
            node = self._nominating
            self.nominator.add(pod, node)
            if node is not None and self.nominator.status_of(pod) != node:
                self.nominator.set_status(pod, node)
        if self._preempted and self.options.preemption == EVICT:
            self.scheduling_queue().requeue(pod, bool(rec.unschedulable_plugins), self.clock.ns)

    def _advance(self, target_ns: int) -> Iterator[CycleRecord]:
        """Move the clock to ``target_ns``, firing the Permit timers that expire on the way."""
        while (nxt := self.waiting.next_deadline()) is not None and nxt[0] <= target_ns:
            deadline, wp = nxt
            self.clock.advance_to(deadline)
            carry: list[PermitEvent] = []
            self.waiting.events = carry
            wp.expire()
            yield from self._settle(carry)
        self.clock.advance_to(target_ns)

    def _settle(self, carry: list[PermitEvent] | None = None) -> Iterator[CycleRecord]:
        """Finish the binding cycles of the waiting pods allowed or rejected so far, in that order."""
        while self.waiting.signalled:
            wp = self.waiting.signalled[0]
            rec = self._finish_waiting(wp, carry if carry is not None else [])
            carry = None
            self.trace.cycles.append(rec)
            yield rec

    def preview(self, pod: Pod, *, all_nodes: bool | None = None) -> CycleRecord:
        """``pod``'s cycle against the cluster as it is now, up to the choice of a node.

        PreEnqueue, PreFilter, Filter, PostFilter, PreScore, Score and selection run as in
        ``schedule_one`` (with ``all_nodes`` overriding the option when given); Reserve, Permit and
        the binding cycle do not, so a "Scheduled" result only means a node was selected. The replay
        is left as it was: cluster, start index, sequence number and trace.
        """
        saved = (self.next_start_node_index, self._seq, self.options, self.waiting.events)
        if all_nodes is not None:
            self.options = replace(self.options, all_nodes=all_nodes)
        self._preview = True
        self.waiting.dry_run = True  # plugins must not allow, reject or change lasting state
        attempt = max(1, self._queue.attempts_of(pod)) if self._queue is not None else 1
        try:
            return self.schedule_one(pod, attempt=attempt)
        finally:
            self.next_start_node_index, self._seq, self.options, self.waiting.events = saved
            self._preview = False
            self.waiting.dry_run = False

    # ----- one pod -------------------------------------------------------------------------
    def schedule_one(self, pod: Pod, attempt: int = 1) -> CycleRecord:
        budget = self.options.budget
        if budget is not None and budget.stopped is not None:
            raise ReplayStopped(budget.stopped)
        self._seq += 1
        self._nominating = ""  # clearNominatedNode, unless PostFilter says otherwise
        self._nominated_by_post_filter = False
        self._preempted = False
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None:
            return CycleRecord(
                pod=pod.key,
                profile=pod.scheduler_name,
                result="NotHandled",
                seq=self._seq,
                error=f'no profile for schedulerName "{pod.scheduler_name}"',
                time=self.clock.now(),
                attempt=attempt,
            )
        rec = CycleRecord(
            pod=pod.key,
            profile=fw.name,
            result="Scheduled",
            seq=self._seq,
            time=self.clock.now(),
            attempt=attempt,
        )
        self.waiting.events = rec.permit_events
        if self.api is not None:
            self.api.evictions = rec.evictions
            self.api.cleared = rec.cleared_nominations
        rec.filter_plugin_names = fw.filter_names
        s = fw.run_pre_enqueue(pod, rec.stages)
        if not s.is_success():
            rec.result = "Gated"
            rec.error = "pod not enqueued (PreEnqueue rejected it)"
            rec.message = s.message()
            return rec
        state = CycleState(self.cluster)
        start_index = self.next_start_node_index
        try:
            if budget is not None:
                budget.begin(self.cluster.changes)
            self._schedule(fw, state, pod, rec)
        except CycleError as exc:
            rec.result = "Error"
            rec.error = str(exc)
            rec.message = str(exc)
        except Interrupted:
            assert budget is not None
            self._stopped_cycle(budget, rec, start_index)
        finally:
            if budget is not None:
                budget.end()
            attach_stage_details(state, rec.stages)
        return rec

    def _stopped_cycle(self, budget: Budget, rec: CycleRecord, start_index: int) -> None:
        """The budget stopped the cycle inside an interruptible region (engine/budget.py): put the
        replay back as it was before that region, then record the cycle as an Error at the stage it
        was stopped in (or end the replay: ReplayStopped)."""
        budget.caught()
        for undo in reversed(budget.undo):
            undo()
        budget.undo = []
        self._undo_placements(budget.mark)
        self.next_start_node_index = start_index
        # handleSchedulingFailure as for any Error: the pod's nomination is cleared, it is not retried
        self._nominating = ""
        self._nominated_by_post_filter = False
        self._preempted = False
        if budget.cause == STOP or budget.stopped is not None:
            raise ReplayStopped(budget.stopped or "stopped")
        msg = budget.limit_message("the cycle")
        rec.result = "Error"
        rec.error = msg
        rec.message = msg
        rec.selected_node = None
        where = budget.stopped_in
        if where is not None:
            point, plugin, t0 = where
            details: dict[str, Any] = {"stopped": True}
            if budget.cycle_seconds is not None:
                details["limitSeconds"] = budget.cycle_seconds
            inner = budget.innermost
            if inner is not None and inner != (point, plugin):
                details["stoppedIn"] = f"{inner[0]}/{inner[1]}"
            micros = int((time.perf_counter() - t0) * 1_000_000)
            rec.stages.append(Stage(point, plugin, "Error", msg, micros, details))

    def _undo_placements(self, mark: int) -> None:
        """Put every pod whose placement changed since ``cluster.changes[mark]`` back where it was."""
        cluster = self.cluster
        before: dict[str, tuple[Pod, int | None]] = {}
        for sign, changed, i in cluster.changes[mark:]:
            if changed.uid not in before:
                before[changed.uid] = (changed, None if sign > 0 else i)
        for uid, (_, was) in before.items():
            now = cluster.pod_node.get(uid)
            if now is not None and now != was:
                cluster.remove_pod(cluster.pods[uid])
        for uid, (pod, was) in before.items():
            if was is not None and uid not in cluster.pod_node:
                cluster.add_pod(pod, was)

    def _schedule(self, fw: Framework, state: CycleState, pod: Pod, rec: CycleRecord) -> None:
        cluster = self.cluster
        n_all = cluster.n
        rec.filter_codes = np.full(n_all, NOT_EVALUATED, dtype=np.int8)
        rec.filter_plugins = np.full(n_all, -1, dtype=np.int16)
        rec.filter_reasons = np.full(n_all, -1, dtype=np.int32)
        if n_all == 0:
            rec.result = "Unschedulable"
            rec.message = ERR_NO_NODES
            return
        pre_res, pre_status, narrowed = fw.run_pre_filter(state, pod, rec.stages)
        statuses: dict[int, Status] = {}
        if not pre_status.is_success():
            # Every node carries the PreFilter status; the message names only it.
            rid = self.reasons.intern(pre_status.reasons)
            rec.filter_codes[:] = int(pre_status.code)
            rec.filter_reasons[:] = rid
            rec.filter_plugin_names = [*fw.filter_names, pre_status.plugin]
            rec.filter_plugins[:] = len(fw.filter_names)
            rec.unschedulable_plugins = sorted(
                narrowed | ({pre_status.plugin} if pre_status.plugin else set())
            )
            self._fail(fw, state, pod, rec, statuses, pre_status, pre_status.message())
            return

        # schedule_one.go findNodesThatFitPod: a pod nominated to a node (by an earlier preemption,
        # or in the snapshot) tries that node alone first; if it passes, it is the only feasible node.
        tried: tuple[int, int, int, int] | None = None
        nominated = self.nominator.status_of(pod)
        if nominated:
            picked, tried = self._evaluate_nominated_node(fw, state, pod, rec, nominated)
            if picked is not None:
                self._select(fw, state, pod, rec, picked)
                return

        order = cluster.tree_order
        absent = Status(Code.UnschedulableAndUnresolvable)
        if pre_res is not None and pre_res.node_names is not None:
            keep = np.zeros(n_all, dtype=bool)
            for name in pre_res.node_names:
                i = cluster.index.get(name)
                if i is not None:
                    keep[i] = True
            order = order[keep[order]]
            absent = Status(
                Code.UnschedulableAndUnresolvable,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowed))}]",
            )
            outside = ~keep
            rec.filter_codes[outside] = int(absent.code)
            rec.filter_reasons[outside] = self.reasons.intern(absent.reasons)

        num_nodes = len(order)
        if self.options.all_nodes:
            to_find = num_nodes
        else:
            to_find = num_feasible_nodes_to_find(
                fw.percentage_of_nodes_to_score, self.config.percentage_of_nodes_to_score, num_nodes
            )
        # hasExtenderFilters / hasScoring: without either, the first feasible node will do
        if not self._has_extender_filters() and not (fw.score or self._has_extender_prioritizers()):
            to_find = 1
        rec.start_index = self.next_start_node_index
        rec.nodes_to_find = to_find

        feasible: IntArray
        if num_nodes == 0:
            feasible = np.zeros(0, dtype=np.int64)
            rec.evaluation_order = feasible
            if tried is not None:
                i, code, pid, rid = tried
                rec.filter_codes[i], rec.filter_plugins[i], rec.filter_reasons[i] = code, pid, rid
                rec.evaluation_order = np.asarray([i], dtype=np.int64)
                self.next_start_node_index = (self.next_start_node_index + 1) % n_all
        elif not fw.filter:
            k = np.arange(to_find) + self.next_start_node_index
            feasible = order[k % num_nodes]
            rec.evaluation_order = feasible
            rec.filter_codes[feasible] = 0
            self.next_start_node_index = (self.next_start_node_index + len(feasible)) % n_all
        else:
            rotated = np.roll(order, -(self.next_start_node_index % num_nodes))
            timings: dict[str, int] = {}
            out = fw.run_filter_with_nominated_pods(state, pod, rotated, self.reasons, timings)
            passed = out.codes == 0
            cum = np.cumsum(passed)
            over = np.flatnonzero(passed & (cum > to_find))
            processed = int(over[0]) if len(over) else num_nodes
            seen = rotated[:processed]
            rec.evaluation_order = seen
            rec.filter_codes[seen] = out.codes[:processed]
            rec.filter_plugins[seen] = out.plugin_ids[:processed]
            rec.filter_reasons[seen] = out.reason_ids[:processed]
            feasible = seen[passed[:processed]]
            if tried is not None and not np.any(seen == tried[0]):
                # The nominated node's failed status stays in the diagnosis (and counts as a
                # processed node for the start index) even though this search did not reach it.
                i, code, pid, rid = tried
                rec.filter_codes[i], rec.filter_plugins[i], rec.filter_reasons[i] = code, pid, rid
                rec.evaluation_order = np.append(seen, i)
                processed += 1
            self.next_start_node_index = (self.next_start_node_index + processed) % n_all
            for name in fw.filter_names:
                if name in state.skip_filter_plugins:
                    continue
                rec.stages.append(Stage("Filter", name, "Success", "", timings.get(name, 0)))

        rejectors: set[str] | None = None
        ext_run: ext.FilterRun | None = None
        if self.extenders and len(feasible):
            rejectors = self._rejecting_filter_plugins(rec)  # before extender verdicts replace any
            ext_run = self._filter_extenders(state, pod, rec, feasible)
            feasible = ext_run.feasible

        rec.feasible = feasible
        if len(feasible) == 0:
            # Only a failed cycle needs every rejected node's Status (PostFilter, the message).
            assert rec.evaluation_order is not None
            codes = rec.filter_codes
            rids = rec.filter_reasons
            for i in rec.evaluation_order.tolist():
                statuses[i] = Status(Code(int(codes[i])), *self.reasons.items[int(rids[i])])
            if ext_run is not None:
                # findNodesThatPassExtenders: statuses the extenders set, wherever the node was;
                # nodes dropped without one have no status (they count as absent).
                for i in ext_run.silent:
                    statuses.pop(i, None)
                for i, st in ext_run.statuses.items():
                    statuses[i] = Status(st.code, *st.reasons)
            marker = {ext.EXTENDER_PLUGIN_NAME} if ext_run is not None and ext_run.filtered_some else set()
            if rejectors is None:
                rejectors = self._rejecting_filter_plugins(rec)
            rec.unschedulable_plugins = sorted(narrowed | rejectors | marker)
            self._fail(fw, state, pod, rec, statuses, absent, "")
            return

        self._select(fw, state, pod, rec, feasible)

    def _select(
        self, fw: Framework, state: CycleState, pod: Pod, rec: CycleRecord, feasible: IntArray
    ) -> None:
        """Score the feasible nodes (unless there is only one), pick the best, then commit."""
        if len(feasible) == 1:
            chosen = int(feasible[0])
            rec.tied = feasible.copy()
            if self.options.all_nodes:
                # Explain anyway: score the single node although the scheduler would not.
                self._score(fw, state, pod, rec, feasible)
            rec.scored = bool(self.options.all_nodes)
        else:
            chosen = self._score(fw, state, pod, rec, feasible)
        self._commit(fw, state, pod, rec, chosen)

    def _evaluate_nominated_node(
        self, fw: Framework, state: CycleState, pod: Pod, rec: CycleRecord, name: str
    ) -> tuple[IntArray | None, tuple[int, int, int, int] | None]:
        """schedule_one.go evaluateNominatedNode: Filter (nominated pods included) and the filtering
        extenders on the nominated node alone; the start index does not move.

        Returns the feasible node (an array of one) when it passes, else None and the node's
        rejection (node, code, plugin id, reason id) when Filter rejected it. A node that does not
        exist or an error only ends the attempt: the search over every node follows (upstream logs
        them)."""
        assert (
            rec.filter_codes is not None and rec.filter_plugins is not None and rec.filter_reasons is not None
        )
        i = self.cluster.index.get(name)
        if i is None:
            return None, None
        rec.tried_nominated_node = name
        node = np.asarray([i], dtype=np.int64)
        timings: dict[str, int] = {}
        if fw.filter:
            try:
                out = fw.run_filter_with_nominated_pods(state, pod, node, self.reasons, timings)
            except CycleError:
                return None, None
            code = int(out.codes[0])
            if code != 0:
                return None, (i, code, int(out.plugin_ids[0]), int(out.reason_ids[0]))
        rec.filter_codes[i] = 0
        feasible = node
        if self._has_extender_filters():
            try:
                feasible = self._filter_extenders(state, pod, rec, node).feasible
            except CycleError:
                feasible = node[:0]
            if not len(feasible):
                # the search over every node judges it again
                rec.filter_codes[i], rec.filter_plugins[i], rec.filter_reasons[i] = NOT_EVALUATED, -1, -1
                return None, None
        rec.start_index = self.next_start_node_index
        rec.nodes_to_find = 1
        rec.evaluation_order = node
        rec.feasible = feasible
        if fw.filter:
            for pname in fw.filter_names:
                if pname not in state.skip_filter_plugins:
                    rec.stages.append(Stage("Filter", pname, "Success", "", timings.get(pname, 0)))
        return feasible, None

    @staticmethod
    def _rejecting_filter_plugins(rec: CycleRecord) -> set[str]:
        """Diagnosis.AddPluginStatus over the Filter verdicts: every plugin that rejected a node."""
        if rec.evaluation_order is None or rec.filter_plugins is None or not len(rec.evaluation_order):
            return set()
        ids = rec.filter_plugins[rec.evaluation_order]
        names = rec.filter_plugin_names
        return {names[int(k)] for k in np.unique(ids[ids >= 0]).tolist() if int(k) < len(names)}

    def _filter_extenders(
        self, state: CycleState, pod: Pod, rec: CycleRecord, feasible: IntArray
    ) -> ext.FilterRun:
        """findNodesThatPassExtenders after the Filter plugins; verdicts go into the node arrays
        under the extender's name. A failing non-ignorable extender fails the cycle (Error)."""
        try:
            run = ext.run_filters(self.extenders, pod, self.cluster, feasible, rec.stages)
        except ext.ExtenderError as exc:
            raise CycleError(str(exc)) from None
        assert (
            rec.filter_codes is not None and rec.filter_plugins is not None and rec.filter_reasons is not None
        )
        names = list(rec.filter_plugin_names)
        pid: dict[str, int] = {}

        def plugin_id(name: str) -> int:
            if name not in pid:
                pid[name] = len(names)
                names.append(name)
            return pid[name]

        for i, st in run.statuses.items():
            rec.filter_codes[i] = int(st.code)
            rec.filter_plugins[i] = plugin_id(st.plugin)
            rec.filter_reasons[i] = self.reasons.intern(st.reasons)
        for i, name in run.silent.items():
            # dropped without a failure message: the absent status's code, no reasons
            rec.filter_codes[i] = int(Code.UnschedulableAndUnresolvable)
            rec.filter_plugins[i] = plugin_id(name)
            rec.filter_reasons[i] = self.reasons.intern(())
        rec.filter_plugin_names = names
        if run.bare is not None:
            state.write(BARE_NODE_INFOS, run.bare)
        return run

    def _has_extender_filters(self) -> bool:
        return any(e.is_filter() for e in self.extenders)

    def _has_extender_prioritizers(self) -> bool:
        return any(e.is_prioritizer() for e in self.extenders)

    def _score(self, fw: Framework, state: CycleState, pod: Pod, rec: CycleRecord, feasible: IntArray) -> int:
        if not fw.score:
            # prioritizeNodes: every node scores 1 when nothing scores, 0 plus the extenders' otherwise
            rec.scored = True
            rec.totals = np.full(len(feasible), 0 if self.extenders else 1, dtype=np.int64)
            rec.raw_scores = np.zeros((0, len(feasible)), dtype=np.int64)
            rec.normalized_scores = rec.raw_scores
        else:
            fw.run_pre_score(state, pod, feasible, rec.stages)
            so = fw.run_score(state, pod, feasible, rec.stages)
            rec.scored = True
            rec.score_plugins = so.plugins
            rec.score_weights = so.weights
            rec.skipped_score_plugins = [p.name for p in fw.score if p.name in state.skip_score_plugins]
            # kept in their narrowest types: a 5000-node cycle's matrices in about a fifth of the memory
            rec.raw_scores = narrowest(so.raw)
            rec.normalized_scores = narrowest(so.normalized)
            rec.totals = so.total
        if self.extenders:
            self._prioritize_extenders(pod, rec, feasible)
        totals = rec.totals
        best = int(totals.max())
        tied = feasible[totals == best]
        rec.tied = np.sort(tied)
        return int(rec.tied[0])

    def _prioritize_extenders(self, pod: Pod, rec: CycleRecord, feasible: IntArray) -> None:
        """prioritizeNodes' extender part: each prioritizer is a score column (raw = its score,
        normalized = score * MaxNodeScore/MaxExtenderPriority, weight = its weight) added to the
        total; one whose call failed gives no score and is listed as skipped."""
        assert rec.raw_scores is not None and rec.normalized_scores is not None and rec.totals is not None
        cols = ext.run_prioritize(self.extenders, pod, self.cluster, feasible, rec.stages)
        ok = [c for c in cols if c.ok]
        rec.skipped_score_plugins = [*rec.skipped_score_plugins, *(c.name for c in cols if not c.ok)]
        if not ok:
            return
        rec.score_plugins = [*rec.score_plugins, *(c.name for c in ok)]
        rec.score_weights = [*rec.score_weights, *(c.weight for c in ok)]
        rec.raw_scores = np.vstack([rec.raw_scores, *(c.raw for c in ok)])
        rec.normalized_scores = np.vstack([rec.normalized_scores, *(c.normalized for c in ok)])
        rec.totals = rec.totals + np.sum([c.weighted for c in ok], axis=0, dtype=np.int64)

    def _fail(
        self,
        fw: Framework,
        state: CycleState,
        pod: Pod,
        rec: CycleRecord,
        statuses: dict[int, Status],
        absent: Status,
        prefilter_msg: str,
    ) -> None:
        rec.result = "Unschedulable"
        n_all = self.cluster.n
        before = fit_error_message(n_all, prefilter_msg, statuses, absent, "")
        rec.message_before_post_filter = before
        post_msg = ""
        if fw.post_filter:
            result, status = fw.run_post_filter(state, pod, NodeToStatus(statuses, absent), rec.stages)
            post_msg = status.message()
            # schedulingCycle: a PostFilterResult's nominatingInfo (ModeOverride), none keeps it
            self._nominating = None if result is None else result.nominated_node_name
            self._nominated_by_post_filter = True
            self._preempted = status.is_success() and result is not None and bool(result.nominated_node_name)
            if result is not None:
                rec.post_filter = dict(result.details)
                if result.nominated_node_name:
                    rec.nominated_node = result.nominated_node_name
                    rec.post_filter["nominatedNodeName"] = result.nominated_node_name
        rec.message = fit_error_message(n_all, prefilter_msg, statuses, absent, post_msg)

    def _commit(self, fw: Framework, state: CycleState, pod: Pod, rec: CycleRecord, chosen: int) -> None:
        """Assume, Reserve, Permit, then the binding cycle (PreBind, Bind, PostBind)."""
        node = self.cluster.names[chosen]
        rec.selected_node = node
        if self._preview:
            return
        self.cluster.add_pod(pod, chosen)  # assume
        self.nominator.delete(pod)  # schedule_one.go assume: DeleteNominatedPodIfExists
        s = fw.run_reserve(state, pod, node, rec.stages)
        if not s.is_success():
            self.cluster.remove_pod(pod)
            self._reject_after_selection(rec, node, s)
            return
        s, waits = fw.run_permit(state, pod, node, rec.stages)
        if s.code == Code.Wait:
            self._wait(fw, state, pod, node, rec, waits)
            return
        if not s.is_success():
            fw.run_unreserve(state, pod, node, rec.stages)
            self.cluster.remove_pod(pod)
            self._reject_after_selection(rec, node, s)
            return
        # The binding cycle (schedule_one.go bindingCycle).
        s = fw.run_pre_bind_pre_flight(state, pod, node, rec.stages)
        if s.code == Code.Error:
            self._binding_failed(fw, state, pod, node, rec, s)
            return
        self._bind(fw, state, pod, node, rec)

    def _bind(self, fw: Framework, state: CycleState, pod: Pod, node: str, rec: CycleRecord) -> None:
        """PreBind, Bind and PostBind: the binding cycle once Permit let the pod through."""
        s = fw.run_pre_bind(state, pod, node, rec.stages)
        if s.is_success():
            # schedule_one.go bind: an interested binder extender binds instead of the Bind plugins
            bound = ext.run_bind(self.extenders, pod, node, rec.stages) if self.extenders else None
            s = bound if bound is not None else fw.run_bind(state, pod, node, rec.stages)
        if not s.is_success():
            self._binding_failed(fw, state, pod, node, rec, s)
            return
        fw.run_post_bind(state, pod, node, rec.stages)
        rec.result = "Scheduled"

    def _binding_failed(
        self, fw: Framework, state: CycleState, pod: Pod, node: str, rec: CycleRecord, s: Status
    ) -> None:
        """schedule_one.go handleBindingCycleError: Unreserve, then forget the assumed pod."""
        fw.run_unreserve(state, pod, node, rec.stages)
        self.cluster.remove_pod(pod)
        rec.result = "Error"
        rec.error = s.message()
        rec.message = s.message()

    def _wait(
        self, fw: Framework, state: CycleState, pod: Pod, node: str, rec: CycleRecord, waits: dict[str, int]
    ) -> None:
        """Permit answered Wait: the pod keeps its place on the node (it stays assumed) and waits.

        Its binding cycle starts at once and runs PreBindPreFlight before it blocks in WaitOnPermit
        (schedule_one.go bindingCycle); a PreBindPreFlight error ends it there. The rest runs in a
        Binding record when the pod is allowed, rejected or times out (``_finish_waiting``).
        """
        rec.result = "Waiting"
        wp = self.waiting.add(pod, node, waits)
        wp.context = (fw, state, rec.seq, rec.attempt)
        s = fw.run_pre_bind_pre_flight(state, pod, node, rec.stages)
        if s.code == Code.Error:
            # Upstream leaves the pod in the waiting map, where signals no longer reach anything.
            self.waiting.remove(pod.uid)
            self._binding_failed(fw, state, pod, node, rec, s)

    def _finish_waiting(self, wp: WaitingPod, events: list[PermitEvent]) -> CycleRecord:
        """The Binding record of a pod that waited at Permit: WaitOnPermit returned (bindingCycle).

        Allowed: PreBind, Bind, PostBind at the current replay time. Rejected (by a plugin or a
        timeout): Unreserve in reverse order and the pod is forgotten; the message is the FitError
        of the one node it held, as upstream builds it.
        """
        fw, state, follows, attempt = wp.context
        pod, node = wp.pod, wp.node
        self._seq += 1
        rec = CycleRecord(
            pod=pod.key,
            profile=fw.name,
            result="Scheduled",
            seq=self._seq,
            selected_node=node,
            time=self.clock.now(),
            kind=BINDING,
            follows=follows,
            permit_events=events,
            attempt=attempt,
        )
        self.waiting.events = rec.permit_events
        self.waiting.remove(pod.uid)  # WaitOnPermit's deferred remove
        status = wp.status if wp.status is not None else Status.success()
        if status.is_success():
            self._bind(fw, state, pod, node, rec)
        else:
            fw.run_unreserve(state, pod, node, rec.stages)
            self.cluster.remove_pod(pod)
            self._reject_after_selection(rec, node, status)
        attach_stage_details(state, rec.stages)
        return rec

    def _reject_after_selection(self, rec: CycleRecord, node: str, s: Status) -> None:
        if s.is_rejected():
            rec.result = "Unschedulable"
            rec.message = fit_error_message(1, "", {0: s}, Status(Code.UnschedulableAndUnresolvable), "")
        else:
            rec.result = "Error"
            rec.message = s.message()
            rec.error = s.message()
        rec.selected_node = None
        del node


def replay(
    snapshot: Snapshot, config: SchedulerConfig | None = None, options: ReplayOptions | None = None
) -> ReplayTrace:
    """Replay every pending pod of ``snapshot``; returns the trace."""
    return Replay(snapshot, config, options).run()


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    return fn(), time.perf_counter() - t0
