"""Several scheduler processes sharing one node pool: the race replay.

Each scheduler process (a name and its own KubeSchedulerConfiguration) replays the pending pods
addressed to one of its profiles (by ``spec.schedulerName``) against its own view of the cluster:
the snapshot, which goes stale at once, plus only the pods it assumed itself. It never sees what the
other processes decide. A pod whose ``schedulerName`` several processes serve is queued by each of
them: the classic double binding.

Interleaving (deterministic, on the replay clock): every process runs a normal replay
(``Replay``, ``ReplayOptions``), its k-th queued pod tried at ``start + offset + k * cycle_seconds``
(start: the snapshot's latest creationTimestamp, as for a replay). Processes only meet at the API
server, and its calls are applied in the order of their replay time; at the same instant, the
process listed first goes first. With the default options (same ``cycle_seconds``, no offset) this
is round-robin: A's first pod, B's first pod, A's second, ... Each process runs in a thread of its
own, but only one runs at a time (``_Baton``), so the race is as deterministic as a replay.

The API server: every Bind call goes through the pod's binding subresource as the race has it so
far (pkg/registry/core/pod/storage/storage.go, BindingREST.Create -> assignPod ->
setPodNodeAndMetadata). The first binding of a pod wins; a later one fails with the Conflict that
assignPod returns (``Operation cannot be fulfilled on pods/binding "p": pod p is already assigned
to node "n"``). The losing scheduler learns it from its Bind call, as a real one does: its Bind
plugin returns that error, Unreserve runs and the pod is forgotten from its cache (the record's
result is ``Error``). Bindings made by an extender binder are checked too, after the record (the
extender's own answer stays in the scheduler's trace).

The kubelets: once every process is done, each node's kubelet admits the pods bound to it in
binding order, against the pods already running there and those it admitted before
(pkg/kubelet/lifecycle/predicate.go, predicateAdmitHandler.Admit with generalFilter and
pkg/scheduler AdmissionCheck). A pod that does not fit is rejected: phase ``Failed``, reason
``OutOf<resource>`` (``OutOfcpu``, ``OutOfmemory``, ``OutOfephemeral-storage``, ``OutOfpods``,
``OutOfnvidia.com/gpu``, ...) or the predicate's name (``NodeAffinity``, ``NodePorts``,
``TaintToleration`` for an untolerated NoExecute taint), and the message kubelet's rejectPod
writes: ``Pod was rejected: `` + the first failure (``Node didn't have enough resource: cpu,
requested: 500, used: 3800, capacity: 4000``, ``Predicate NodePorts failed: ...``).

Where the real system is not deterministic or not modelled:
- several insufficient extended resources: upstream reports the first of a Go map iteration; here
  the first by name (as the engine's NodeResourcesFit orders them);
- the kubelet's OS is taken to be the node's ``kubernetes.io/os`` label (``linux`` without one);
- other admit handlers (node pressure eviction, sysctls, topology manager, device plugins) and the
  critical-pod admission handler (which evicts pods to admit a critical one) are not modelled;
- only pod bindings and deletions go through the shared API server: what PreBind writes (volume
  bindings, ResourceClaim allocations) stays in each process's own view, so two processes
  claiming the same volume or device are not caught;
- nothing reaches a scheduler but its own Bind calls' answers: no informer updates (a pod that
  lost a binding conflict is not retried; pods are retried only as a replay retries them);
- a pod a scheduler evicts (a preemption victim it deletes: a pod it removed from its cache for
  good while the API server had it bound there, from the snapshot or by that scheduler) is deleted
  at that time: the timeline lists an ``Eviction`` and the kubelet frees its resources; the other
  processes keep seeing it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..cluster import ClusterState
from ..config import SchedulerConfig, load_config
from ..errors import InputError
from ..framework import BindPlugin, Code, CycleState, Status
from ..loader import Snapshot
from ..nodeselectors import go_quote, required_node_affinity_mask
from ..objects import Pod
from ..plugins import nodeaffinity, nodeports, tainttoleration
from ..quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from ..resources import is_extended_resource_name
from ..taints import (
    COMPARISON_OPERATORS_GATE,
    NO_EXECUTE,
    find_matching_untolerated_taint,
    node_taint,
    pod_tolerations,
)
from ..trace import API_VERSION, BINDING, KUBERNETES_VERSION, SCHEDULING, CycleRecord, ReplayTrace
from .replay import Replay, ReplayOptions, start_time

KIND = "RaceReport"
RACE_FORMAT_VERSION = 1
INTERLEAVING = "round-robin"

# Timeline entry kinds and binding results.
EVENT_BINDING = "Binding"
EVENT_EVICTION = "Eviction"
BOUND = "Bound"
CONFLICT = "Conflict"

# Per-pod outcomes.
ADMITTED = "Admitted"
REJECTED = "Rejected"
NOT_BOUND = "NotBound"
NOT_HANDLED = "NotHandled"

# pkg/registry/core/pod/storage/storage.go setPodNodeAndMetadata, wrapped by assignPod in
# apierrors.NewConflict(api.Resource("pods/binding"), name, err) (apimachinery errors.go).
CONFLICT_RESOURCE = "pods/binding"
ERR_BEING_DELETED = "pod {} is being deleted, cannot be assigned to a host"
ERR_ALREADY_ASSIGNED = "pod {} is already assigned to node {}"
ERR_SCHEDULING_GATES = "pod {} has non-empty .spec.schedulingGates"
# framework/runtime/framework.go RunBindPlugins: how the scheduler reports a Bind plugin's error.
BIND_PLUGIN_ERROR = 'running Bind plugin "{}": {}'

# pkg/kubelet/lifecycle/predicate.go
POD_PHASE_FAILED = "Failed"
REJECTED_PREFIX = "Pod was rejected: "  # kubelet.go rejectPod
INSUFFICIENT_RESOURCE_PREFIX = "OutOf"
OUT_OF = {
    CPU: "OutOfcpu",
    MEMORY: "OutOfmemory",
    EPHEMERAL_STORAGE: "OutOfephemeral-storage",
    PODS: "OutOfpods",
}
INSUFFICIENT_RESOURCE_MESSAGE = "Node didn't have enough resource: {}, requested: {}, used: {}, capacity: {}"
PREDICATE_FAILED_MESSAGE = "Predicate {} failed: {}"
OS_SELECTOR_MISMATCH = "PodOSSelectorNodeLabelDoesNotMatch"
OS_SELECTOR_MISMATCH_MESSAGE = "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"
OS_NOT_SUPPORTED = "PodOSNotSupported"
OS_NOT_SUPPORTED_MESSAGE = "Failed to admit pod as the OS field doesn't match node OS"
SUPPLEMENTAL_GROUPS_NOT_SUPPORTED = "SupplementalGroupsPolicyNotSupported"
SUPPLEMENTAL_GROUPS_NOT_SUPPORTED_MESSAGE = "SupplementalGroupsPolicy=Strict is not supported in this node"
LABEL_OS = "kubernetes.io/os"
# framework/plugins/tainttoleration/taint_toleration.go ErrReasonNotMatch (what kubelet reports; the
# scheduler's Filter says "node(s) had untolerated taint(s)")
TAINT_ERR_REASON_NOT_MATCH = "node(s) had taints that the pod didn't tolerate"
DEFAULT_NODE_OS = "linux"

_NO_EXECUTE: frozenset[str] = frozenset({NO_EXECUTE})
_ALWAYS_SHOWN = (CPU, MEMORY, PODS)


def binding_conflict_message(pod_name: str, problem: str) -> str:
    """apierrors.NewConflict(pods/binding) around a setPodNodeAndMetadata error."""
    return f"Operation cannot be fulfilled on {CONFLICT_RESOURCE} {go_quote(pod_name)}: {problem}"


def out_of_reason(resource: str) -> str:
    """predicate.go Admit: the reason of an InsufficientResourceError."""
    return OUT_OF.get(resource, INSUFFICIENT_RESOURCE_PREFIX + resource)


# ----- input ---------------------------------------------------------------------------------------


@dataclass
class RaceScheduler:
    """One scheduler process: a name, its configuration, and optionally its own pace.

    ``cycle_seconds``: replay time each of its queue entries takes (None: ``RaceOptions.cycle_seconds``).
    ``offset_seconds``: how long after the race starts it tries its first pod.
    """

    name: str
    config: SchedulerConfig | None = None
    cycle_seconds: float | None = None
    offset_seconds: float = 0.0


@dataclass
class RaceOptions:
    """Options shared by every process.

    Each process's replay runs with ``replay`` (default ``ReplayOptions()``) where ``all_nodes``,
    ``features`` (added to ``replay``'s) and ``cycle_seconds`` (or the process's own) are these.
    """

    all_nodes: bool = False
    features: dict[str, bool] = field(default_factory=dict)
    cycle_seconds: float = 0.01
    replay: ReplayOptions | None = None


# ----- output --------------------------------------------------------------------------------------


@dataclass
class BindingEvent:
    """A Bind call reaching the API server's binding subresource."""

    time: float
    scheduler: str
    pod: str
    node: str
    result: str  # BOUND or CONFLICT
    message: str = ""  # the API server's error (CONFLICT)
    bound_to: str = ""  # CONFLICT: the node the pod was already on
    bound_by: str = ""  # CONFLICT: the scheduler whose binding won ("" when bound in the snapshot)
    binder: str = ""  # the Bind plugin, or "Extender"
    reported_to_scheduler: bool = True  # False for an extender binder's call
    record_seq: int = 0  # the seq of the scheduler's trace record that made the call
    uid: str = ""

    @property
    def scheduler_error(self) -> str:
        """The error the scheduler reports for a refused binding (RunBindPlugins)."""
        if self.result != CONFLICT:
            return ""
        if self.binder == EXTENDER_BINDER:
            return self.message
        return BIND_PLUGIN_ERROR.format(self.binder, self.message)

    def to_dict(self, order: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "order": order,
            "kind": EVENT_BINDING,
            "time": self.time,
            "scheduler": self.scheduler,
            "recordSeq": self.record_seq,
            "pod": self.pod,
            "node": self.node,
            "binder": self.binder,
            "result": self.result,
        }
        if self.result == CONFLICT:
            out["message"] = self.message
            out["schedulerError"] = self.scheduler_error
            out["boundTo"] = self.bound_to
            out["boundBy"] = self.bound_by
            out["reportedToScheduler"] = self.reported_to_scheduler
        return out


