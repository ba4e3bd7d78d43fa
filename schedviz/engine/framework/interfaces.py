"""One small protocol per extension point (kube-scheduler/framework/interface.go).

Plugins judge nodes in batches: ``nodes`` is an array of node indices into the cycle's
``ClusterState`` and answers are arrays aligned with it. A plugin implements only the points it
needs; the runtime alone decides order and aggregates results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .cycle_state import CycleState
from .extender import Extender
from .nominator import Nominator
from .status import Status
from .verdicts import Verdicts
from .waiting import Clock, WaitingPod, WaitingPods

if TYPE_CHECKING:
    from ..cluster import ClusterState
    from ..objects import Pod

IntArray = npt.NDArray[np.int64]


class Handle:
    """What a plugin may reach besides its arguments: the cluster being replayed and feature gates."""

    def __init__(
        self, cluster: ClusterState, features: dict[str, bool] | None = None, profile: str = ""
    ) -> None:
        self.cluster = cluster
        self.features: dict[str, bool] = dict(features or {})
        self.profile = profile
        # The profile's runtime (runtime.framework.Framework), set once it is built; PostFilter
        # plugins use it to re-run PreFilter and Filter on a modified cluster.
        self.framework: Any = None
        # Pods waiting at Permit, shared by every profile, and the replay clock (framework/waiting.py);
        # the replay replaces this map with its own.
        self.waiting_pods: WaitingPods = WaitingPods()
        # Every non-terminal pod of the snapshot, pending or bound: what the scheduler's pod informer
        # lists (plugins that list pods by label, as Coscheduling does, read it). Set by the replay.
        self.pods: list[Pod] = []
        # The scheduler's extenders (framework/extender.py; runtime.extenders.HTTPExtender), in upstream's order, shared by
        # every profile (Handle.Extenders); DefaultPreemption consults them. Set by the replay.
        self.extenders: Sequence[Extender] = []
        # Pods nominated to nodes and their status.nominatedNodeName (the scheduling queue's
        # nominator, shared by every profile; framework/nominator.py). Set by the replay.
        self.nominator: Nominator = Nominator()
        # What a plugin would ask the API server to do (delete a preemption victim, clear a pod's
        # nominatedNodeName): the replay's stand-in (runtime/queue.py ClusterApi), or None when
        # preemption only dry-runs and nothing may change.
        self.api: Any = None

    def feature(self, name: str) -> bool:
        return self.features.get(name, False)

    def nominated_pods_for_node(self, node: str) -> list[Pod]:
        """PodNominator.NominatedPodsForNode: pods nominated to run on ``node`` (a node name)."""
        return self.nominator.pods_for_node(node)

    # ----- replay time and waiting pods (framework.go IterateOverWaitingPods, GetWaitingPod, ...) ---
    @property
    def clock(self) -> Clock:
        return self.waiting_pods.clock

    def now(self) -> float:
        """The replay time, in seconds since the Unix epoch (what a plugin's time.Now() reads)."""
        return self.waiting_pods.clock.now()

    @property
    def dry_run(self) -> bool:
        """True while the replay previews a cycle: plugins must not change state that outlives it."""
        return self.waiting_pods.dry_run

    def iterate_over_waiting_pods(self) -> list[WaitingPod]:
        """The pods waiting at Permit, in the order they started waiting."""
        return list(self.waiting_pods)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a waiting pod (plugin "", message "removed"); False when no such pod waits."""
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True


@dataclass
class PreFilterResult:
    """Restricts the nodes Filter looks at; ``node_names`` None means all nodes."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return PreFilterResult(None if self.node_names is None else set(self.node_names))
        if self.all_nodes():
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult((self.node_names or set()) & (other.node_names or set()))


@dataclass
class PostFilterResult:
    """The outcome of a PostFilter plugin: a nominated node and whatever the plugin wants traced."""

    nominated_node_name: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class NodeToStatus:
    """Every node's filter status of a failed cycle (framework.NodeToStatus), by node index."""

    statuses: dict[int, Status]
    absent: Status


@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: Pod, b: Pod) -> bool: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, nodes: IntArray) -> Status: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray: ...


@runtime_checkable
class NormalizeScorePlugin(Plugin, Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, nodes: IntArray, scores: IntArray) -> IntArray: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Pod, node: str) -> Status: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node: str) -> None: ...
