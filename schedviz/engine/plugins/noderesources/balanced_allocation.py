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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...apimachinery import ErrorList
from ...framework import CycleState, Handle, Status
from ...framework.cycle_state import BARE_NODE_INFOS
from ...objects import Pod
from ...plugin_args import RESOURCE_SPEC, default_resources, list_of, obj
from ...resources import ParsedPodResources
from . import resource_allocation as ra

IntArray = npt.NDArray[np.int64]

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME


def _balanced_requests(parsed: ParsedPodResources) -> dict[str, int]:
    # NewBalancedAllocation: useRequested true, InPlacePodVerticalScaling and PodLevelResources on
    return ra.scorer_requests(parsed, use_requested=True, use_status=True, pod_level=True)


# ----- args (kube-scheduler/config/v1 types_pluginargs.go NodeResourcesBalancedAllocationArgs,
# v1/defaults.go, apis/config/validation/validation_pluginargs.go ValidateNodeResourcesBalancedAllocationArgs)

ARGS_TYPE = obj("v1.NodeResourcesBalancedAllocationArgs", resources=list_of(RESOURCE_SPEC))


def default_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> dict[str, Any]:
    resources = [dict(r) for r in a.get("resources", [])] or default_resources()
    for r in resources:
        r.setdefault("name", "")
        if not r.get("weight"):
            r["weight"] = 1
    return {"resources": resources}


def validate_args(a: dict[str, Any], features: Mapping[str, bool] | None = None) -> list[str]:
    errs = ErrorList()
    seen: set[str] = set()
    for i, r in enumerate(a["resources"]):
        p = f"resources[{i}]"
        if r["name"] in seen:
            errs.duplicate(f"{p}.name", r["name"])
        else:
            seen.add(r["name"])
        if r["weight"] != 1:
            errs.invalid(f"{p}.weight", r["weight"], "must be 1")
    return errs.items


class BalancedAllocation:
    name = NAME
    # args: declared here, decoded, defaulted and validated by the configuration (config/)
    args_type = ARGS_TYPE
    default_args = staticmethod(default_args)
    validate_args = staticmethod(validate_args)

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
        key = (NAME, self.resources, tuple(requests))
        return ra.score_nodes(
            state.cluster, nodes, key, self.resources, requests, True, ra.balanced, state.get(BARE_NODE_INFOS)
        )