EXTENDER_BINDER = "Extender"


@dataclass
class EvictionEvent:
    """A bound pod a scheduler deleted (its preemption victims)."""

    time: float
    scheduler: str
    pod: str
    node: str
    record_seq: int = 0
    uid: str = ""

    def to_dict(self, order: int) -> dict[str, Any]:
        return {
            "order": order,
            "kind": EVENT_EVICTION,
            "time": self.time,
            "scheduler": self.scheduler,
            "recordSeq": self.record_seq,
            "pod": self.pod,
            "node": self.node,
        }


TimelineEvent = BindingEvent | EvictionEvent


@dataclass
class AdmissionFailure:
    """A pod the node's kubelet refused: its status as the kubelet sets it."""

    time: float  # the binding's time
    pod: str
    node: str
    scheduler: str  # whose binding put it there
    reason: str
    message: str  # the admit result's message (the kubelet's Warning event)

    @property
    def status_message(self) -> str:
        return REJECTED_PREFIX + self.message

    def to_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "pod": self.pod,
            "node": self.node,
            "scheduler": self.scheduler,
            "phase": POD_PHASE_FAILED,
            "reason": self.reason,
            "message": self.status_message,
            "event": {"type": "Warning", "reason": self.reason, "message": self.message},
        }


@dataclass
class NodeUsage:
    """One node's requests per resource: as each scheduler believed, as bound, as admitted."""

    node: str
    allocatable: dict[str, int]
    believed: dict[str, dict[str, int]]  # scheduler -> resource -> requested
    bound: dict[str, int]
    admitted: dict[str, int]
    rejected: list[str]

    @property
    def overcommitted(self) -> list[str]:
        return [r for r, v in self.bound.items() if v > self.allocatable.get(r, 0)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "allocatable": self.allocatable,
            "believed": self.believed,
            "bound": self.bound,
            "admitted": self.admitted,
            "overcommitted": self.overcommitted,
            "rejected": self.rejected,
        }


