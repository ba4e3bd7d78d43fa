"""NodeResourcesBalancedAllocation: prefers nodes whose resource usage fractions would be close to
each other once the pod is placed.

Mirrors framework/plugins/noderesources/balanced_allocation.go (v1.35): PreScore skips best-effort
pods (every configured resource requested at zero); Score is (1 - std) * MaxNodeScore over the
fractions requested / allocatable (capped at 1) of the configured resources the node has, using the
nodes' actual requests (useRequested) and the pod's actual requests (no non-zero defaults;
pod-level resources and container status resources honoured).
Not modelled: DRAExtendedResource (alpha, off by default in v1.35).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..framework import CycleState, Handle, Status
from ..framework.cycle_state import BARE_NODE_INFOS
from ..objects import Pod
from ..resources import ParsedPodResources
from . import resource_allocation as ra

IntArray = npt.NDArray[np.int64]

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


def _balanced_requests(parsed: ParsedPodResources) -> dict[str, int]:
    # NewBalancedAllocation: useRequested true, InPlacePodVerticalScaling and PodLevelResources on
    return ra.scorer_requests(parsed, use_requested=True, use_status=True, pod_level=True)


class BalancedAllocation:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle
        # apis/config/v1/defaults.go SetDefaults_NodeResourcesBalancedAllocationArgs
        self.resources: tuple[ra.ResourceSpec, ...] = ra.resource_specs(args.get("resources"), "resources")

    def _pod_requests(self, pod: Pod) -> list[int]:
        view = pod.resources.view(NAME, _balanced_requests)
        return [view.get(r.name, 0) for r in self.resources]

    def pre_score(self, state: CycleState, pod: Pod, nodes: IntArray) -> Status:
        requests = self._pod_requests(pod)
        if not any(requests):
            # best-effort pods are not scored, so that they do not all pile onto one node
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, requests)
        return Status.success()

    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray:
        requests: Sequence[int] | None = state.get(PRE_SCORE_STATE_KEY)
        if requests is None:
            requests = self._pod_requests(pod)
            if not any(requests):
                return np.zeros(len(nodes), dtype=np.int64)
        bare = state.get(BARE_NODE_INFOS)
        alloc, req = ra.allocatable_and_requested(state.cluster, nodes, self.resources, requests, True, bare)
        return ra.balanced(alloc, req)
