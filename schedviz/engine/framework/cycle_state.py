"""CycleState: scratch data plugins share within one scheduling cycle (cycle_state.go)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..cluster import ClusterState

# Set by the runtime when a nodeCacheCapable=false filter extender answered with node objects: a
# bool array over the cluster's nodes marking those whose NodeInfo upstream rebuilt from the answer
# (HTTPExtender.Filter: framework.NewNodeInfo + SetNode), so Score plugins see no pods, no requested
# resources and no image states on them (v1.35; kubernetes/kubernetes#141781).
BARE_NODE_INFOS = "Extender/bareNodeInfos"


class CycleState:
    """Per-cycle key/value store, plus the cluster snapshot the cycle runs against."""

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        # What plugins add to the trace: (extension point, plugin) -> details, which the runtime
        # moves into that call's Stage.details when the cycle ends (docs/trace-format.md).
        self.stage_details: dict[tuple[str, str], dict[str, Any]] = {}

    def record_details(self, point: str, plugin: str, details: dict[str, Any]) -> None:
        """Add ``details`` (JSON-ready) to the trace's stage of ``plugin`` at ``point`` in this cycle."""
        self.stage_details.setdefault((point, plugin), {}).update(details)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value stored under ``key``; KeyError when absent (upstream's ErrNotFound)."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState(self.cluster)
        c._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        return c