@dataclass
class PodOutcome:
    """Where a pending pod ended up once the race and the kubelets are done."""

    pod: str
    scheduler_name: str
    schedulers: list[str]  # the processes that queued it
    decisions: list[dict[str, Any]]  # per process: its final result and node
    outcome: str  # ADMITTED, REJECTED, NOT_BOUND, NOT_HANDLED
    node: str | None = None
    bound_by: str | None = None
    reason: str | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pod": self.pod,
            "schedulerName": self.scheduler_name,
            "schedulers": self.schedulers,
            "decisions": self.decisions,
            "outcome": self.outcome,
            "node": self.node,
            "boundBy": self.bound_by,
        }
        if self.reason is not None:
            out["phase"] = POD_PHASE_FAILED
            out["reason"] = self.reason
            out["message"] = self.message
        return out


@dataclass
class SchedulerRun:
    """One process's replay: its queue and its trace, as it saw things."""

    name: str
    profiles: list[str]
    cycle_seconds: float
    offset_seconds: float
    queued: list[str]
    trace: ReplayTrace
    cluster: ClusterState = field(repr=False)

    def results(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for _, final in self.trace.pod_records().values():
            counts[final.result] = counts.get(final.result, 0) + 1
        return counts

    def to_dict(self, *, nodes: bool = True) -> dict[str, Any]:
        return {
            "name": self.name,
            "profiles": self.profiles,
            "cycleSeconds": self.cycle_seconds,
            "offsetSeconds": self.offset_seconds,
            "queued": self.queued,
            "results": self.results(),
            "trace": self.trace.to_dict(nodes=nodes),
        }


@dataclass
class RaceReport:
    """What the race produced: every process's trace, the API server's and the kubelets' verdicts."""

    start: float
    options: dict[str, Any]
    schedulers: list[SchedulerRun]
    timeline: list[TimelineEvent]
    admission_failures: list[AdmissionFailure]
    nodes: list[NodeUsage]
    pods: list[PodOutcome]

    @property
    def conflicts(self) -> list[BindingEvent]:
        return [e for e in self.timeline if isinstance(e, BindingEvent) and e.result == CONFLICT]

    @property
    def bindings(self) -> list[BindingEvent]:
        return [e for e in self.timeline if isinstance(e, BindingEvent)]

    def scheduler(self, name: str) -> SchedulerRun:
        for s in self.schedulers:
            if s.name == name:
                return s
        raise KeyError(name)

    def pod(self, key: str) -> PodOutcome:
        for p in self.pods:
            if p.pod == key:
                return p
        raise KeyError(key)

    def node(self, name: str) -> NodeUsage:
        for n in self.nodes:
            if n.node == name:
                return n
        raise KeyError(name)

    def summary(self) -> dict[str, int]:
        counts = {o: 0 for o in (ADMITTED, REJECTED, NOT_BOUND, NOT_HANDLED)}
        for p in self.pods:
            counts[p.outcome] += 1
        bindings = self.bindings
        return {
            "pendingPods": len(self.pods),
            "bindings": sum(1 for b in bindings if b.result == BOUND),
            "bindingConflicts": sum(1 for b in bindings if b.result == CONFLICT),
            "evictions": sum(1 for e in self.timeline if isinstance(e, EvictionEvent)),
            "admissionFailures": len(self.admission_failures),
            "overcommittedNodes": sum(1 for n in self.nodes if n.overcommitted),
            "admitted": counts[ADMITTED],
            "rejected": counts[REJECTED],
            "notBound": counts[NOT_BOUND],
            "notHandled": counts[NOT_HANDLED],
        }

    def to_dict(self, *, nodes: bool = True) -> dict[str, Any]:
        """The documented JSON (docs/trace-format.md, *The race report*); ``nodes=False`` leaves the
        per-node verdicts out of the schedulers' traces."""
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "formatVersion": RACE_FORMAT_VERSION,
            "kubernetesVersion": KUBERNETES_VERSION,
            "options": self.options,
            "startTime": self.start,
            "summary": self.summary(),
            "schedulers": [s.to_dict(nodes=nodes) for s in self.schedulers],
            "timeline": [e.to_dict(k + 1) for k, e in enumerate(self.timeline)],
            "bindingConflicts": [
                e.to_dict(k + 1)
                for k, e in enumerate(self.timeline)
                if isinstance(e, BindingEvent) and e.result == CONFLICT
            ],
            "admissionFailures": [f.to_dict() for f in self.admission_failures],
            "nodes": [n.to_dict() for n in self.nodes],
            "pods": [p.to_dict() for p in self.pods],
        }

    def to_table(self) -> str:
        """A readable report: processes, the binding timeline, kubelet rejections, overcommit."""
        lines: list[str] = []
        opts = self.options
        lines.append(
            f"race: {len(self.schedulers)} scheduler(s), {opts['interleaving']}, "
            f"{len(self.pods)} pending pod(s); times relative to {self.start:.3f}"
        )
        for s in self.schedulers:
            res = ", ".join(f"{v} {k}" for k, v in sorted(s.results().items())) or "nothing queued"
            lines.append(f"  {s.name:<16} profiles {', '.join(s.profiles)}: {len(s.queued)} queued: {res}")
        lines.append("")
        lines.append("timeline:")
        if not self.timeline:
            lines.append("  (no binding)")
        for e in self.timeline:
            at = f"+{e.time - self.start:.3f}s"
            if isinstance(e, EvictionEvent):
                lines.append(f"  {at:>9}  {e.scheduler:<12} Evicted   {e.pod} from {e.node}")
                continue
            lines.append(f"  {at:>9}  {e.scheduler:<12} {e.result:<9} {e.pod} -> {e.node}")
            if e.result == CONFLICT:
                lines.append(f"             {e.scheduler_error}")
        lines.append("")
        lines.append("kubelet admission:")
        if not self.admission_failures:
            lines.append("  every bound pod admitted")
        for f in self.admission_failures:
            lines.append(f"  {f.node:<16} {f.pod:<32} {POD_PHASE_FAILED} {f.reason}")
            lines.append(f"             {f.status_message}")
        lines.append("")
        lines.append("nodes (requested / allocatable):")
        for n in self.nodes:
            flag = f"  OVERCOMMITTED: {', '.join(n.overcommitted)}" if n.overcommitted else ""
            lines.append(f"  {n.node}{flag}")
            for r, alloc in n.allocatable.items():
                believed = " ".join(f"{s}={v.get(r, 0)}" for s, v in n.believed.items())
                lines.append(
                    f"    {r:<20} allocatable {alloc:>12}  bound {n.bound.get(r, 0):>12}  "
                    f"admitted {n.admitted.get(r, 0):>12}  believed {believed}"
                )
        lines.append("")
        lines.append("summary: " + ", ".join(f"{v} {k}" for k, v in self.summary().items()))
        return "\n".join(lines) + "\n"


