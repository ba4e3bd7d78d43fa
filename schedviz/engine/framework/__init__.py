"""The plugin contract: status codes, extension point protocols and the per-cycle state.

Mirrors staging/src/k8s.io/kube-scheduler/framework (interface.go, cycle_state.go, types.go).
"""

from .cycle_state import CycleState
from .interfaces import (
    BindPlugin,
    FilterPlugin,
    Handle,
    NodeToStatus,
    NormalizeScorePlugin,
    PermitPlugin,
    Plugin,
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
)
from .nominator import Nominator
from .stage import Stage
from .status import Code, CycleError, Status
from .verdicts import Verdicts
from .waiting import Clock, PermitEvent, WaitingPod, WaitingPods

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "BindPlugin",
    "Clock",
    "Code",
    "CycleError",
    "CycleState",
    "FilterPlugin",
    "Handle",
    "NodeToStatus",
    "Nominator",
    "NormalizeScorePlugin",
    "PermitEvent",
    "PermitPlugin",
    "Plugin",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "ReservePlugin",
    "ScorePlugin",
    "Stage",
    "Status",
    "Verdicts",
    "WaitingPod",
    "WaitingPods",
]
