"""A profile's plugins, run point by point (pkg/scheduler/framework/runtime/framework.go).

The framework owns order and aggregation: plugins never call each other. Filter runs plugin after
plugin over the nodes still passing, which gives every node the status of the first plugin that
rejects it, as ``RunFilterPlugins`` does node by node.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ..budget import interruptible
from ..config import ProfileConfig
from ..errors import ConfigError
from ..framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    Code,
    CycleState,
    FilterPlugin,
    Handle,
    NodeToStatus,
    NormalizeScorePlugin,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    Status,
)
from ..framework.stage import Stage as Stage  # re-exported: where the trace's stages were defined
from ..framework.status import CycleError as CycleError  # re-exported
from ..framework.waiting import MAX_TIMEOUT_NS, seconds_to_ns
from ..objects import Pod
from . import registry

IntArray = npt.NDArray[np.int64]


@dataclass
class FilterOutcome:
    """Filter verdicts for a batch: codes (0 passes), failing plugin index and reason tuple index."""

    codes: npt.NDArray[np.int8]
    plugin_ids: npt.NDArray[np.int16]
    reason_ids: npt.NDArray[np.int32]


@dataclass
class ScoreOutcome:
    plugins: list[str]
    weights: list[int]
    raw: IntArray  # plugins x nodes
    normalized: IntArray  # plugins x nodes
    total: IntArray


def _micros(t0: float) -> int:
    return int((time.perf_counter() - t0) * 1_000_000)


class Framework:
    """The plugins of one profile, instantiated once and shared by every extension point they implement."""

    def __init__(self, profile: ProfileConfig, handle: Handle) -> None:
        self.profile = profile
        self.name = profile.scheduler_name
        self.handle = handle
        self.instances: dict[str, Any] = {}
        for refs in profile.plugins.values():
            for ref in refs:
                if ref.name not in self.instances:
                    cls = registry.plugin_class(ref.name)
                    try:
                        self.instances[ref.name] = cls(profile.plugin_args.get(ref.name, {}), handle)
                    except ConfigError as exc:
                        problems = [f'initializing plugin "{ref.name}": {p}' for p in exc.problems]
                        raise ConfigError(problems, exc.source) from None
                    except Exception as exc:  # a custom plugin's constructor failed
                        raise ConfigError([f'initializing plugin "{ref.name}": {type(exc).__name__}: {exc}']) from None

        def pick(point: str, proto: type) -> list[Any]:
            return [
                self.instances[r.name]
                for r in profile.plugins.get(point, [])
                if isinstance(self.instances[r.name], proto)
            ]

        self.queue_sort: list[QueueSortPlugin] = pick("queueSort", QueueSortPlugin)
        self.pre_enqueue: list[PreEnqueuePlugin] = pick("preEnqueue", PreEnqueuePlugin)
        self.pre_filter: list[PreFilterPlugin] = pick("preFilter", PreFilterPlugin)
        self.filter: list[FilterPlugin] = pick("filter", FilterPlugin)
        self.post_filter: list[PostFilterPlugin] = pick("postFilter", PostFilterPlugin)
        self.pre_score: list[PreScorePlugin] = pick("preScore", PreScorePlugin)
        self.score: list[ScorePlugin] = pick("score", ScorePlugin)
        # which score plugins normalize, known once: a runtime protocol check costs ~0.4 ms
        self._normalizes: frozenset[str] = frozenset(
            pl.name for pl in self.score if isinstance(pl, NormalizeScorePlugin)
        )
        self.score_weights: dict[str, int] = {r.name: r.weight for r in profile.plugins.get("score", [])}
        self.reserve: list[ReservePlugin] = pick("reserve", ReservePlugin)
        self.permit: list[PermitPlugin] = pick("permit", PermitPlugin)
        self.pre_bind: list[PreBindPlugin] = pick("preBind", PreBindPlugin)
        self.bind: list[BindPlugin] = pick("bind", BindPlugin)
        self.post_bind: list[PostBindPlugin] = pick("postBind", PostBindPlugin)
        self.filter_names: list[str] = [p.name for p in self.filter]
        handle.framework = self

    @property
    def percentage_of_nodes_to_score(self) -> int | None:
        return self.profile.percentage_of_nodes_to_score

    # ----- PreEnqueue --------------------------------------------------------------------
    def run_pre_enqueue(self, pod: Pod, stages: list[Stage]) -> Status:
        for pl in self.pre_enqueue:
            t0 = time.perf_counter()
            s = pl.pre_enqueue(pod)
            stages.append(Stage("PreEnqueue", pl.name, s.code.name, s.message(), _micros(t0)))
            if not s.is_success():
                return s.with_plugin(pl.name)
        return Status.success()

    # ----- PreFilter ---------------------------------------------------------------------
    def run_pre_filter(
        self, state: CycleState, pod: Pod, stages: list[Stage]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """RunPreFilterPlugins: result, status (Success or the rejecting one), plugins that narrowed nodes."""
        result: PreFilterResult | None = None
        with_nodes: set[str] = set()
        returned: Status = Status.success()
        skipped: set[str] = set()
        for pl in self.pre_filter:
            t0 = time.perf_counter()
            with interruptible("PreFilter", pl.name):  # engine/budget.py: a cycle past its limit stops here
                r, s = pl.pre_filter(state, pod)
            stage = Stage("PreFilter", pl.name, s.code.name, s.message(), _micros(t0))
            if r is not None and r.node_names is not None:
                stage.details["nodeNames"] = sorted(r.node_names)
            stages.append(stage)
            if s.is_skip():
                skipped.add(pl.name)
                continue
            if not s.is_success():
                s.plugin = pl.name
                if s.code == Code.UnschedulableAndUnresolvable:
                    state.skip_filter_plugins = skipped
                    return None, s, set()
                if s.code == Code.Unschedulable:
                    returned = s
                    continue
                state.skip_filter_plugins = skipped
                raise CycleError(f'running PreFilter plugin "{pl.name}": {s.message()}', pl.name)
            if r is not None and not r.all_nodes():
                with_nodes.add(pl.name)
            result = r if result is None else result.merge(r)
            if result is not None and not result.all_nodes() and not result.node_names:
                names = sorted(with_nodes)
                if len(names) == 1:
                    msg = f"node(s) didn't satisfy plugin {names[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                state.skip_filter_plugins = skipped
                return result, Status(Code.UnschedulableAndUnresolvable, msg), with_nodes
        state.skip_filter_plugins = skipped
        return result, returned, with_nodes

    # ----- Filter ------------------------------------------------------------------------
    def run_filter(
        self, state: CycleState, pod: Pod, nodes: IntArray, reasons: ReasonTable, timings: dict[str, int]
    ) -> FilterOutcome:
        """Every node's verdict: the first plugin, in profile order, that rejects it."""
        count = len(nodes)
        codes = np.zeros(count, dtype=np.int8)
        plugin_ids = np.full(count, -1, dtype=np.int16)
        reason_ids = np.full(count, -1, dtype=np.int32)
        alive = np.arange(count, dtype=np.int64)
        for k, pl in enumerate(self.filter):
            if pl.name in state.skip_filter_plugins or len(alive) == 0:
                continue
            t0 = time.perf_counter()
            with interruptible("Filter", pl.name):
                v = pl.filter(state, pod, nodes[alive])
            timings[pl.name] = timings.get(pl.name, 0) + _micros(t0)
            failed = np.flatnonzero(v.codes)
            if len(failed) == 0:
                continue
            if np.any(v.codes[failed] == Code.Error):
                j = int(failed[np.flatnonzero(v.codes[failed] == Code.Error)[0]])
                _, rs = v.at(j)
                raise CycleError(f'running "{pl.name}" filter plugin: {", ".join(rs)}', pl.name)
            pos = alive[failed]
            codes[pos] = v.codes[failed]
            plugin_ids[pos] = k
            table = np.asarray([reasons.intern(r) for r in v.reasons] or [-1], dtype=np.int32)
            reason_ids[pos] = table[v.reason_ids[failed]]
            alive = alive[v.codes == 0]
        return FilterOutcome(codes, plugin_ids, reason_ids)

    def run_filter_with_nominated_pods(
        self, state: CycleState, pod: Pod, nodes: IntArray, reasons: ReasonTable, timings: dict[str, int]
    ) -> FilterOutcome:
        """RunFilterPluginsWithNominatedPods for every node of the batch (framework/runtime/framework.go).

        On a node where pods of priority >= the pod's are nominated (the pod itself excepted), the
        filters run first with those pods added to the node and to the PreFilter state (the
        plugins' ``add_pod`` extensions, on a clone of the state); a node they reject keeps that
        verdict. The other nodes, and those that passed, are judged without them, in one batch as
        ``run_filter`` does. Without nominated pods this is ``run_filter``.
        """
        extra = self._nominated_pods_in(state, pod, nodes)
        if not extra:
            return self.run_filter(state, pod, nodes, reasons, timings)
        count = len(nodes)
        codes = np.zeros(count, dtype=np.int8)
        plugin_ids = np.full(count, -1, dtype=np.int16)
        reason_ids = np.full(count, -1, dtype=np.int32)
        rejected = np.zeros(count, dtype=bool)
        for k, pods in extra:
            first = self._filter_with_added_pods(state, pod, int(nodes[k]), pods, reasons, timings)
            if int(first.codes[0]) != 0:
                rejected[k] = True
                codes[k] = first.codes[0]
                plugin_ids[k] = first.plugin_ids[0]
                reason_ids[k] = first.reason_ids[0]
        rest = np.flatnonzero(~rejected)
        if len(rest):
            out = self.run_filter(state, pod, nodes[rest], reasons, timings)
            codes[rest] = out.codes
            plugin_ids[rest] = out.plugin_ids
            reason_ids[rest] = out.reason_ids
        return FilterOutcome(codes, plugin_ids, reason_ids)

    def _nominated_pods_in(self, state: CycleState, pod: Pod, nodes: IntArray) -> list[tuple[int, list[Pod]]]:
        """(position in ``nodes``, pods) for the nodes of the batch that have nominated pods of
        priority >= ``pod``'s other than ``pod`` (addGENominatedPods), in batch order."""
        nominator = self.handle.nominator
        if not nominator:
            return []
        cluster = state.cluster
        out: list[tuple[int, list[Pod]]] = []
        for name in nominator.nodes():
            i = cluster.index.get(name)
            if i is None:
                continue
            pods = [
                p
                for p in nominator.pods_for_node(name)
                if p.prio >= pod.prio and p.uid != pod.uid and p.uid not in cluster.pod_node
            ]
            if not pods:
                continue
            pos = np.flatnonzero(nodes == i)
            if len(pos):
                out.append((int(pos[0]), pods))
        out.sort(key=lambda e: e[0])
        return out

    def _filter_with_added_pods(
        self,
        state: CycleState,
        pod: Pod,
        node: int,
        pods: list[Pod],
        reasons: ReasonTable,
        timings: dict[str, int],
    ) -> FilterOutcome:
        """The first pass of RunFilterPluginsWithNominatedPods on one node: ``pods`` placed on it
        for the time of the call, the PreFilter state cloned and told about them."""
        cluster = state.cluster
        added: list[Pod] = []
        cloned = state.clone()
        try:
            for p in pods:
                cluster.add_pod(p, node)  # NodeInfo.AddPodInfo on a copy of the node
                added.append(p)
                s = self.run_pre_filter_extension_add_pod(cloned, pod, p, node)
                if not s.is_success():
                    raise CycleError(s.message(), s.plugin)
            return self.run_filter(cloned, pod, np.asarray([node], dtype=np.int64), reasons, timings)
        finally:
            for p in reversed(added):
                cluster.remove_pod(p)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node: int
    ) -> Status:
        """RunPreFilterExtensionAddPod: each PreFilter plugin with an ``add_pod`` extension and not
        skipped this cycle updates its state for ``pod_to_add`` on ``node``."""
        for pl in self.pre_filter:
            add = getattr(pl, "add_pod", None)
            if add is None or pl.name in state.skip_filter_plugins:
                continue
            with interruptible("Filter", pl.name):  # AddPod, for a nominated pod (Filter with nominated pods)
                s = add(state, pod, pod_to_add, node)
            if not s.is_success():
                return Status(
                    Code.Error,
                    f'running AddPod on PreFilter plugin "{pl.name}": {s.message()}',
                    plugin=pl.name,
                )
        return Status.success()

    def evaluate_node(self, pod: Pod, node: int) -> Status:
        """PreFilter then Filter for ``pod`` on one node of the cluster as it is now.

        What preemption uses to ask "would the pod fit here once these pods are gone?": callers
        mutate the cluster (remove or add pods), call this, and restore it. Nominated pods count as
        in ``run_filter_with_nominated_pods`` (SelectVictimsOnNode calls
        RunFilterPluginsWithNominatedPods).
        """
        state = CycleState(self.handle.cluster)
        res, s, _ = self.run_pre_filter(state, pod, [])
        if not s.is_success():
            return s
        name = self.handle.cluster.names[node]
        if res is not None and res.node_names is not None and name not in res.node_names:
            return Status(Code.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s)")
        table = ReasonTable()
        out = self.run_filter_with_nominated_pods(state, pod, np.asarray([node], dtype=np.int64), table, {})
        code = int(out.codes[0])
        if code == 0:
            return Status.success()
        rid = int(out.reason_ids[0])
        return Status(
            Code(code),
            *(table.items[rid] if rid >= 0 else ()),
            plugin=self.filter_names[int(out.plugin_ids[0])],
        )

    # ----- PostFilter --------------------------------------------------------------------
    def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus, stages: list[Stage]
    ) -> tuple[PostFilterResult | None, Status]:
        """RunPostFilterPlugins: the first Success/Unresolvable/Error ends the loop; rejections accumulate."""
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for pl in self.post_filter:
            t0 = time.perf_counter()
            r, s = pl.post_filter(state, pod, statuses)
            stage = Stage("PostFilter", pl.name, s.code.name, s.message(), _micros(t0))
            if r is not None:
                stage.details = dict(r.details)
                if r.nominated_node_name:
                    stage.details["nominatedNodeName"] = r.nominated_node_name
            stages.append(stage)
            if s.is_success():
                return r, s.with_plugin(pl.name)
            if s.code == Code.UnschedulableAndUnresolvable:
                return r, s.with_plugin(pl.name)
            if not s.is_rejected():
                return None, Status(Code.Error, *s.reasons, plugin=pl.name)
            if r is not None:
                result = r
            reasons.extend(s.reasons)
            if not rejector:
                rejector = pl.name
        return result, Status(Code.Unschedulable, *reasons, plugin=rejector)

    # ----- PreScore / Score --------------------------------------------------------------
    def run_pre_score(self, state: CycleState, pod: Pod, nodes: IntArray, stages: list[Stage]) -> None:
        skipped: set[str] = set()
        for pl in self.pre_score:
            t0 = time.perf_counter()
            with interruptible("PreScore", pl.name):
                s = pl.pre_score(state, pod, nodes)
            stages.append(Stage("PreScore", pl.name, s.code.name, s.message(), _micros(t0)))
            if s.is_skip():
                skipped.add(pl.name)
                continue
            if not s.is_success():
                state.skip_score_plugins = skipped
                raise CycleError(f'running PreScore plugin "{pl.name}": {s.message()}', pl.name)
        state.skip_score_plugins = skipped

    def run_score(self, state: CycleState, pod: Pod, nodes: IntArray, stages: list[Stage]) -> ScoreOutcome:
        active = [pl for pl in self.score if pl.name not in state.skip_score_plugins]
        count = len(nodes)
        raw = np.zeros((len(active), count), dtype=np.int64)
        norm = np.zeros((len(active), count), dtype=np.int64)
        for k, pl in enumerate(active):
            t0 = time.perf_counter()
            with interruptible("Score", pl.name):
                raw[k] = pl.score(state, pod, nodes)
            stages.append(Stage("Score", pl.name, "Success", "", _micros(t0)))
        for k, pl in enumerate(active):
            if pl.name in self._normalizes:
                t0 = time.perf_counter()
                with interruptible("NormalizeScore", pl.name):
                    norm[k] = cast(NormalizeScorePlugin, pl).normalize_score(state, pod, nodes, raw[k].copy())
                stages.append(Stage("NormalizeScore", pl.name, "Success", "", _micros(t0)))
            else:
                norm[k] = raw[k]
        if count and len(active):
            # every plugin's scores checked at once; the first plugin out of range is named
            out = (norm.max(axis=1) > MAX_NODE_SCORE) | (norm.min(axis=1) < MIN_NODE_SCORE)
            if out.any():
                k = int(np.flatnonzero(out)[0])
                row = norm[k]
                bad = int(row[(row > MAX_NODE_SCORE) | (row < MIN_NODE_SCORE)][0])
                raise CycleError(
                    f'applying score defaultWeights on Score plugins: plugin "{active[k].name}" returns an invalid '
                    f"score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                    active[k].name,
                )
        weights = [self.score_weights.get(pl.name, 1) for pl in active]
        w = np.asarray(weights, dtype=np.int64).reshape(-1, 1)
        total = (norm * w).sum(axis=0) if len(active) else np.zeros(count, dtype=np.int64)
        return ScoreOutcome([pl.name for pl in active], weights, raw, norm, total.astype(np.int64))

    # ----- Reserve .. PostBind -----------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: Pod, node: str, stages: list[Stage]) -> Status:
        for i, pl in enumerate(self.reserve):
            t0 = time.perf_counter()
            s = pl.reserve(state, pod, node)
            stages.append(Stage("Reserve", pl.name, s.code.name, s.message(), _micros(t0)))
            if not s.is_success():
                self.run_unreserve(state, pod, node, stages, upto=len(self.reserve))
                del i
                return s.with_plugin(pl.name)
        return Status.success()

    def run_unreserve(
        self, state: CycleState, pod: Pod, node: str, stages: list[Stage], upto: int = -1
    ) -> None:
        # Unreserve runs in reverse order of Reserve.
        plugins = self.reserve if upto < 0 else self.reserve[:upto]
        for pl in reversed(plugins):
            t0 = time.perf_counter()
            pl.unreserve(state, pod, node)
            stages.append(Stage("Unreserve", pl.name, "Success", "", _micros(t0)))

    def run_permit(
        self, state: CycleState, pod: Pod, node: str, stages: list[Stage]
    ) -> tuple[Status, dict[str, int]]:
        """RunPermitPlugins: a rejection or an error ends the loop; Wait collects every waiting
        plugin's timeout (ns, at most 15 minutes), returned with a Wait status."""
        waits: dict[str, int] = {}
        for pl in self.permit:
            t0 = time.perf_counter()
            s, timeout = pl.permit(state, pod, node)
            stages.append(Stage("Permit", pl.name, s.code.name, s.message(), _micros(t0)))
            if s.is_success():
                continue
            if s.is_rejected():
                return s.with_plugin(pl.name), {}
            if s.code == Code.Wait:
                waits[pl.name] = min(seconds_to_ns(timeout), MAX_TIMEOUT_NS)
                continue
            # Status.AsError: nil for Skip, which %w prints as below
            err = s.message() if s.code == Code.Error else "%!w(<nil>)"
            return Status(Code.Error, f'running Permit plugin "{pl.name}": {err}', plugin=pl.name), {}
        if waits:
            msg = f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"'
            return Status(Code.Wait, msg), waits
        return Status.success(), {}

    def run_pre_bind_pre_flight(self, state: CycleState, pod: Pod, node: str, stages: list[Stage]) -> Status:
        """RunPreBindPreFlights: Success if any PreBind plugin will act, Skip if none will.

        Plugins answering Skip are left out of PreBind (NominatedNodeNameForExpectation, on in v1.35).
        """
        result = Status.skip()
        skipped: set[str] = set()
        for pl in self.pre_bind:
            flight = getattr(pl, "pre_bind_pre_flight", None)
            if flight is None:
                result = Status.success()
                continue
            t0 = time.perf_counter()
            s = flight(state, pod, node)
            stages.append(Stage("PreBindPreFlight", pl.name, s.code.name, s.message(), _micros(t0)))
            if s.code == Code.Error:
                return Status(Code.Error, f'running PreBindPreFlight "{pl.name}": {s.message()}', plugin=pl.name)
            if s.is_success():
                result = Status.success()
            elif s.is_skip():
                skipped.add(pl.name)
            else:
                return Status(
                    Code.Error,
                    f'PreBindPreFlight {pl.name} returned "{s.code.name}", which is unsupported. '
                    "It is supposed to return Success, Skip, or Error status",
                    plugin=pl.name,
                )
        state.skip_pre_bind_plugins = skipped
        return result

    def run_pre_bind(self, state: CycleState, pod: Pod, node: str, stages: list[Stage]) -> Status:
        for pl in self.pre_bind:
            if pl.name in state.skip_pre_bind_plugins:
                continue
            t0 = time.perf_counter()
            s = pl.pre_bind(state, pod, node)
            stages.append(Stage("PreBind", pl.name, s.code.name, s.message(), _micros(t0)))
            if s.is_skip():
                continue
            if not s.is_success():
                return s.with_plugin(pl.name)
        return Status.success()

    def run_bind(self, state: CycleState, pod: Pod, node: str, stages: list[Stage]) -> Status:
        for pl in self.bind:
            t0 = time.perf_counter()
            s = pl.bind(state, pod, node)
            stages.append(Stage("Bind", pl.name, s.code.name, s.message(), _micros(t0)))
            if s.is_skip():
                continue
            # framework.go RunBindPlugins: rejections keep their status, errors are wrapped
            if not s.is_success() and not s.is_rejected():
                return Status(Code.Error, f'running Bind plugin "{pl.name}": {s.message()}', plugin=pl.name)
            return s.with_plugin(pl.name)
        return Status(Code.Error, "no bind plugin bound the pod")

    def run_post_bind(self, state: CycleState, pod: Pod, node: str, stages: list[Stage]) -> None:
        for pl in self.post_bind:
            t0 = time.perf_counter()
            pl.post_bind(state, pod, node)
            stages.append(Stage("PostBind", pl.name, "Success", "", _micros(t0)))


class ReasonTable:
    """Interns reason tuples for a whole replay so per-node reasons are stored as small integers."""

    def __init__(self) -> None:
        self.items: list[tuple[str, ...]] = []
        self._index: dict[tuple[str, ...], int] = {}

    def intern(self, reasons: tuple[str, ...]) -> int:
        i = self._index.get(reasons)
        if i is None:
            i = len(self.items)
            self.items.append(reasons)
            self._index[reasons] = i
        return i


def attach_stage_details(state: CycleState, stages: list[Stage]) -> None:
    """Move what plugins recorded with ``CycleState.record_details`` into the cycle's stages.

    Each (point, plugin) entry goes to the first stage of that plugin at that point; entries
    without a stage (a call the trace does not show) are dropped.
    """
    pending = state.stage_details
    if not pending:
        return
    for s in stages:
        d = pending.pop((s.point, s.plugin), None)
        if d is not None:
            s.details.update(d)
    pending.clear()