# ----- the API server ------------------------------------------------------------------------------


class ApiServer:
    """The pods' spec.nodeName as the API server holds it during the race, and the binding
    subresource's checks (storage.go setPodNodeAndMetadata)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.pods: dict[str, Pod] = {p.uid: p for p in snapshot.pods}
        self.node_of: dict[str, str] = {p.uid: p.node_name for p in snapshot.pods if p.node_name}
        self.bound_by: dict[str, str] = {}  # uid -> scheduler, for pods bound during the race
        self.deleted: set[str] = set()
        self.timeline: list[TimelineEvent] = []

    def bind(
        self, pod: Pod, node: str, scheduler: str, time: float, binder: str, reported: bool
    ) -> BindingEvent:
        """POST pods/binding: the pod gets ``node`` unless it is being deleted, already has a node or
        still has scheduling gates (a Conflict, with the message assignPod returns)."""
        problem = ""
        current = self.pods.get(pod.uid, pod)
        assigned = self.node_of.get(pod.uid, "")
        if current.meta.deletion is not None:
            problem = ERR_BEING_DELETED.format(pod.name)
        elif assigned:
            problem = ERR_ALREADY_ASSIGNED.format(pod.name, go_quote(assigned))
        elif current.scheduling_gates:
            problem = ERR_SCHEDULING_GATES.format(pod.name)
        if problem:
            ev = BindingEvent(
                time,
                scheduler,
                pod.key,
                node,
                CONFLICT,
                binding_conflict_message(pod.name, problem),
                bound_to=assigned,
                bound_by=self.bound_by.get(pod.uid, ""),
                binder=binder,
                reported_to_scheduler=reported,
                uid=pod.uid,
            )
        else:
            self.node_of[pod.uid] = node
            self.bound_by[pod.uid] = scheduler
            ev = BindingEvent(time, scheduler, pod.key, node, BOUND, binder=binder, uid=pod.uid)
            ev.reported_to_scheduler = reported
        self.timeline.append(ev)
        return ev

    def evict(self, pod: Pod, node: str, scheduler: str, time: float) -> EvictionEvent:
        self.node_of.pop(pod.uid, None)
        self.deleted.add(pod.uid)
        ev = EvictionEvent(time, scheduler, pod.key, node, uid=pod.uid)
        self.timeline.append(ev)
        return ev


# ----- one scheduler process -----------------------------------------------------------------------


class _ProcessReplay(Replay):
    """A replay whose queue holds only the pending pods one of its profiles serves."""

    def queue(self) -> list[Pod]:
        return [p for p in super().queue() if p.scheduler_name in self.frameworks]


class _ApiBinder:
    """A Bind plugin whose binding then goes through the race's API server: a refused binding is the
    plugin's error, as DefaultBinder returns the client's error (default_binder.go)."""

    def __init__(self, inner: BindPlugin, process: _Process) -> None:
        self.inner = inner
        self.name = inner.name
        self.process = process

    def bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        s = self.inner.bind(state, pod, node)
        if not s.is_success():
            return s
        ev = self.process.api_bind(pod, node, self.name, reported=True)
        if ev.result == CONFLICT:
            return Status(Code.Error, ev.message)
        return s


class _Aborted(BaseException):
    """Unwinds a process's replay when another one failed (not an Exception: nothing may catch it)."""


