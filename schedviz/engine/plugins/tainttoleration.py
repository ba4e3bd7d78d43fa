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
from ..framework.diagnosis import (
    Change,
    Diagnosis,
    DiagnosisContext,
    PodPatch,
    format_taint,
    toleration_dicts,
)
from ..objects import Pod
from ..taints import (
    COMPARISON_OPERATORS_GATE,
    DO_NOT_SCHEDULE,
    PREFER_NO_SCHEDULE,
    PREFER_NOT,
    Taint,
    Toleration,
    pod_tolerations,
    taint_groups,
    tolerations_tolerate_taint,
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

    # ----- explain (framework/diagnosis.py) -----------------------------------------------------------
    def diagnose(
        self, ctx: DiagnosisContext, pod: Pod, nodes: IntArray, reasons: tuple[str, ...]
    ) -> list[Diagnosis] | None:
        """The untolerated NoSchedule/NoExecute taints; the change tolerates them."""
        groups = taint_groups(ctx.cluster)
        comparison = bool(getattr(self, "comparison_ops", False))
        tolerations = pod_tolerations(pod)
        ids = groups.ids[nodes]
        by_taints: dict[tuple[Taint, ...], list[IntArray]] = {}
        for gid in np.unique(ids).tolist():
            bad = tuple(
                t
                for t in groups.sets[gid]
                if t.effect in DO_NOT_SCHEDULE and not tolerations_tolerate_taint(tolerations, t, comparison)
            )
            by_taints.setdefault(bad, []).append(nodes[ids == gid])
        out = []
        for bad, parts in by_taints.items():
            members = np.sort(np.concatenate(parts))
            if not bad:
                out.append(Diagnosis(members, "no untolerated NoSchedule/NoExecute taint found", {}, None))
                continue
            names = [format_taint(t) for t in bad]
            patch = PodPatch(tolerate=tuple(sorted(bad)))
            change = Change(
                "tolerate",
                "pod",
                "tolerate " + ", ".join(names),
                pod=patch,
                details={"tolerations": toleration_dicts(bad)},
            )
            out.append(Diagnosis(members, "untolerated taint(s): " + ", ".join(names), {"taints": names}, change))
            if ctx.top:
                for t in bad:
                    p1 = PodPatch(tolerate=(t,))
                    ctx.suggest(Change(
                            "tolerate",
                            "pod",
                            f"tolerate {format_taint(t)}",
                            pod=p1,
                            details={"tolerations": toleration_dicts((t,))},
                        ),
                    )
                ctx.suggest(change)
        return out
