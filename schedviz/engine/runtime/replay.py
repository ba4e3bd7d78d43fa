"""The replay loop: queue, one scheduling cycle per pod, assume, bind (pkg/scheduler/schedule_one.go).

Determinism, where kube-scheduler is not deterministic:
- nodes are visited as with ``parallelism: 1``: the feasible-node search starts at the moving
  ``nextStartNodeIndex`` and stops at the first node that would be one feasible node too many;
- among nodes tied for the best total, the first in snapshot order is selected (the whole tie set is
  recorded);
- a PreFilterResult's node subset is visited in node-tree order (upstream iterates a Go map).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..cluster import ClusterState
from ..config import SchedulerConfig, load_config
from ..framework import Code, CycleState, Handle, NodeToStatus, Status
from ..loader import Snapshot
from ..objects import Pod
from ..trace import NOT_EVALUATED, CycleRecord, ReplayTrace
from . import registry
from .framework import CycleError, Framework, ReasonTable, Stage

IntArray = npt.NDArray[np.int64]

# pkg/scheduler/schedule_one.go
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODE_AVAILABLE = "0/{} nodes are available"
ERR_NO_NODES = "no nodes available to schedule pods"


@dataclass
class ReplayOptions:
    all_nodes: bool = False
    features: dict[str, bool] = field(default_factory=dict)


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
        if config is None:
            config = load_config(snapshot.config, implements=registry.implements_table())
        self.config = config
        self.cluster: ClusterState = snapshot.cluster()
        self.handle = Handle(self.cluster, self.options.features)
        self.frameworks: dict[str, Framework] = {}
        for prof in config.profiles:
            self.frameworks[prof.scheduler_name] = Framework(
                prof, Handle(self.cluster, self.options.features, prof.scheduler_name)
            )
        self.reasons = ReasonTable()
        self.next_start_node_index = 0
        self.trace = ReplayTrace(
            self.cluster.names,
            self.reasons.items,
            {"allNodes": self.options.all_nodes, "profiles": [p.scheduler_name for p in config.profiles]},
        )
        self._seq = 0
        self._preview = False

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

    def run(self, on_cycle: Callable[[CycleRecord], None] | None = None) -> ReplayTrace:
        for rec in self.cycles():
            if on_cycle is not None:
                on_cycle(rec)
        return self.trace

    def cycles(self) -> Iterator[CycleRecord]:
        for pod in self.queue():
            rec = self.schedule_one(pod)
            self.trace.cycles.append(rec)
            yield rec

    def run_until(self, pod_key: str) -> Pod:
        """Run (and record) the cycles of the pods queued before ``pod_key``; return that pod, whose
        cycle has not run yet. KeyError when ``pod_key`` ("namespace/name") is not a pending pod."""
        for pod in self.queue():
            if pod.key == pod_key:
                return pod
            self.trace.cycles.append(self.schedule_one(pod))
        raise KeyError(pod_key)

    def preview(self, pod: Pod, *, all_nodes: bool | None = None) -> CycleRecord:
        """``pod``'s cycle against the cluster as it is now, up to the choice of a node.

        PreEnqueue, PreFilter, Filter, PostFilter, PreScore, Score and selection run as in
        ``schedule_one`` (with ``all_nodes`` overriding the option when given); Reserve, Permit and
        the binding cycle do not, so a "Scheduled" result only means a node was selected. The replay
        is left as it was: cluster, start index, sequence number and trace.
        """
        saved = (self.next_start_node_index, self._seq, self.options)
        if all_nodes is not None:
            self.options = ReplayOptions(all_nodes=all_nodes, features=self.options.features)
        self._preview = True
        try:
            return self.schedule_one(pod)
        finally:
            self.next_start_node_index, self._seq, self.options = saved
            self._preview = False

    # ----- one pod -------------------------------------------------------------------------
    def schedule_one(self, pod: Pod) -> CycleRecord:
        self._seq += 1
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None:
            return CycleRecord(
                pod=pod.key,
                profile=pod.scheduler_name,
                result="NotHandled",
                seq=self._seq,
                error=f'no profile for schedulerName "{pod.scheduler_name}"',
            )
        rec = CycleRecord(pod=pod.key, profile=fw.name, result="Scheduled", seq=self._seq)
        rec.filter_plugin_names = fw.filter_names
        s = fw.run_pre_enqueue(pod, rec.stages)
        if not s.is_success():
            rec.result = "Gated"
            rec.error = "pod not enqueued (PreEnqueue rejected it)"
            rec.message = s.message()
            return rec
        state = CycleState(self.cluster)
        try:
            self._schedule(fw, state, pod, rec)
        except CycleError as exc:
            rec.result = "Error"
            rec.error = str(exc)
            rec.message = str(exc)
        return rec

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
            self._fail(fw, state, pod, rec, statuses, pre_status, pre_status.message())
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
        if not fw.score and not self._has_extender_filters():
            to_find = 1
        rec.start_index = self.next_start_node_index
        rec.nodes_to_find = to_find

        feasible: IntArray
        if num_nodes == 0:
            feasible = np.zeros(0, dtype=np.int64)
            rec.evaluation_order = feasible
        elif not fw.filter:
            k = np.arange(to_find) + self.next_start_node_index
            feasible = order[k % num_nodes]
            rec.evaluation_order = feasible
            rec.filter_codes[feasible] = 0
            self.next_start_node_index = (self.next_start_node_index + len(feasible)) % n_all
        else:
            rotated = np.roll(order, -(self.next_start_node_index % num_nodes))
            timings: dict[str, int] = {}
            out = fw.run_filter(state, pod, rotated, self.reasons, timings)
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
            self.next_start_node_index = (self.next_start_node_index + processed) % n_all
            for name in fw.filter_names:
                if name in state.skip_filter_plugins:
                    continue
                rec.stages.append(Stage("Filter", name, "Success", "", timings.get(name, 0)))

        rec.feasible = feasible
        if len(feasible) == 0:
            # Only a failed cycle needs every rejected node's Status (PostFilter, the message).
            assert rec.evaluation_order is not None
            codes = rec.filter_codes
            rids = rec.filter_reasons
            for i in rec.evaluation_order.tolist():
                statuses[i] = Status(Code(int(codes[i])), *self.reasons.items[int(rids[i])])
            self._fail(fw, state, pod, rec, statuses, absent, "")
            return

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

    def _has_extender_filters(self) -> bool:
        return any(e.get("filterVerb") for e in self.config.extenders)

    def _score(self, fw: Framework, state: CycleState, pod: Pod, rec: CycleRecord, feasible: IntArray) -> int:
        if not fw.score:
            rec.scored = True
            rec.totals = np.ones(len(feasible), dtype=np.int64)
            rec.raw_scores = np.zeros((0, len(feasible)), dtype=np.int64)
            rec.normalized_scores = rec.raw_scores
        else:
            fw.run_pre_score(state, pod, feasible, rec.stages)
            so = fw.run_score(state, pod, feasible, rec.stages)
            rec.scored = True
            rec.score_plugins = so.plugins
            rec.score_weights = so.weights
            rec.skipped_score_plugins = [p.name for p in fw.score if p.name in state.skip_score_plugins]
            rec.raw_scores = so.raw
            rec.normalized_scores = so.normalized
            rec.totals = so.total
        totals = rec.totals
        best = int(totals.max())
        tied = feasible[totals == best]
        rec.tied = np.sort(tied)
        return int(rec.tied[0])

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
        s = fw.run_reserve(state, pod, node, rec.stages)
        if not s.is_success():
            self.cluster.remove_pod(pod)
            self._reject_after_selection(rec, node, s)
            return
        s, _timeout = fw.run_permit(state, pod, node, rec.stages)
        if s.code == Code.Wait:
            rec.result = "Waiting"
            return
        if not s.is_success():
            fw.run_unreserve(state, pod, node, rec.stages)
            self.cluster.remove_pod(pod)
            self._reject_after_selection(rec, node, s)
            return
        # The binding cycle (schedule_one.go bindingCycle).
        s = fw.run_pre_bind_pre_flight(state, pod, node, rec.stages)
        if s.code != Code.Error:
            s = fw.run_pre_bind(state, pod, node, rec.stages)
        if s.is_success():
            s = fw.run_bind(state, pod, node, rec.stages)
        if not s.is_success():
            fw.run_unreserve(state, pod, node, rec.stages)
            self.cluster.remove_pod(pod)
            rec.result = "Error"
            rec.error = s.message()
            rec.message = s.message()
            return
        fw.run_post_bind(state, pod, node, rec.stages)
        rec.result = "Scheduled"

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