_START = -1  # every process's first turn comes before any API call


class _Baton:
    """Lets one process run at a time, and hands the turn to the process whose API call comes first
    on the replay clock (at the same instant: the one listed first).

    Each process runs its replay in a thread of its own, freely until it needs the API server: then
    it asks for its turn at its replay time and waits. Once every process waits (or is done), the
    earliest request is granted. Processes only affect each other through the API server, so its
    calls are applied in replay-time order, whatever each replay does between them (Permit waits,
    retries, its own pace).
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.cv = threading.Condition()
        self.pending: dict[int, int] = {}  # process index -> replay ns of its API call
        self.active: int | None = None
        self.done: set[int] = set()
        self.error: BaseException | None = None
        self.abort = False

    def wait_turn(self, index: int, ns: int) -> None:
        """Called by process ``index``'s thread: block until its call at ``ns`` may run."""
        with self.cv:
            self.pending[index] = ns
            if self.active == index:
                self.active = None
            self.cv.notify_all()
            while self.active != index and not self.abort:
                self.cv.wait()
            if self.abort:
                raise _Aborted

    def finish(self, index: int, error: BaseException | None) -> None:
        with self.cv:
            self.done.add(index)
            self.pending.pop(index, None)
            if self.active == index:
                self.active = None
            if error is not None and self.error is None:
                self.error = error
            self.cv.notify_all()

    def stop(self) -> None:
        with self.cv:
            self.abort = True
            self.cv.notify_all()

    def drive(self) -> None:
        """The main thread: grant turns until every process is done; re-raise a process's error."""
        with self.cv:
            while True:
                while self.active is not None or len(self.pending) + len(self.done) < self.n:
                    self.cv.wait()
                if self.error is not None or not self.pending:
                    break
                index = min(self.pending, key=lambda i: (self.pending[i], i))
                del self.pending[index]
                self.active = index
                self.cv.notify_all()
            if self.error is not None:
                self.abort = True
                self.cv.notify_all()


