"""NodeUnschedulable: rejects nodes with spec.unschedulable unless the pod tolerates the
node.kubernetes.io/unschedulable:NoSchedule taint.

Mirrors framework/plugins/nodeunschedulable/node_unschedulable.go (v1.35).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..framework import Code, CycleState, Handle, Verdicts
from ..framework.diagnosis import Change, Diagnosis, DiagnosisContext
from ..objects import Pod
from ..taints import (
    COMPARISON_OPERATORS_GATE,
    NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    Taint,
    pod_tolerations,
    tolerations_tolerate_taint,
)

IntArray = npt.NDArray[np.int64]

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"  # unused by Filter upstream too

# The taint the pod must tolerate (no value) to land on an unschedulable node.
UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)


class NodeUnschedulable:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.comparison_ops = handle.feature(COMPARISON_OPERATORS_GATE)

    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        unschedulable = state.cluster.unschedulable[nodes]
        if not unschedulable.any():
            return Verdicts.all_pass(len(nodes))
        if tolerations_tolerate_taint(pod_tolerations(pod), UNSCHEDULABLE_TAINT, self.comparison_ops):
            return Verdicts.all_pass(len(nodes))
        return Verdicts.from_mask(unschedulable, Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """A cordoned node; the change uncordons it."""
        change = Change(
            "uncordon",
            "node",
            "uncordon the node (clear spec.unschedulable and the node.kubernetes.io/unschedulable taint)",
            uncordon=True,
        )
        return [Diagnosis(nodes, "node is cordoned (spec.unschedulable)", {}, change)]
