"""The configuration's vocabulary: kube-scheduler/config/v1 names, feature gates and what ``load_config``
returns (``SchedulerConfig``, its ``ProfileConfig``s and their ``PluginRef``s)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..features import DEFAULT_FEATURES as _DEFAULT_FEATURES

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)

# Go interface names, for upstream's framework error messages.
INTERFACE = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}

# framework.go getExtensionPoints order: the order upstream builds (and fails on) extension points.
BUILD_ORDER = (
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preScore",
    "score",
    "preBind",
    "bind",
    "postBind",
    "permit",
    "preEnqueue",
    "queueSort",
)

# Feature gates that change configuration defaults or validation (features.py).
DEFAULT_FEATURES = _DEFAULT_FEATURES

# validation.go invalidPluginsByVersion: removed plugins that v1 rejects by name.
REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


@dataclass
class PluginRef:
    """A plugin at an extension point; ``weight`` is only meaningful at ``score`` (0 elsewhere)."""

    name: str
    weight: int = 0


@dataclass
class ProfileConfig:
    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    # extension point -> ordered plugins, final (after multiPoint expansion)
    plugins: dict[str, list[PluginRef]]
    # plugin name -> defaulted, validated args (camelCase keys); {} for plugins without args
    plugin_args: dict[str, dict[str, Any]]

    def score_weights(self) -> dict[str, int]:
        return {r.name: r.weight for r in self.plugins.get("score", [])}


@dataclass
class SchedulerConfig:
    profiles: list[ProfileConfig]
    percentage_of_nodes_to_score: int | None  # global; None = adaptive (same as 0)
    parallelism: int
    pod_initial_backoff_seconds: int
    pod_max_backoff_seconds: int
    extenders: list[dict[str, Any]]  # decoded and validated, camelCase keys
    raw: dict[str, Any]  # the configuration as given ({} for the default one)
    features: dict[str, bool] = field(default_factory=dict)

    def profile(self, scheduler_name: str) -> ProfileConfig | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None


MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1
MAX_NODE_SCORE = 100  # framework.MaxNodeScore
MAX_TOTAL_SCORE = MAX_INT64  # framework.MaxTotalScore


def gates_with_defaults(features: Mapping[str, bool] | None) -> dict[str, bool]:
    """``features`` over ``DEFAULT_FEATURES``: the gates in force."""
    return {**DEFAULT_FEATURES, **(features or {})}