class _Process:
    """One scheduler process of the race: its replay, run in a thread under the baton."""

    def __init__(
        self,
        index: int,
        spec: RaceScheduler,
        snapshot: Snapshot,
        options: RaceOptions,
        api: ApiServer,
        baton: _Baton,
    ) -> None:
        self.index = index
        self.name = spec.name
        self.api = api
        self.baton = baton
        config = spec.config
        if config is None:
            config = load_config(None)
        self.cycle_seconds = options.cycle_seconds if spec.cycle_seconds is None else spec.cycle_seconds
        self.offset_seconds = spec.offset_seconds
        self.replay = _ProcessReplay(
            _own_snapshot(snapshot),
            config,
            replace(
                options.replay or ReplayOptions(),
                all_nodes=options.all_nodes,
                features={**(options.replay.features if options.replay else {}), **options.features},
                cycle_seconds=self.cycle_seconds,
            ),
        )
        for fw in self.replay.frameworks.values():
            fw.bind[:] = [_ApiBinder(pl, self) for pl in fw.bind]
        self.queue = self.replay.queue()
        self.by_key = {p.key: p for p in self.queue}
        self.replay.clock.advance_to(round(self.offset_seconds * 1e9))
        self.changes_seen = len(self.replay.cluster.changes)
        self._record_events: list[BindingEvent | EvictionEvent] = []
        self._bound_in_record: set[str] = set()

    def main(self) -> None:
        """The thread's body: the whole replay, record by record."""
        error: BaseException | None = None
        try:
            self.baton.wait_turn(self.index, _START)
            for rec in self.replay.cycles():
                self._after(rec)
        except _Aborted:
            pass
        except BaseException as exc:  # handed to the main thread, which re-raises it
            error = exc
        finally:
            self.baton.finish(self.index, error)

    def api_bind(self, pod: Pod, node: str, binder: str, *, reported: bool) -> BindingEvent:
        self.baton.wait_turn(self.index, self.replay.clock.ns)
        self._bound_in_record.add(pod.uid)
        ev = self.api.bind(pod, node, self.name, self.replay.clock.now(), binder, reported)
        self._record_events.append(ev)
        return ev

    def _after(self, rec: CycleRecord) -> None:
        """Settle a record with the API server: an extender binder's binding, evictions."""
        pod = self.by_key.get(rec.pod)
        if (
            rec.result == "Scheduled"
            and rec.selected_node
            and rec.kind in (SCHEDULING, BINDING)
            and pod is not None
            and pod.uid not in self._bound_in_record
        ):
            # bound by an extender binder: the API server judges it, the scheduler never hears of it
            self.api_bind(pod, rec.selected_node, EXTENDER_BINDER, reported=False)
        self._evictions()
        for ev in self._record_events:
            ev.record_seq = rec.seq
        self._record_events = []
        self._bound_in_record = set()

    def _evictions(self) -> None:
        """Bound pods this process took off its cache during the record and did not put back:
        deletions the API server sees (preemption victims)."""
        cluster = self.replay.cluster
        changes = cluster.changes
        removed: dict[str, tuple[Pod, int]] = {}
        for sign, pod, node in changes[self.changes_seen :]:
            if sign < 0:
                removed[pod.uid] = (pod, node)
        self.changes_seen = len(changes)
        gone = [(uid, pod, node) for uid, (pod, node) in removed.items() if cluster.node_of(pod) is None]
        if not gone:
            return
        self.baton.wait_turn(self.index, self.replay.clock.ns)
        for uid, pod, node in gone:
            name = cluster.names[node]
            if uid in self.api.deleted or self.api.node_of.get(uid) != name:
                continue  # not bound there: an assumed pod forgotten
            if uid in self.api.bound_by and self.api.bound_by[uid] != self.name:
                continue  # another process's binding: this one only forgot its own attempt
            self._record_events.append(self.api.evict(pod, name, self.name, self.replay.clock.now()))

    def run_record(self) -> SchedulerRun:
        cfg = self.replay.config
        return SchedulerRun(
            name=self.name,
            profiles=[p.scheduler_name for p in cfg.profiles],
            cycle_seconds=self.cycle_seconds,
            offset_seconds=self.offset_seconds,
            queued=[p.key for p in self.queue],
            trace=self.replay.trace,
            cluster=self.replay.cluster,
        )


def _own_snapshot(s: Snapshot) -> Snapshot:
    """The snapshot with pods of its own: plugins keep per-pod data in ``pod.cache``, and two
    processes may read the same pod under different configurations."""
    return Snapshot(
        nodes=list(s.nodes),
        pods=[Pod(p.raw, p.index) for p in s.pods],
        objects=list(s.objects),
        ignored=dict(s.ignored),
        config=s.config,
        name=s.name,
    )


# ----- the kubelet ---------------------------------------------------------------------------------


def _pod_os_name(pod: Pod) -> str | None:
    raw = pod.spec.get("os")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InputError("expected an object", obj=pod.ident, field="spec.os")
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise InputError("must be a string", obj=pod.ident, field="spec.os.name")
    return name


def _supplemental_groups_policy(pod: Pod) -> str | None:
    sc = pod.spec.get("securityContext")
    if sc is None:
        return None
    if not isinstance(sc, dict):
        raise InputError("expected an object", obj=pod.ident, field="spec.securityContext")
    policy = sc.get("supplementalGroupsPolicy")
    if policy is not None and not isinstance(policy, str):
        raise InputError(
            "must be a string", obj=pod.ident, field="spec.securityContext.supplementalGroupsPolicy"
        )
    return policy


def _node_supports_supplemental_groups_policy(raw: dict[str, Any]) -> bool:
    status = raw.get("status")
    features = status.get("features") if isinstance(status, dict) else None
    return isinstance(features, dict) and features.get("supplementalGroupsPolicy") is True


