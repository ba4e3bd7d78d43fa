"""TaintToleration: keeps pods off nodes with taints they do not tolerate, and prefers nodes with
fewer untolerated PreferNoSchedule taints.

Mirrors framework/plugins/tainttoleration/taint_toleration.go (v1.35): Filter, PreScore, Score and
NormalizeScore (helper.DefaultNormalizeScore, reversed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..framework import MAX_NODE_SCORE, Code, CycleState, Handle, Status, Verdicts
from ..objects import Pod
from ..taints import (
    COMPARISON_OPERATORS_GATE,
    DO_NOT_SCHEDULE,
    PREFER_NO_SCHEDULE,
    PREFER_NOT,
    Toleration,
    pod_tolerations,
    untolerated_count,
    untolerated_mask,
)
from .helper import default_normalize_score

IntArray = npt.NDArray[np.int64]

NAME = "TaintToleration"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
# taint_toleration.go Filter: the status message (ErrReasonNotMatch is not what Filter returns)
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"


def prefer_no_schedule_tolerations(tolerations: tuple[Toleration, ...]) -> tuple[Toleration, ...]:
    """getAllTolerationPreferNoSchedule: tolerations with effect PreferNoSchedule or no effect."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


class TaintToleration:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.comparison_ops = handle.feature(COMPARISON_OPERATORS_GATE)

    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        # NoSchedule and NoExecute taints only (helper.DoNotScheduleTaintsFilterFunc)
        bad = untolerated_mask(state.cluster, nodes, pod, DO_NOT_SCHEDULE, comparison_ops=self.comparison_ops)
        return Verdicts.from_mask(bad, Code.UnschedulableAndUnresolvable, ERR_REASON_UNTOLERATED)

    def pre_score(self, state: CycleState, pod: Pod, nodes: IntArray) -> Status:
        # Never skips: every node is scored, even without taints or tolerations.
        state.write(PRE_SCORE_STATE_KEY, prefer_no_schedule_tolerations(pod_tolerations(pod)))
        return Status.success()

    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray:
        # countIntolerableTaintsPreferNoSchedule over the PreScore subset of tolerations. A
        # toleration with another effect can never tolerate a PreferNoSchedule taint, so the pod's
        # whole list gives the same count, and passing the pod caches the per-taint-set answers on it.
        return untolerated_count(state.cluster, nodes, pod, PREFER_NOT, comparison_ops=self.comparison_ops)

    def normalize_score(self, state: CycleState, pod: Pod, nodes: IntArray, scores: IntArray) -> IntArray:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)
