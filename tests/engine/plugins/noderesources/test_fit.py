"""NodeResourcesFit against the figures of upstream's fit_test.go, least_allocated_test.go,
most_allocated_test.go and requested_to_capacity_ratio_test.go (v1.35)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from schedviz.engine.cluster import ClusterState
from schedviz.engine.errors import ConfigError
from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.objects import Node, Pod
from schedviz.engine.plugins.noderesources import resource_allocation as ra
from schedviz.engine.plugins.noderesources.fit import PRE_FILTER_STATE_KEY, Fit
from schedviz.engine.resources import DEFAULT_MEMORY_REQUEST

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_A = "kubernetes.io/something"
K8S_B = "subdomain.kubernetes.io/something"
HUGE = "hugepages-2Mi"
XYZ = "abc.com/xyz"
MI = 1024 * 1024

Req = dict[str, str]


def node(name: str, alloc: Req) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": dict(alloc), "capacity": dict(alloc)},
    }


def pod(
    name: str = "p",
    containers: Sequence[Req | None] | None = None,
    *,
    on: str | None = None,
    init: list[Req] | None = None,
    sidecars: list[Req] | None = None,
    overhead: Req | None = None,
    pod_level: Req | None = None,
) -> dict[str, Any]:
    """A pod whose containers request ``containers`` (None: a container without requests)."""

    def ctr(n: str, req: Req | None, **kw: Any) -> dict[str, Any]:
        return {"name": n, "image": "img", "resources": {"requests": req} if req is not None else {}, **kw}

    spec: dict[str, Any] = {"containers": [ctr(f"c{i}", r) for i, r in enumerate(containers or [])]}
    inits = [ctr(f"s{i}", r, restartPolicy="Always") for i, r in enumerate(sidecars or [])]
    inits += [ctr(f"i{i}", r) for i, r in enumerate(init or [])]
    if inits:
        spec["initContainers"] = inits
    if overhead:
        spec["overhead"] = overhead
    if pod_level:
        spec["resources"] = {"requests": pod_level}
    if on:
        spec["nodeName"] = on
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name}, "spec": spec}


def pp(containers: Sequence[Req | None] | None = None, **kw: Any) -> dict[str, Any]:
    """The pod being scheduled."""
    return pod("p", containers, **kw)


def cluster(nodes: list[dict[str, Any]], pods: list[dict[str, Any]] = ()) -> ClusterState:  # type: ignore[assignment]
    c = ClusterState([Node(n) for n in nodes])
    for i, p in enumerate(pods):
        po = Pod(p, i)
        c.add_pod(po, c.index[po.node_name])
    return c


def run_filter(
    c: ClusterState, p: dict[str, Any], args: dict[str, Any] | None = None
) -> list[tuple[Code, tuple[str, ...]]]:
    plugin = Fit(args or {}, Handle(c))
    state = CycleState(c)
    _, status = plugin.pre_filter(state, Pod(p))
    assert status.is_success()
    v = plugin.filter(state, Pod(p), np.arange(c.n, dtype=np.int64))
    return [v.at(k) for k in range(len(v))]


# ----- Filter --------------------------------------------------------------------------------------

# fit_test.go TestEnoughRequests: node allocatable cpu 10m, memory 20, pods 32, example.com/aaa 5,
# ephemeral-storage 20, hugepages-2Mi 5; the node already runs one pod using ``used``.
ENOUGH_NODE = {"cpu": "10m", "memory": "20", "pods": "32", EXT_A: "5", "ephemeral-storage": "20", HUGE: "5"}
U = Code.Unschedulable
UU = Code.UnschedulableAndUnresolvable
OK: tuple[Code, tuple[str, ...]] = (Code.Success, ())


def cm(cpu: int, mem: int, **extra: int) -> Req:
    r = {"cpu": f"{cpu}m", "memory": str(mem)}
    r.update({k.replace("__", "/").replace("_", "."): str(v) for k, v in extra.items()})
    return r


def cmx(cpu: int, mem: int, extra: dict[str, int]) -> Req:
    r = {"cpu": f"{cpu}m", "memory": str(mem)}
    r.update({k: str(v) for k, v in extra.items()})
    return r


ENOUGH_CASES: list[tuple[str, dict[str, Any], Req, dict[str, Any], tuple[Code, tuple[str, ...]]]] = [
    ("no resources requested always fits", pp(), cm(10, 20), {}, OK),
    (
        "too many resources fails",
        pp([cm(1, 1)]),
        cm(10, 20),
        {},
        (U, ("Insufficient cpu", "Insufficient memory")),
    ),
    (
        "fails due to init container cpu",
        pp([cm(1, 1)], init=[cm(3, 1)]),
        cm(8, 19),
        {},
        (U, ("Insufficient cpu",)),
    ),
    (
        "fails due to highest init container cpu",
        pp([cm(1, 1)], init=[cm(3, 1), cm(2, 1)]),
        cm(8, 19),
        {},
        (U, ("Insufficient cpu",)),
    ),
    (
        "fails due to init container memory",
        pp([cm(1, 1)], init=[cm(1, 3)]),
        cm(9, 19),
        {},
        (U, ("Insufficient memory",)),
    ),
    (
        "fails due to highest init container memory",
        pp([cm(1, 1)], init=[cm(1, 3), cm(1, 2)]),
        cm(9, 19),
        {},
        (U, ("Insufficient memory",)),
    ),
    ("init container fits: max, not sum", pp([cm(1, 1)], init=[cm(1, 1)]), cm(9, 19), {}, OK),
    ("multiple init containers fit", pp([cm(1, 1)], init=[cm(1, 1), cm(1, 1)]), cm(9, 19), {}, OK),
    ("both resources fit", pp([cm(1, 1)]), cm(5, 5), {}, OK),
    ("one resource memory fits", pp([cm(2, 1)]), cm(9, 5), {}, (U, ("Insufficient cpu",))),
    ("one resource cpu fits", pp([cm(1, 2)]), cm(5, 19), {}, (U, ("Insufficient memory",))),
    ("equal edge case", pp([cm(5, 1)]), cm(5, 19), {}, OK),
    ("equal edge case for init container", pp([cm(4, 1)], init=[cm(5, 1)]), cm(5, 19), {}, OK),
    ("extended resource fits", pp([{EXT_A: "1"}]), {}, {}, OK),
    ("extended resource fits for init container", pp([{}], init=[{EXT_A: "1"}]), {}, {}, OK),
    (
        "extended resource capacity enforced",
        pp([cmx(1, 1, {EXT_A: 10})]),
        cmx(0, 0, {EXT_A: 0}),
        {},
        (UU, (f"Insufficient {EXT_A}",)),
    ),
    (
        "extended resource capacity enforced for init container",
        pp([{}], init=[cmx(1, 1, {EXT_A: 10})]),
        cmx(0, 0, {EXT_A: 0}),
        {},
        (UU, (f"Insufficient {EXT_A}",)),
    ),
    (
        "extended resource allocatable enforced",
        pp([cmx(1, 1, {EXT_A: 1})]),
        cmx(0, 0, {EXT_A: 5}),
        {},
        (U, (f"Insufficient {EXT_A}",)),
    ),
    (
        "extended resource allocatable enforced for init container",
        pp([{}], init=[cmx(1, 1, {EXT_A: 1})]),
        cmx(0, 0, {EXT_A: 5}),
        {},
        (U, (f"Insufficient {EXT_A}",)),
    ),
    (
        "extended resource enforced for multiple containers",
        pp([cmx(1, 1, {EXT_A: 3}), cmx(1, 1, {EXT_A: 3})]),
        cmx(0, 0, {EXT_A: 2}),
        {},
        (UU, (f"Insufficient {EXT_A}",)),
    ),
    (
        "extended resource admits multiple init containers",
        pp([{}], init=[cmx(1, 1, {EXT_A: 3}), cmx(1, 1, {EXT_A: 3})]),
        cmx(0, 0, {EXT_A: 2}),
        {},
        OK,
    ),
    (
        "extended resource enforced for multiple init containers",
        pp([{}], init=[cmx(1, 1, {EXT_A: 6}), cmx(1, 1, {EXT_A: 3})]),
        cmx(0, 0, {EXT_A: 2}),
        {},
        (UU, (f"Insufficient {EXT_A}",)),
    ),
    (
        "unknown extended resource",
        pp([cmx(1, 1, {EXT_B: 1})]),
        cm(0, 0),
        {},
        (UU, (f"Insufficient {EXT_B}",)),
    ),
    (
        "unknown extended resource for init container",
        pp([{}], init=[cmx(1, 1, {EXT_B: 1})]),
        cm(0, 0),
        {},
        (UU, (f"Insufficient {EXT_B}",)),
    ),
    (
        "kubernetes.io resource enforced",
        pp([cmx(1, 1, {K8S_A: 10})]),
        cm(0, 0),
        {},
        (UU, (f"Insufficient {K8S_A}",)),
    ),
    (
        "kubernetes.io resource enforced for init container",
        pp([{}], init=[cmx(1, 1, {K8S_B: 10})]),
        cm(0, 0),
        {},
        (UU, (f"Insufficient {K8S_B}",)),
    ),
    (
        "hugepages capacity enforced",
        pp([cmx(1, 1, {HUGE: 10})]),
        cmx(0, 0, {HUGE: 0}),
        {},
        (UU, (f"Insufficient {HUGE}",)),
    ),
    (
        "hugepages capacity enforced for init container",
        pp([{}], init=[cmx(1, 1, {HUGE: 10})]),
        cmx(0, 0, {HUGE: 0}),
        {},
        (UU, (f"Insufficient {HUGE}",)),
    ),
    (
        "hugepages enforced for multiple containers",
        pp([cmx(1, 1, {HUGE: 3}), cmx(1, 1, {HUGE: 3})]),
        cmx(0, 0, {HUGE: 2}),
        {},
        (UU, (f"Insufficient {HUGE}",)),
    ),
    ("ignored extended resource", pp([cmx(1, 1, {EXT_B: 1})]), cm(0, 0), {"ignoredResources": [EXT_B]}, OK),
    ("requests + overhead fit", pp([cm(1, 1)], overhead={"cpu": "3m", "memory": "13"}), cm(5, 5), {}, OK),
    (
        "requests + overhead do not fit for memory",
        pp([cm(1, 1)], overhead={"cpu": "1m", "memory": "15"}),
        cm(5, 5),
        {},
        (U, ("Insufficient memory",)),
    ),
    (
        "ignored resource group skips only extended resources",
        pp([cmx(1, 1, {EXT_B: 1, K8S_A: 1})]),
        cm(0, 0),
        {"ignoredResourceGroups": ["example.com"]},
        (UU, (f"Insufficient {K8S_A}",)),
    ),
    ("zero extended request is not checked", pp([cmx(1, 1, {EXT_A: 0})]), cmx(0, 0, {EXT_A: 6}), {}, OK),
    ("zero cpu request is not checked", pp([cmx(0, 0, {EXT_A: 1})]), cmx(20, 30, {EXT_A: 1}), {}, OK),
    (
        "pod-level and container-level fit",
        pp([cm(1, 1)], pod_level={"cpu": "1m", "memory": "2"}),
        cm(5, 5),
        {},
        OK,
    ),
    (
        "pod-level cpu does not fit",
        pp([cm(1, 1)], pod_level={"cpu": "7m", "memory": "2"}),
        cm(5, 5),
        {},
        (U, ("Insufficient cpu",)),
    ),
    (
        "pod-level memory does not fit",
        pp([cm(1, 1)], pod_level={"cpu": "3m", "memory": "2"}),
        cm(5, 19),
        {},
        (U, ("Insufficient memory",)),
    ),
    ("pod-level hugepages fit", pp([], pod_level={"cpu": "3m", "memory": "2", HUGE: "5"}), {}, {}, OK),
    (
        "pod-level and container hugepages fit",
        pp([cmx(1, 1, {HUGE: 3})], pod_level={"cpu": "3m", "memory": "2", HUGE: "5"}),
        {},
        {},
        OK,
    ),
    (
        "pod-level hugepages do not fit",
        pp([], pod_level={"cpu": "3m", "memory": "2", HUGE: "10"}),
        {},
        {},
        (UU, (f"Insufficient {HUGE}",)),
    ),
    (
        "pod-level requests with init containers",
        pp([cm(1, 1)], init=[cm(1, 1)], pod_level={"cpu": "3m", "memory": "2"}),
        cm(5, 19),
        {},
        (U, ("Insufficient memory",)),
    ),
]


@pytest.mark.parametrize(
    ("name", "p", "used", "args", "want"), ENOUGH_CASES, ids=[c[0] for c in ENOUGH_CASES]
)
def test_enough_requests(
    name: str, p: dict[str, Any], used: Req, args: dict[str, Any], want: tuple[Code, tuple[str, ...]]
) -> None:
    existing = [pod("used", [used], on="n1")]
    got = run_filter(cluster([node("n1", ENOUGH_NODE)], existing), p, args)
    assert got == [want]


# fit_test.go TestNotEnoughRequests: the node allows one pod and already runs one
@pytest.mark.parametrize(
    ("p", "used"),
    [
        (pp(), cm(10, 20)),
        (pp([cm(1, 1)]), cm(5, 5)),
        (pp([cm(5, 1)]), cm(5, 19)),
        (pp([cm(5, 1)], init=[cm(5, 1)]), cm(5, 19)),
    ],
)
def test_not_enough_pods(p: dict[str, Any], used: Req) -> None:
    n = node(
        "n1", {"cpu": "10m", "memory": "20", "pods": "1", EXT_A: "0", "ephemeral-storage": "0", HUGE: "0"}
    )
    got = run_filter(cluster([n], [pod("used", [used], on="n1")]), p)
    assert got == [(U, ("Too many pods",))]


def test_too_many_pods_keeps_every_reason() -> None:
    # fitsRequest keeps all failure reasons; one unresolvable resource makes the status unresolvable
    n = node("n1", {"cpu": "10m", "memory": "20", "pods": "1"})
    got = run_filter(cluster([n], [pod("used", [cm(5, 5)], on="n1")]), pod("p", [cm(11, 1)]))
    assert got == [(UU, ("Too many pods", "Insufficient cpu"))]


def test_node_without_pods_allocatable_takes_no_pp() -> None:
    got = run_filter(cluster([node("n1", {"cpu": "1", "memory": "1Gi"})]), pod("p", [cm(1, 1)]))
    assert got == [(U, ("Too many pods",))]


# fit_test.go TestStorageRequests
@pytest.mark.parametrize(
    ("p", "used", "want"),
    [
        (pp([cm(1, 1)]), cm(2, 10), OK),
        (pp([{"ephemeral-storage": "25"}]), cm(2, 2), (UU, ("Insufficient ephemeral-storage",))),
        (pp([{"ephemeral-storage": "5"}]), cmx(2, 2, {"ephemeral-storage": 10}), OK),
        (pp([{"ephemeral-storage": "10"}]), cm(2, 2), OK),
        (
            pp([{"ephemeral-storage": "11"}]),
            cmx(2, 2, {"ephemeral-storage": 10}),
            (U, ("Insufficient ephemeral-storage",)),
        ),
    ],
)
def test_storage_requests(p: dict[str, Any], used: Req, want: tuple[Code, tuple[str, ...]]) -> None:
    got = run_filter(cluster([node("n1", ENOUGH_NODE)], [pod("used", [used], on="n1")]), p)
    assert got == [want]


# fit_test.go TestRestartableInitContainers: node allocatable cpu 2m, memory 0, pods 1
@pytest.mark.parametrize(
    ("p", "want"),
    [
        (pp([None], sidecars=[{}]), OK),
        (pp([{"cpu": "1m"}], sidecars=[{"cpu": "1m"}]), OK),
        (pp([{"cpu": "1m"}], sidecars=[{"cpu": "2m"}]), (UU, ("Insufficient cpu",))),
    ],
)
def test_restartable_init_containers(p: dict[str, Any], want: tuple[Code, tuple[str, ...]]) -> None:
    n = node("n1", {"cpu": "2m", "memory": "0", "pods": "1"})
    assert run_filter(cluster([n]), p) == [want]


def test_filter_without_prefilter_is_an_error() -> None:
    c = cluster([node("n1", ENOUGH_NODE)])
    v = Fit({}, Handle(c)).filter(CycleState(c), Pod(pp()), np.arange(1, dtype=np.int64))
    assert v.at(0) == (Code.Error, (f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',))


def test_filter_batch_mixes_verdicts() -> None:
    nodes = [
        node("small", {"cpu": "1", "memory": "1Gi", "pods": "10"}),
        node("busy", {"cpu": "4", "memory": "8Gi", "pods": "10"}),
        node("big", {"cpu": "8", "memory": "16Gi", "pods": "10"}),
        node("full", {"cpu": "8", "memory": "16Gi", "pods": "1"}),
    ]
    existing = [pod("b", [{"cpu": "3", "memory": "1Gi"}], on="busy"), pod("f", [{}], on="full")]
    c = cluster(nodes, existing)
    plugin = Fit({}, Handle(c))
    state = CycleState(c)
    p = Pod(pod("p", [{"cpu": "2", "memory": "2Gi"}]))
    plugin.pre_filter(state, p)
    # a subset of nodes, out of order
    v = plugin.filter(state, p, np.asarray([3, 0, 2, 1], dtype=np.int64))
    assert [v.at(k) for k in range(4)] == [
        (U, ("Too many pods",)),
        (UU, ("Insufficient cpu", "Insufficient memory")),
        OK,
        (U, ("Insufficient cpu",)),
    ]


# ----- Score ---------------------------------------------------------------------------------------

DEFAULT_RES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXT_RES = [*DEFAULT_RES, {"name": XYZ, "weight": 1}]


def cpu_mem(cpu: str, mem: str, **extra: str) -> Req:
    return {
        "cpu": cpu,
        "memory": mem,
        **{k.replace("__", "/").replace("_", "."): v for k, v in extra.items()},
    }


def fit_args(
    kind: str, resources: list[dict[str, Any]] | None = None, shape: list[tuple[int, int]] | None = None
) -> dict[str, Any]:
    strategy: dict[str, Any] = {
        "type": kind,
        "resources": resources if resources is not None else DEFAULT_RES,
    }
    if shape is not None:
        strategy["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    return {"scoringStrategy": strategy}


def run_score(
    args: dict[str, Any],
    nodes: list[dict[str, Any]],
    existing: list[dict[str, Any]],
    p: dict[str, Any],
    prescore: bool = True,
) -> list[int]:
    c = cluster(nodes, existing)
    plugin = Fit(args, Handle(c))
    state = CycleState(c)
    pd = Pod(p)
    all_nodes = np.arange(c.n, dtype=np.int64)
    if prescore:
        assert plugin.pre_score(state, pd, all_nodes).is_success()
    return [int(x) for x in plugin.score(state, pd, all_nodes)]


def n(name: str, cpu: str, mem: str, **extra: str) -> dict[str, Any]:
    return node(name, cpu_mem(cpu, mem, **extra))


RTCR_DOWN = [(0, 10), (100, 0)]
RTCR_UP = [(0, 0), (100, 10)]
TWO_CTR = [cpu_mem("1000", "2000"), cpu_mem("2000", "3000")]
N4_10 = [n("node1", "4000", "10000"), n("node2", "4000", "10000")]
N4_6 = [n("node1", "4000", "10000"), n("node2", "6000", "10000")]
N10_20 = [n("node1", "10000", "20000"), n("node2", "10000", "20000")]
XYZ_NODES = [n("node1", "6000", "10000"), n("node2", "6000", "10000", abc_com__xyz="4")]

SCORE_CASES: list[
    tuple[str, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], list[int]]
] = [
    # fit_test.go TestFitScore
    (
        "RTCR case1",
        fit_args(ra.REQUESTED_TO_CAPACITY_RATIO, shape=RTCR_DOWN),
        N4_6,
        [pod("e1", [cpu_mem("2000", "4000")], on="node1"), pod("e2", [cpu_mem("1000", "2000")], on="node2")],
        pod("p", [cpu_mem("3000", "5000")]),
        [10, 32],
    ),
    (
        "RTCR case2",
        fit_args(ra.REQUESTED_TO_CAPACITY_RATIO, shape=RTCR_UP),
        N4_6,
        [pod("e1", [cpu_mem("2000", "4000")], on="node1"), pod("e2", [cpu_mem("1000", "2000")], on="node2")],
        pod("p", [cpu_mem("3000", "5000")]),
        [95, 68],
    ),
    (
        "MostAllocated",
        fit_args(ra.MOST_ALLOCATED),
        N4_6,
        [pod("e1", [cpu_mem("2000", "4000")], on="node1"), pod("e2", [cpu_mem("1000", "2000")], on="node2")],
        pod("p", [cpu_mem("1000", "2000")]),
        [67, 36],
    ),
    (
        "LeastAllocated",
        fit_args(ra.LEAST_ALLOCATED),
        N4_6,
        [pod("e1", [cpu_mem("2000", "4000")], on="node1"), pod("e2", [cpu_mem("1000", "2000")], on="node2")],
        pod("p", [cpu_mem("1000", "2000")]),
        [32, 63],
    ),
    (
        "MostAllocated with sidecar container",
        fit_args(ra.MOST_ALLOCATED),
        N4_10,
        [
            pod("e1", [cpu_mem("1000", "2000")], sidecars=[cpu_mem("1000", "2000")], on="node1"),
            pod("e2", [cpu_mem("1000", "2000")], on="node2"),
        ],
        pod("p", [cpu_mem("1000", "2000")]),
        [67, 45],
    ),
    (
        "LeastAllocated with sidecar container",
        fit_args(ra.LEAST_ALLOCATED),
        N4_10,
        [
            pod("e1", [cpu_mem("1000", "2000")], sidecars=[cpu_mem("1000", "2000")], on="node1"),
            pod("e2", [cpu_mem("1000", "2000")], on="node2"),
        ],
        pod("p", [cpu_mem("1000", "2000")]),
        [32, 55],
    ),
    # least_allocated_test.go
    (
        "least: nothing scheduled, nothing requested",
        fit_args(ra.LEAST_ALLOCATED),
        N4_10,
        [],
        pod("p", []),
        [100, 100],
    ),
    ("least: differently sized nodes", fit_args(ra.LEAST_ALLOCATED), N4_6, [], pod("p", TWO_CTR), [37, 50]),
    (
        "least: no resources requested, pods scheduled",
        fit_args(ra.LEAST_ALLOCATED),
        N4_10,
        [
            pod("a", [], on="node1"),
            pod("b", [], on="node1"),
            pod("c", [], on="node2"),
            pod("d", [], on="node2"),
        ],
        pod("p", []),
        [100, 100],
    ),
    (
        "least: no resources requested, pods scheduled with resources",
        fit_args(ra.LEAST_ALLOCATED),
        N10_20,
        [
            pod("a", [cpu_mem("3000", "0")], on="node1"),
            pod("b", [cpu_mem("3000", "0")], on="node1"),
            pod("c", [cpu_mem("3000", "0")], on="node2"),
            pod("d", [cpu_mem("3000", "5000")], on="node2"),
        ],
        pod("p", []),
        [70, 57],
    ),
    (
        "least: resources requested, pods scheduled with resources",
        fit_args(ra.LEAST_ALLOCATED),
        N10_20,
        [pod("a", [cpu_mem("3000", "0")], on="node1"), pod("b", [cpu_mem("3000", "5000")], on="node2")],
        pod("p", TWO_CTR),
        [57, 45],
    ),
    (
        "least: differently sized nodes with pods",
        fit_args(ra.LEAST_ALLOCATED),
        [n("node1", "10000", "20000"), n("node2", "10000", "50000")],
        [pod("a", [cpu_mem("3000", "0")], on="node1"), pod("b", [cpu_mem("3000", "5000")], on="node2")],
        pod("p", TWO_CTR),
        [57, 60],
    ),
    (
        "least: requested resources exceed node capacity",
        fit_args(ra.LEAST_ALLOCATED),
        N4_10,
        [pod("a", [cpu_mem("3000", "0")], on="node1"), pod("b", [cpu_mem("3000", "5000")], on="node2")],
        pod("p", [cpu_mem("3000", "0")]),
        [50, 25],
    ),
    (
        "least: zero node resources",
        fit_args(ra.LEAST_ALLOCATED),
        [node("node1", {}), node("node2", {})],
        [pod("a", [cpu_mem("3000", "0")], on="node1"), pod("b", [cpu_mem("3000", "5000")], on="node2")],
        pod("p", []),
        [0, 0],
    ),
    (
        "least: weights",
        fit_args(ra.LEAST_ALLOCATED, [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}]),
        N4_6,
        [],
        pod("p", TWO_CTR),
        [41, 50],
    ),
    (
        "least: bypass unrequested extended resource",
        fit_args(ra.LEAST_ALLOCATED, EXT_RES),
        XYZ_NODES,
        [],
        pod("p", TWO_CTR),
        [50, 50],
    ),
    (
        "least: honor requested extended resource",
        fit_args(ra.LEAST_ALLOCATED, EXT_RES),
        [n("node1", "6000", "10000", abc_com__xyz="4"), n("node2", "6000", "10000", abc_com__xyz="10")],
        [],
        pod("p", [cpu_mem("3000", "5000", abc_com__xyz="2")]),
        [50, 60],
    ),
    (
        "least: node without the resource",
        fit_args(ra.LEAST_ALLOCATED, [{"name": XYZ, "weight": 2}, *DEFAULT_RES]),
        XYZ_NODES,
        [],
        pod("p", [cpu_mem("3000", "4000")]),
        [55, 55],
    ),
    # most_allocated_test.go
    (
        "most: nothing scheduled, nothing requested",
        fit_args(ra.MOST_ALLOCATED),
        N4_10,
        [],
        pod("p", []),
        [0, 0],
    ),
    ("most: differently sized nodes", fit_args(ra.MOST_ALLOCATED), N4_6, [], pod("p", TWO_CTR), [62, 50]),
    (
        "most: no resources requested, pods scheduled with resources",
        fit_args(ra.MOST_ALLOCATED),
        N10_20,
        [
            pod("a", [cpu_mem("3000", "0")], on="node1"),
            pod("b", [cpu_mem("3000", "0")], on="node1"),
            pod("c", [cpu_mem("3000", "0")], on="node2"),
            pod("d", [cpu_mem("3000", "5000")], on="node2"),
        ],
        pod("p", []),
        [30, 42],
    ),
    (
        "most: resources requested, pods scheduled with resources",
        fit_args(ra.MOST_ALLOCATED),
        N10_20,
        [pod("a", [cpu_mem("3000", "0")], on="node1"), pod("b", [cpu_mem("3000", "5000")], on="node2")],
        pod("p", TWO_CTR),
        [42, 55],
    ),
    (
        "most: requested equal node capacity",
        fit_args(ra.MOST_ALLOCATED),
        [n("node1", "5000", "10000"), n("node2", "10000", "9000")],
        [],
        pod("p", [cpu_mem("2000", "4000"), cpu_mem("3000", "5000")]),
        [95, 75],
    ),
    (
        "most: weights",
        fit_args(ra.MOST_ALLOCATED, [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}]),
        N4_6,
        [],
        pod("p", TWO_CTR),
        [58, 50],
    ),
    (
        "most: non-zero defaults for containers without requests",
        fit_args(ra.MOST_ALLOCATED),
        [n("node1", "250m", "1000Mi"), n("node2", "250m", "1000Mi")],
        [pod("a", [None], on="node1"), pod("b", [None], on="node1")],
        pod("p", [None]),
        [80, 30],
    ),
    (
        "most: bypass unrequested extended resource",
        fit_args(ra.MOST_ALLOCATED, EXT_RES),
        XYZ_NODES,
        [],
        pod("p", TWO_CTR),
        [50, 50],
    ),
    (
        "most: honor requested extended resource",
        fit_args(ra.MOST_ALLOCATED, EXT_RES),
        [n("node1", "6000", "10000", abc_com__xyz="4"), n("node2", "6000", "10000", abc_com__xyz="10")],
        [],
        pod("p", [cpu_mem("3000", "5000", abc_com__xyz="2")]),
        [50, 40],
    ),
    (
        "most: node without the resource",
        fit_args(ra.MOST_ALLOCATED, [{"name": XYZ, "weight": 2}, *DEFAULT_RES]),
        XYZ_NODES,
        [],
        pod("p", [cpu_mem("3000", "4000")]),
        [45, 45],
    ),
    # requested_to_capacity_ratio_test.go
    (
        "rtcr: nothing requested",
        fit_args(ra.REQUESTED_TO_CAPACITY_RATIO, shape=RTCR_DOWN),
        N4_10,
        [pod("a", [], on="node1"), pod("b", [], on="node1")],
        pod("p", []),
        [100, 100],
    ),
    (
        "rtcr: differently sized nodes (rounds 37.5 up)",
        fit_args(ra.REQUESTED_TO_CAPACITY_RATIO, shape=RTCR_DOWN),
        N4_6,
        [pod("a", [], on="node1"), pod("b", [], on="node1")],
        pod("p", TWO_CTR),
        [38, 50],
    ),
    (
        "rtcr: no resources requested, pods scheduled with resources",
        fit_args(ra.REQUESTED_TO_CAPACITY_RATIO, shape=RTCR_DOWN),
        N4_6,
        [pod("a", [cpu_mem("3000", "5000")], on="node1"), pod("b", [cpu_mem("3000", "5000")], on="node2")],
        pod("p", []),
        [38, 50],
    ),
]

FOO, BAR = "intel.com/foo", "intel.com/bar"
BIN = fit_args(ra.REQUESTED_TO_CAPACITY_RATIO, [{"name": FOO, "weight": 1}], [(0, 0), (100, 1)])
BIN_NODES = [
    node("node1", {"cpu": "4", "memory": str(10000 * MI), FOO: "8"}),
    node("node2", {"cpu": "4", "memory": str(10000 * MI), FOO: "4"}),
]
MULTI = fit_args(
    ra.REQUESTED_TO_CAPACITY_RATIO,
    [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}],
    [(0, 0), (100, 1)],
)
MULTI_NODES = [
    node("node1", {"cpu": "4", "memory": str(10000 * MI), FOO: "8", BAR: "4"}),
    node("node2", {"cpu": "4", "memory": str(10000 * MI), FOO: "4", BAR: "8"}),
]
SCORE_CASES += [
    # TestResourceBinPackingSingleExtended / MultipleExtended
    ("bin packing: nothing requested", BIN, BIN_NODES, [], pod("p", []), [0, 0]),
    ("bin packing: one resource", BIN, BIN_NODES, [], pod("p", [{FOO: "2"}]), [2, 5]),
    (
        "bin packing: with a running pod",
        BIN,
        BIN_NODES,
        [pod("a", [{FOO: "2"}], on="node2")],
        pod("p", [{FOO: "2"}]),
        [2, 10],
    ),
    ("bin packing: more requested", BIN, BIN_NODES, [], pod("p", [{FOO: "4"}]), [5, 10]),
    ("bin packing multi: nothing requested", MULTI, MULTI_NODES, [], pod("p", []), [0, 0]),
    ("bin packing multi: requested", MULTI, MULTI_NODES, [], pod("p", [{FOO: "2", BAR: "2"}]), [4, 3]),
    (
        "bin packing multi: with a running pod",
        MULTI,
        MULTI_NODES,
        [pod("a", [{FOO: "4", BAR: "2"}], on="node2")],
        pod("p", [{FOO: "2", BAR: "2"}]),
        [4, 7],
    ),
    ("bin packing multi: more requested", MULTI, MULTI_NODES, [], pod("p", [{FOO: "4", BAR: "2"}]), [5, 5]),
    # Derived from resource_allocation.go: NewFit never sets the scorer's PodLevelResources flag, so
    # Score reads the containers (1 cpu, memory defaulted to 200Mi), not spec.resources (2 cpu):
    # cpu (4000-1000)*100/4000 = 75, memory (1000Mi-200Mi)*100/1000Mi = 80 -> 77.
    (
        "pod-level requests are not used for scoring",
        fit_args(ra.LEAST_ALLOCATED),
        [n("node1", "4", "1000Mi")],
        [],
        pod("p", [{"cpu": "1"}], pod_level={"cpu": "2"}),
        [77],
    ),
    # ephemeral-storage is scored on actual requests even when the pod requests none:
    # (100-40)*100/100 = 60 on node1, 100 on node2
    (
        "ephemeral-storage uses actual requests",
        fit_args(ra.LEAST_ALLOCATED, [{"name": "ephemeral-storage", "weight": 1}]),
        [node("node1", {"ephemeral-storage": "100"}), node("node2", {"ephemeral-storage": "100"})],
        [pod("a", [{"ephemeral-storage": "40"}], on="node1")],
        pod("p", [None]),
        [60, 100],
    ),
    # "pods" is not a resource the scorer tracks: it is left out, leaving only cpu (100 - 25)
    (
        "pods resource is omitted",
        fit_args(ra.LEAST_ALLOCATED, [{"name": "pods", "weight": 5}, {"name": "cpu", "weight": 1}]),
        [node("node1", {"cpu": "4", "pods": "10"})],
        [],
        pod("p", [{"cpu": "1"}]),
        [75],
    ),
]


@pytest.mark.parametrize(
    ("name", "args", "nodes", "existing", "p", "want"), SCORE_CASES, ids=[c[0] for c in SCORE_CASES]
)
def test_score(
    name: str,
    args: dict[str, Any],
    nodes: list[dict[str, Any]],
    existing: list[dict[str, Any]],
    p: dict[str, Any],
    want: list[int],
) -> None:
    assert run_score(args, nodes, existing, p) == want
    # Score computes the requests itself when PreScore did not run (fit_test.go "... if PreScore is not called")
    assert run_score(args, nodes, existing, p, prescore=False) == want


# ----- arguments and helpers -----------------------------------------------------------------------


def test_default_args() -> None:
    c = cluster([n("node1", "4000", "10000")])
    for args in (
        {},
        {"scoringStrategy": None},
        {"scoringStrategy": {"type": "LeastAllocated", "resources": []}},
    ):
        plugin = Fit(args, Handle(c))
        assert plugin.strategy == ra.LEAST_ALLOCATED
        assert plugin.resources == ra.DEFAULT_RESOURCES
    plugin = Fit({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}}, Handle(c))
    assert plugin.resources == (ra.ResourceSpec("cpu", 1),)


@pytest.mark.parametrize(
    "args",
    [
        {"scoringStrategy": {"type": "Balanced"}},
        {"scoringStrategy": {"resources": DEFAULT_RES}},
        {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": DEFAULT_RES}},
        {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": []}}},
    ],
)
def test_bad_args(args: dict[str, Any]) -> None:
    c = cluster([n("node1", "4000", "10000")])
    with pytest.raises(ConfigError):
        Fit(args, Handle(c))


def test_ignored_resources_do_not_affect_score() -> None:
    args = {**fit_args(ra.LEAST_ALLOCATED, EXT_RES), "ignoredResources": [XYZ]}
    nodes = [n("node1", "6000", "10000", abc_com__xyz="4"), n("node2", "6000", "10000", abc_com__xyz="10")]
    assert run_score(args, nodes, [], pod("p", [cpu_mem("3000", "5000", abc_com__xyz="2")])) == [50, 60]


@pytest.mark.parametrize(
    ("shape", "points"),
    [
        # requested_to_capacity_ratio_test.go TestBrokenLinearFunction
        (
            [(10, 1), (90, 9)],
            {-10: 1, 0: 1, 9: 1, 10: 1, 15: 1, 19: 1, 20: 2, 89: 8, 90: 9, 99: 9, 100: 9, 110: 9},
        ),
        ([(0, 2), (40, 10), (100, 0)], {-10: 2, 0: 2, 20: 6, 30: 8, 40: 10, 70: 5, 100: 0, 110: 0}),
        ([(0, 2), (40, 2), (100, 2)], {-10: 2, 0: 2, 20: 2, 30: 2, 40: 2, 70: 2, 100: 2, 110: 2}),
        # Go's division truncates toward zero on a falling segment: 10 + (-10*10)/60 = 10 - 1 = 9
        ([(0, 2), (40, 10), (100, 0)], {50: 9, 41: 10, 99: 1}),
    ],
)
def test_broken_linear_function(shape: list[tuple[int, int]], points: dict[int, int]) -> None:
    ps = np.asarray(list(points), dtype=np.int64)
    assert ra.broken_linear(shape, ps).tolist() == list(points.values())


def test_go_round_is_half_away_from_zero() -> None:
    got = ra.go_round(np.asarray([37.5, 2.5, 0.49999999999999994, 3.875, 3.125, -2.5]))
    assert got.tolist() == [38.0, 3.0, 0.0, 4.0, 3.0, -3.0]


def test_score_requests_include_nonzero_defaults_and_overhead() -> None:
    # resource_allocation_test.go TestResourceAllocationScorerCalculateRequests
    cases: list[tuple[dict[str, Any], int, int]] = [
        (pod("a", [], overhead={"cpu": "1", "memory": "1Mi"}), 1000, MI),
        (pod("b", [None]), 100, DEFAULT_MEMORY_REQUEST),
        (pod("c", [None, None]), 200, 2 * DEFAULT_MEMORY_REQUEST),
        (pod("d", [{"cpu": "1", "memory": "1Mi"}, None]), 1100, MI + DEFAULT_MEMORY_REQUEST),
        (
            pod("e", [{"cpu": "1", "memory": "1Mi"}, None], overhead={"cpu": "1", "memory": "1Mi"}),
            2100,
            2 * MI + DEFAULT_MEMORY_REQUEST,
        ),
        (
            pod(
                "f",
                [{"cpu": "1", "memory": "1Mi"}, None],
                init=[{"cpu": "3"}],
                overhead={"cpu": "1", "memory": "1Mi"},
            ),
            4000,
            2 * MI + DEFAULT_MEMORY_REQUEST,
        ),
        (
            pod("g", [{"cpu": "3m", "memory": "3"}], init=[{}, {"cpu": "1m", "memory": "1"}]),
            100,
            DEFAULT_MEMORY_REQUEST,
        ),
        (
            pod("h", [{"cpu": "3m", "memory": "3"}, None], init=[{}, {"cpu": "1m", "memory": "1"}]),
            103,
            3 + DEFAULT_MEMORY_REQUEST,
        ),
    ]
    for raw, cpu, mem in cases:
        parsed = Pod(raw).resources.parsed
        assert parsed is not None
        got = ra.scorer_requests(parsed, use_requested=False, use_status=False, pod_level=False)
        assert (got.get("cpu", 0), got.get("memory", 0)) == (cpu, mem), raw["metadata"]["name"]
