"""NodeName: a pod with spec.nodeName fits only the node of that name.

Mirrors framework/plugins/nodename/node_name.go (v1.35).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..framework import Code, CycleState, Handle, Verdicts
from ..objects import Pod

IntArray = npt.NDArray[np.int64]

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, nodes: IntArray) -> Verdicts:
        # Fits: an empty spec.nodeName fits every node
        if not pod.node_name:
            return Verdicts.all_pass(len(nodes))
        cluster = state.cluster
        target = cluster.index.get(pod.node_name, -1)
        return Verdicts.from_mask(nodes != target, Code.UnschedulableAndUnresolvable, ERR_REASON)
