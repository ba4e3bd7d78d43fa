"""NodeResourcesBalancedAllocation against the figures of upstream's balanced_allocation_test.go (v1.35)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from schedviz.engine.cluster import ClusterState
from schedviz.engine.framework import CycleState, Handle
from schedviz.engine.objects import Node, Pod
from schedviz.engine.plugins.noderesources import resource_allocation as ra
from schedviz.engine.plugins.noderesources.balanced_allocation import PRE_SCORE_STATE_KEY, BalancedAllocation

GPU = "nvidia.com/gpu"
Req = dict[str, str]


def node(name: str, milli_cpu: int, memory: int, **extra: int) -> dict[str, Any]:
    """test_util.go makeNode: cpu in milli-CPU, memory in bytes, extra scalar resources."""
    alloc = {
        "cpu": f"{milli_cpu}m",
        "memory": str(memory),
        **{k.replace("__", "/").replace("_", "."): str(v) for k, v in extra.items()},
    }
    return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": alloc, "capacity": alloc}}


def pod(name: str, containers: list[Req], on: str | None = None, **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "containers": [
            {"name": f"c{i}", "image": "img", "resources": {"requests": r}} for i, r in enumerate(containers)
        ],
        **spec,
    }
    if on:
        s["nodeName"] = on
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name}, "spec": s}


# the pod specs of balanced_allocation_test.go
CPU_AND_MEMORY = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]
CPU_ONLY = [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}]
MEMORY_ONLY = [{"cpu": "0", "memory": "2000"}, {"cpu": "0", "memory": "3000"}]
CPU_MEMORY_GPU = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"}]
DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
WITH_GPU = [*DEFAULT, {"name": GPU, "weight": 1}]


def setup(
    nodes: list[dict[str, Any]], existing: list[dict[str, Any]], args: dict[str, Any]
) -> tuple[ClusterState, BalancedAllocation]:
    c = ClusterState([Node(n) for n in nodes])
    for i, p in enumerate(existing):
        po = Pod(p, i)
        c.add_pod(po, c.index[po.node_name])
    return c, BalancedAllocation(args, Handle(c))


CASES: list[
    tuple[str, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], list[int]]
] = [
    (
        # fractions 0.75 and 0.5: std 0.125 -> 87; 0.5 and 0.5 -> 100
        "nothing scheduled, resources requested, differently sized nodes",
        pod("p", CPU_AND_MEMORY),
        [node("node1", 4000, 10000), node("node2", 6000, 10000)],
        [],
        {"resources": DEFAULT},
        [87, 100],
    ),
    (
        # node1: 0.6 / 0.25 -> 82; node2: 0.6 / 0.5 -> 95
        "resources requested, pods scheduled with resources",
        pod("p", CPU_AND_MEMORY),
        [node("node1", 10000, 20000), node("node2", 10000, 20000)],
        [pod("a", CPU_ONLY, on="node1"), pod("b", CPU_AND_MEMORY, on="node2")],
        {"resources": DEFAULT},
        [82, 95],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        pod("p", CPU_AND_MEMORY),
        [node("node1", 10000, 20000), node("node2", 10000, 50000)],
        [pod("a", CPU_ONLY, on="node1"), pod("b", CPU_AND_MEMORY, on="node2")],
        {"resources": DEFAULT},
        [82, 80],
    ),
    (
        # node1: 1 / 0 -> 50; node2: 1 / 0.5 -> 75
        "requested resources at node capacity",
        pod("p", CPU_ONLY),
        [node("node1", 6000, 10000), node("node2", 6000, 10000)],
        [pod("a", CPU_ONLY, on="node1"), pod("b", CPU_AND_MEMORY, on="node2")],
        {"resources": DEFAULT},
        [50, 75],
    ),
    (
        # three fractions: sqrt of the mean squared deviation
        "include scalar resource on a node for balanced resource allocation",
        pod("p", [{"memory": "0", GPU: "1"}]),
        [node("node1", 3500, 40000, nvidia_com__gpu=8), node("node2", 3500, 40000, nvidia_com__gpu=8)],
        [pod("a", CPU_AND_MEMORY, on="node2"), pod("b", CPU_MEMORY_GPU, on="node1")],
        {"resources": WITH_GPU},
        [70, 65],
    ),
    (
        "node without the scalar resource skips it",
        pod("p", CPU_AND_MEMORY),
        [node("node1", 3500, 40000, nvidia_com__gpu=8), node("node2", 3500, 40000)],
        [],
        {"resources": WITH_GPU},
        [63, 63],
    ),
    (
        # actual requests, not the non-zero ones: the pod asks 0 cpu; node1 cpu 3000/3000 and
        # memory 5000/5000 -> std 0; node2 cpu 0/3000 and memory 1 -> 50
        "nodes to reach min/max score",
        pod("p", MEMORY_ONLY),
        [node("node1", 3000, 5000), node("node2", 3000, 5000)],
        [pod("a", CPU_ONLY, on="node1")],
        {"resources": DEFAULT},
        [100, 50],
    ),
    (
        # Requests are not capped by the filter: a fraction above 1 counts as 1 (6000/4000 -> 1, 0 -> 50)
        "fractions are capped at 1",
        pod("p", CPU_ONLY),
        [node("node1", 4000, 10000)],
        [pod("a", CPU_ONLY, on="node1")],
        {"resources": DEFAULT},
        [50],
    ),
    (
        # a single counted resource gives std 0
        "one resource only",
        pod("p", CPU_ONLY),
        [node("node1", 4000, 10000)],
        [],
        {"resources": [{"name": "cpu", "weight": 1}]},
        [100],
    ),
    (
        # zero allocatable everywhere: nothing counted, std 0
        "zero node resources",
        pod("p", CPU_AND_MEMORY),
        [node("node1", 0, 0), node("node2", 0, 0)],
        [pod("a", CPU_ONLY, on="node1"), pod("b", CPU_AND_MEMORY, on="node2")],
        {"resources": DEFAULT},
        [100, 100],
    ),
    (
        # pod-level requests count (PodLevelResources is on): cpu 2000/4000 and memory 5000/10000
        "pod-level requests are honoured",
        pod("p", [{"cpu": "1", "memory": "5000"}], resources={"requests": {"cpu": "2"}}),
        [node("node1", 4000, 10000)],
        [],
        {"resources": DEFAULT},
        [100],
    ),
    (
        # defaulted args: cpu and memory
        "default resources",
        pod("p", CPU_AND_MEMORY),
        [node("node1", 4000, 10000)],
        [],
        {},
        [87],
    ),
]


@pytest.mark.parametrize(("name", "p", "nodes", "existing", "args", "want"), CASES, ids=[c[0] for c in CASES])
def test_score(
    name: str,
    p: dict[str, Any],
    nodes: list[dict[str, Any]],
    existing: list[dict[str, Any]],
    args: dict[str, Any],
    want: list[int],
) -> None:
    c, plugin = setup(nodes, existing, args)
    all_nodes = np.arange(c.n, dtype=np.int64)
    state = CycleState(c)
    assert plugin.pre_score(state, Pod(p), all_nodes).is_success()
    assert plugin.score(state, Pod(p), all_nodes).tolist() == want
    # without PreScore the result is the same
    assert plugin.score(CycleState(c), Pod(p), all_nodes).tolist() == want


@pytest.mark.parametrize(
    ("p", "args"),
    [
        (pod("p", []), {"resources": DEFAULT}),
        (pod("p", [{}]), {"resources": DEFAULT}),  # no non-zero defaults for this plugin
        (pod("p", [{"cpu": "0", "memory": "0"}]), {"resources": DEFAULT}),
        (pod("p", [{GPU: "1"}]), {"resources": DEFAULT}),  # requests only a resource it does not score
    ],
)
def test_best_effort_pods_skip(p: dict[str, Any], args: dict[str, Any]) -> None:
    c, plugin = setup([node("node1", 4000, 10000)], [], args)
    state = CycleState(c)
    assert plugin.pre_score(state, Pod(p), np.arange(1, dtype=np.int64)).is_skip()
    assert state.get(PRE_SCORE_STATE_KEY) is None
    # Score without PreScore returns 0 for a best-effort pod
    assert plugin.score(state, Pod(p), np.arange(1, dtype=np.int64)).tolist() == [0]


def test_not_best_effort_when_a_scored_scalar_is_requested() -> None:
    c, plugin = setup([node("node1", 4000, 10000, nvidia_com__gpu=4)], [], {"resources": WITH_GPU})
    p = Pod(pod("p", [{GPU: "2"}]))
    assert plugin.pre_score(CycleState(c), p, np.arange(1, dtype=np.int64)).is_success()
    # cpu 0, memory 0, gpu 0.5: mean 1/6, deviations 1/6, 1/6, 1/3 -> std sqrt(1/18) = 0.2357 -> 76
    assert plugin.score(CycleState(c), p, np.arange(1, dtype=np.int64)).tolist() == [76]


def test_balanced_matches_float64_formula() -> None:
    # cross-check the vectorised scorer against a scalar transcription of the formula
    rng = np.random.default_rng(7)
    alloc = rng.integers(0, 5000, size=(4, 200)).astype(np.int64)
    alloc[rng.random(alloc.shape) < 0.2] = 0
    req = rng.integers(0, 6000, size=(4, 200)).astype(np.int64)
    got = ra.balanced(alloc, np.where(alloc != 0, req, 0))
    for k in range(alloc.shape[1]):
        fr = [min(float(req[i, k]) / float(alloc[i, k]), 1.0) for i in range(4) if alloc[i, k] != 0]
        std = 0.0
        if len(fr) == 2:
            std = abs((fr[0] - fr[1]) / 2)
        elif len(fr) > 2:
            mean = sum(fr) / len(fr)
            s = 0.0
            for f in fr:
                s = s + (f - mean) * (f - mean)
            std = (s / len(fr)) ** 0.5
        assert int(got[k]) == int((1 - std) * 100), k
