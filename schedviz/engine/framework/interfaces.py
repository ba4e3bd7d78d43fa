"""One small protocol per extension point (kube-scheduler/framework/interface.go).

Plugins judge nodes in batches: ``nodes`` is an array of node indices into the cycle's
``ClusterState`` and answers are arrays aligned with it. A plugin implements only the points it
needs; the runtime alone decides order and aggregates results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .cycle_state import CycleState
from .status import Status
from .verdicts import Verdicts

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

    def feature(self, name: str) -> bool:
        return self.features.get(name, False)


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