def kubelet_admit(
    pod: Pod, node: int, cluster: ClusterState, features: dict[str, bool] | None = None
) -> tuple[str, str] | None:
    """The kubelet's predicate admission of ``pod`` on node index ``node`` of ``cluster`` (the pods
    the kubelet already runs there): None when admitted, else (reason, message) of the first
    failure, as predicateAdmitHandler.Admit returns them (pkg/kubelet/lifecycle/predicate.go)."""
    n = cluster.nodes[node]
    kubelet_os = n.labels.get(LABEL_OS) or DEFAULT_NODE_OS
    # rejectPodAdmissionBasedOnOSSelector: the pod's *label*, against the kubelet's OS
    pod_os_label = pod.labels.get(LABEL_OS)
    if pod_os_label is not None and pod_os_label != kubelet_os:
        return OS_SELECTOR_MISMATCH, OS_SELECTOR_MISMATCH_MESSAGE
    # rejectPodAdmissionBasedOnOSField
    os_name = _pod_os_name(pod)
    if os_name is not None and os_name != kubelet_os:
        return OS_NOT_SUPPORTED, OS_NOT_SUPPORTED_MESSAGE
    # rejectPodAdmissionBasedOnSupplementalGroupsPolicy (SupplementalGroupsPolicy is GA in v1.35)
    if _supplemental_groups_policy(pod) == "Strict" and not _node_supports_supplemental_groups_policy(n.raw):
        return SUPPLEMENTAL_GROUPS_NOT_SUPPORTED, SUPPLEMENTAL_GROUPS_NOT_SUPPORTED_MESSAGE

    failures: list[tuple[str, str]] = []
    # generalFilter -> scheduler.AdmissionCheck(includeAllFailures=true): resources first
    # (noderesources.Fits, with the extended resources the node does not have removed:
    # removeMissingExtendedResources), then node affinity, node name, host ports.
    request = {
        r: q
        for r, q in pod.resources.fit_requests.items()
        if not (is_extended_resource_name(r) and r not in n.allocatable)
    }
    for r, requested, used, capacity in _insufficient(request, node, cluster):
        failures.append(
            (out_of_reason(r), INSUFFICIENT_RESOURCE_MESSAGE.format(r, requested, used, capacity))
        )
    if not bool(required_node_affinity_mask(pod, cluster, np.asarray([node], dtype=np.int64))[0]):
        failures.append(_predicate(nodeaffinity.NAME, nodeaffinity.ERR_REASON_POD))
    # nodename.Fits: the bound pod's spec.nodeName is this node, so it always fits
    want = nodeports.host_ports(pod)
    if want and bool(nodeports.used_ports(cluster).conflicting(cluster.n, want)[node]):
        failures.append(_predicate(nodeports.NAME, nodeports.ERR_REASON))
    # untolerated NoExecute taints (pending pods are never static pods)
    comparison_ops = bool((features or {}).get(COMPARISON_OPERATORS_GATE, False))
    taints = [node_taint(t) for t in n.taints]
    if find_matching_untolerated_taint(taints, pod_tolerations(pod), _NO_EXECUTE, comparison_ops) is not None:
        failures.append(_predicate(tainttoleration.NAME, TAINT_ERR_REASON_NOT_MATCH))
    # "If there are failed predicates, we only return the first one as a reason."
    return failures[0] if failures else None


def _predicate(name: str, desc: str) -> tuple[str, str]:
    return name, PREDICATE_FAILED_MESSAGE.format(name, desc)


def _insufficient(
    request: dict[str, int], node: int, cluster: ClusterState
) -> list[tuple[str, int, int, int]]:
    """noderesources fitsRequest with no ignored resources: (resource, requested, used, capacity)."""
    out: list[tuple[str, int, int, int]] = []
    pods_used = int(cluster.pod_count[node])
    allowed = int(cluster.alloc(PODS)[node])
    if pods_used + 1 > allowed:
        out.append((PODS, 1, pods_used, allowed))
    scalars = sorted(r for r in request if r not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS))
    for r in (CPU, MEMORY, EPHEMERAL_STORAGE, *scalars):
        q = request.get(r, 0)
        if q <= 0:
            continue
        capacity = int(cluster.alloc(r)[node])
        used = int(cluster.requested(r)[node])
        if q > capacity - used:
            out.append((r, q, used, capacity))
    return out


# ----- the race ------------------------------------------------------------------------------------


def _schedulers(
    schedulers: Sequence[RaceScheduler | tuple[str, SchedulerConfig | None]],
) -> list[RaceScheduler]:
    out: list[RaceScheduler] = []
    seen: set[str] = set()
    for s in schedulers:
        spec = s if isinstance(s, RaceScheduler) else RaceScheduler(s[0], s[1])
        if not spec.name:
            raise InputError("a scheduler needs a name")
        if spec.name in seen:
            raise InputError(f"scheduler {spec.name!r} is given twice")
        if spec.cycle_seconds is not None and spec.cycle_seconds < 0:
            raise InputError(f"scheduler {spec.name!r}: cycle_seconds must not be negative")
        if spec.offset_seconds < 0:
            raise InputError(f"scheduler {spec.name!r}: offset_seconds must not be negative")
        seen.add(spec.name)
        out.append(spec)
    if not out:
        raise InputError("a race needs at least one scheduler")
    return out


