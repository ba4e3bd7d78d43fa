"""GpuBinpack, an example custom Score plugin: pack pods onto the nodes with the fewest GPUs left.

Score is the number of units of ``resource`` (default ``nvidia.com/gpu``) a node would have free once
the pod is placed on it; NormalizeScore gives the tightest node among the scored ones 100 and takes
``weight`` points off for every further unit left free (never below 0). A pod that asks for no GPU
therefore prefers nodes without free GPUs, keeping GPU nodes free for GPU pods.

Units are the scheduler's: a count for extended resources such as GPUs, milli-CPU for ``cpu``, bytes
for ``memory``.

Configuration::

    profiles:
    - schedulerName: default-scheduler
      plugins:
        multiPoint:
          enabled:
          - name: GpuBinpack
            weight: 2
      pluginConfig:
      - name: GpuBinpack
        args:
          resource: nvidia.com/gpu   # default
          weight: 10                 # points per free unit beyond the tightest node (1-100), default
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from schedviz.engine.config import is_label_key
from schedviz.engine.framework import MAX_NODE_SCORE, CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugin_args import invalid, is_int, required, unknown_fields
from schedviz.engine.runtime.registry import register

IntArray = npt.NDArray[np.int64]

NAME = "GpuBinpack"
DEFAULT_RESOURCE = "nvidia.com/gpu"
DEFAULT_WEIGHT = 10


@register
class GpuBinpack:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        # args arrive defaulted and validated (default_args, validate_args)
        self.resource: str = args["resource"]
        self.weight: int = args["weight"]

    @staticmethod
    def default_args(args: dict[str, Any]) -> dict[str, Any]:
        return {"resource": DEFAULT_RESOURCE, "weight": DEFAULT_WEIGHT, **args}

    @staticmethod
    def validate_args(args: dict[str, Any]) -> list[str]:
        problems = unknown_fields(args, ("resource", "weight"))
        resource = args.get("resource")
        if not isinstance(resource, str):
            problems.append(invalid("resource", resource, "must be a resource name"))
        elif not resource:
            problems.append(required("resource", "a resource name such as nvidia.com/gpu"))
        else:
            problems.extend(invalid("resource", resource, m) for m in is_label_key(resource))
        weight = args.get("weight")
        if not is_int(weight) or not 1 <= weight <= MAX_NODE_SCORE:
            problems.append(invalid("weight", weight, f"must be an integer between 1 and {MAX_NODE_SCORE}"))
        return problems

    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray:
        """Units of the resource each node would have free with the pod on it."""
        cluster = state.cluster
        wanted = pod.resources.requests.get(self.resource, 0)
        free = cluster.alloc(self.resource)[nodes] - cluster.requested(self.resource)[nodes] - wanted
        out: IntArray = np.maximum(free, 0).astype(np.int64)
        return out

    def normalize_score(self, state: CycleState, pod: Pod, nodes: IntArray, scores: IntArray) -> IntArray:
        if len(scores) == 0:
            return scores
        left_over = scores - scores.min()
        out: IntArray = np.maximum(MAX_NODE_SCORE - self.weight * left_over, 0).astype(np.int64)
        return out