class Race:
    """Several scheduler processes deciding from the same stale snapshot (module docstring)."""

    def __init__(
        self,
        snapshot: Snapshot,
        schedulers: Sequence[RaceScheduler | tuple[str, SchedulerConfig | None]],
        options: RaceOptions | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.options = options or RaceOptions()
        if self.options.cycle_seconds < 0:
            raise InputError("cycle_seconds must not be negative")
        self.specs = _schedulers(schedulers)
        self.api = ApiServer(snapshot)
        self.baton = _Baton(len(self.specs))
        self.processes = [
            _Process(i, s, snapshot, self.options, self.api, self.baton) for i, s in enumerate(self.specs)
        ]

    def run(self) -> RaceReport:
        threads = [
            threading.Thread(target=p.main, name=f"schedviz-race-{p.index}", daemon=True)
            for p in self.processes
        ]
        for t in threads:
            t.start()
        try:
            self.baton.drive()
        except BaseException:
            self.baton.stop()
            raise
        for t in threads:
            t.join()
        if self.baton.error is not None:
            raise self.baton.error
        return self._report()

    def _features(self) -> dict[str, bool]:
        base = self.options.replay.features if self.options.replay is not None else {}
        return {**base, **self.options.features}

    # ----- the kubelets and the report ------------------------------------------------------------
    def _report(self) -> RaceReport:
        snap = self.snapshot
        bound = snap.cluster()  # what the API server ends with
        admitted = snap.cluster()  # what the kubelets run
        originals = {p.uid: p for p in snap.pods}
        failures: list[AdmissionFailure] = []
        rejected_on: dict[str, list[str]] = {}
        failure_of: dict[str, AdmissionFailure] = {}
        for ev in self.api.timeline:
            pod = originals[ev.uid]
            i = bound.index[ev.node]
            if isinstance(ev, EvictionEvent):
                for c in (bound, admitted):
                    if c.node_of(pod) is not None:
                        c.remove_pod(pod)
                continue
            if ev.result != BOUND:
                continue
            bound.add_pod(pod, i)
            verdict = kubelet_admit(pod, i, admitted, self._features())
            if verdict is None:
                admitted.add_pod(pod, i)
                continue
            f = AdmissionFailure(ev.time, ev.pod, ev.node, ev.scheduler, verdict[0], verdict[1])
            failures.append(f)
            failure_of[ev.uid] = f
            rejected_on.setdefault(ev.node, []).append(ev.pod)
        runs = [p.run_record() for p in self.processes]
        return RaceReport(
            start=start_time(snap),
            options={
                "interleaving": INTERLEAVING,
                "cycleSeconds": self.options.cycle_seconds,
                "allNodes": self.options.all_nodes,
                "schedulers": [s.name for s in self.specs],
            },
            schedulers=runs,
            timeline=list(self.api.timeline),
            admission_failures=failures,
            nodes=self._nodes(runs, bound, admitted, rejected_on),
            pods=self._pods(runs, failure_of),
        )

    def _nodes(
        self,
        runs: list[SchedulerRun],
        bound: ClusterState,
        admitted: ClusterState,
        rejected_on: dict[str, list[str]],
    ) -> list[NodeUsage]:
        touched = {e.node for e in self.api.timeline}
        views = [bound, admitted, *(r.cluster for r in runs)]
        known = [set(c.resource_names()) for c in views]
        names = sorted(set().union(*known))
        out: list[NodeUsage] = []
        for i, name in enumerate(bound.names):
            if name not in touched:
                continue
            resources = [
                r
                for r in names
                if r in _ALWAYS_SHOWN
                or any(int(c.requested(r)[i]) for c, k in zip(views, known, strict=True) if r in k)
            ]

            def usage(c: ClusterState, i: int = i, resources: list[str] = resources) -> dict[str, int]:
                return {r: int(c.requested(r)[i]) for r in resources}

            out.append(
                NodeUsage(
                    node=name,
                    allocatable={r: int(bound.alloc(r)[i]) for r in resources},
                    believed={r.name: usage(r.cluster) for r in runs},
                    bound=usage(bound),
                    admitted=usage(admitted),
                    rejected=rejected_on.get(name, []),
                )
            )
        return out

    def _pods(self, runs: list[SchedulerRun], failure_of: dict[str, AdmissionFailure]) -> list[PodOutcome]:
        finals = [r.trace.pod_records() for r in runs]
        out: list[PodOutcome] = []
        for pod in self.snapshot.pending:
            decisions: list[dict[str, Any]] = []
            queued_by: list[str] = []
            for r, records in zip(runs, finals, strict=True):
                got = records.get(pod.key)
                if got is None:
                    continue
                queued_by.append(r.name)
                final = got[1]
                decisions.append({"scheduler": r.name, "result": final.result, "node": final.selected_node})
            node = self.api.node_of.get(pod.uid)
            fail = failure_of.get(pod.uid)
            if not queued_by:
                outcome = NOT_HANDLED
            elif node is None:
                outcome = NOT_BOUND
            elif fail is not None:
                outcome = REJECTED
            else:
                outcome = ADMITTED
            out.append(
                PodOutcome(
                    pod=pod.key,
                    scheduler_name=pod.scheduler_name,
                    schedulers=queued_by,
                    decisions=decisions,
                    outcome=outcome,
                    node=node,
                    bound_by=self.api.bound_by.get(pod.uid),
                    reason=fail.reason if fail is not None else None,
                    message=fail.status_message if fail is not None else None,
                )
            )
        return out


def race(
    snapshot: Snapshot,
    schedulers: Sequence[RaceScheduler | tuple[str, SchedulerConfig | None]],
    options: RaceOptions | None = None,
) -> RaceReport:
    """Race ``schedulers`` (each a process: a name and its configuration) over ``snapshot``."""
    return Race(snapshot, schedulers, options).run()
