"""Pod requests as kube-scheduler v1.35 computes them (component-helpers resource.PodRequests,
framework/types.go CalculateResource, API defaulting), and what ClusterState sums per node."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.engine.errors import InputError
from schedviz.engine.objects import Pod
from schedviz.engine.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    is_extended_resource_name,
    is_scalar_resource_name,
)
from tests.engine import builders as b

MI = 1024 * 1024
GI = 1024 * MI


def c(
    name: str = "c", req: dict[str, str] | None = None, lim: dict[str, str] | None = None, **kw: Any
) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if req is not None:
        res["requests"] = req
    if lim is not None:
        res["limits"] = lim
    return {"name": name, "image": "img", "resources": res, **kw}


def sidecar(name: str, req: dict[str, str]) -> dict[str, Any]:
    return c(name, req, restartPolicy="Always")


def make(containers: list[dict[str, Any]], status: dict[str, Any] | None = None, **spec: Any) -> Pod:
    raw = b.pod("p", **spec)
    raw["spec"]["containers"] = containers
    if status is not None:
        raw["status"] = status
    return Pod(raw)


# (name, pod, expected requests, expected non-zero cpu, expected non-zero memory)
CASES: list[tuple[str, Pod, dict[str, int], int, int]] = [
    (
        "containers are summed",
        make([c("a", {"cpu": "1", "memory": "1Gi"}), c("b", {"cpu": "500m", "memory": "512Mi"})]),
        {"cpu": 1500, "memory": GI + 512 * MI},
        1500,
        GI + 512 * MI,
    ),
    (
        "an init container counts as the maximum, not the sum",
        make([c("a", {"cpu": "1", "memory": "1Gi"})], initContainers=[c("i", {"cpu": "3", "memory": "1Mi"})]),
        {"cpu": 3000, "memory": GI},
        3000,
        GI,
    ),
    (
        "the highest init container wins",
        make(
            [c("a", {"cpu": "1m", "memory": "1"})],
            initContainers=[c("i1", {"cpu": "3m", "memory": "1"}), c("i2", {"cpu": "2m", "memory": "1"})],
        ),
        {"cpu": 3, "memory": 1},
        3,
        1,
    ),
    (
        # containers 1 + sidecar 2 run together (3); the regular init container runs with the
        # sidecar started before it: 4 + 2 = 6 > 3
        "a sidecar adds to the containers and to later init containers",
        make([c("a", {"cpu": "1"})], initContainers=[sidecar("s", {"cpu": "2"}), c("i", {"cpu": "4"})]),
        {"cpu": 6000},
        6000,
        # memory: the container and the sidecar get 200Mi each (4 + regular init 200Mi < 400Mi)
        2 * DEFAULT_MEMORY_REQUEST,
    ),
    (
        "a sidecar started after an init container does not add to it",
        make([c("a", {"cpu": "1"})], initContainers=[c("i", {"cpu": "2"}), sidecar("s", {"cpu": "2"})]),
        {"cpu": 3000},
        3000,
        2 * DEFAULT_MEMORY_REQUEST,
    ),
    (
        "pod overhead is added",
        make([c("a", {"cpu": "1m", "memory": "1"})], overhead={"cpu": "3m", "memory": "13"}),
        {"cpu": 4, "memory": 14},
        4,
        14,
    ),
    (
        "a limit without a request becomes the request (API defaulting)",
        make([c("a", lim={"cpu": "2", "memory": "1Gi"})]),
        {"cpu": 2000, "memory": GI},
        2000,
        GI,
    ),
    (
        "a request is kept when a limit is also set",
        make([c("a", req={"cpu": "500m"}, lim={"cpu": "2", "memory": "1Gi"})]),
        {"cpu": 500, "memory": GI},
        500,
        GI,
    ),
    (
        "init container limits default its requests too",
        make([c("a", {"cpu": "1"})], initContainers=[c("i", lim={"cpu": "5"})]),
        {"cpu": 5000},
        5000,
        DEFAULT_MEMORY_REQUEST,
    ),
    (
        # quantities are summed exactly and converted once: 3 x 0.5 bytes = 1.5 -> 2 bytes
        "quantities are summed before rounding up",
        make([c("a", {"memory": "500m"}), c("b", {"memory": "500m"}), c("c", {"memory": "500m"})]),
        {"memory": 2},
        3 * DEFAULT_MILLI_CPU_REQUEST,
        2,
    ),
    (
        # SetDefaults_ResourceList rounds each quantity up to milli precision first: 100.5m -> 101m
        "each quantity is rounded up to milli precision",
        make([c("a", {"cpu": "0.1005"}), c("b", {"cpu": "0.1005"})]),
        {"cpu": 202},
        202,
        2 * DEFAULT_MEMORY_REQUEST,
    ),
    (
        "a container without requests counts 100m / 200Mi for scoring only",
        make([c("a")]),
        {},
        DEFAULT_MILLI_CPU_REQUEST,
        DEFAULT_MEMORY_REQUEST,
    ),
    (
        "an explicit zero request is not replaced by the default",
        make([c("a", {"cpu": "0"})]),
        {"cpu": 0},
        0,
        DEFAULT_MEMORY_REQUEST,
    ),
    (
        "defaults are per container",
        make([c("a", {"cpu": "1", "memory": "1Mi"}), c("b")]),
        {"cpu": 1000, "memory": MI},
        1000 + DEFAULT_MILLI_CPU_REQUEST,
        MI + DEFAULT_MEMORY_REQUEST,
    ),
    (
        "a pod without containers gets no defaults; overhead only",
        make([], overhead={"cpu": "1", "memory": "1Mi"}),
        {"cpu": 1000, "memory": MI},
        1000,
        MI,
    ),
    (
        # resource_allocation_test.go: requestless init container + small init + small container
        "init containers get the defaults too",
        make(
            [c("a", {"cpu": "3m", "memory": "3"})],
            initContainers=[c("i0"), c("i1", {"cpu": "1m", "memory": "1"})],
        ),
        {"cpu": 3, "memory": 3},
        DEFAULT_MILLI_CPU_REQUEST,
        DEFAULT_MEMORY_REQUEST,
    ),
    (
        "init container + container + requestless container + overhead",
        make(
            [c("a", {"cpu": "1", "memory": "1Mi"}), c("b")],
            initContainers=[c("i", {"cpu": "3"})],
            overhead={"cpu": "1", "memory": "1Mi"},
        ),
        {"cpu": 4000, "memory": 2 * MI},
        4000,
        2 * MI + DEFAULT_MEMORY_REQUEST,
    ),
    (
        "extended, hugepages and kubernetes.io resources are kept; pods and unknown names are not",
        make(
            [
                c(
                    "a",
                    {
                        "cpu": "1",
                        "nvidia.com/gpu": "2",
                        "hugepages-2Mi": "4Mi",
                        "kubernetes.io/something": "1",
                        "ephemeral-storage": "1Gi",
                        "pods": "1",
                        "storage": "1Gi",
                    },
                )
            ]
        ),
        {
            "cpu": 1000,
            "nvidia.com/gpu": 2,
            "hugepages-2Mi": 4 * MI,
            "kubernetes.io/something": 1,
            "ephemeral-storage": GI,
        },
        1000,
        DEFAULT_MEMORY_REQUEST,
    ),
    (
        "pod-level requests replace the containers' for cpu and memory",
        make([c("a", {"cpu": "1", "memory": "1Gi"})], resources={"requests": {"cpu": "2"}}),
        {"cpu": 2000, "memory": GI},
        2000,
        GI,
    ),
    (
        # getNonMissingContainerRequests: only memory, missing at both levels, gets the default
        "pod-level requests: the default applies only to what neither level names",
        make([c("a"), c("b")], resources={"requests": {"cpu": "2"}}),
        {"cpu": 2000},
        2000,
        2 * DEFAULT_MEMORY_REQUEST,
    ),
    (
        # defaultPodRequests: pod-level requests default to the containers' aggregate...
        "pod-level limits: requests default from the containers",
        make([c("a", {"cpu": "1"})], resources={"limits": {"cpu": "4", "memory": "2Gi"}}),
        {"cpu": 1000, "memory": 2 * GI},
        1000,
        2 * GI,
    ),
    (
        # ...and to the pod-level limits when no container names the resource
        "pod-level limits: requests default from the limits",
        make([c("a")], resources={"limits": {"cpu": "4"}}),
        {"cpu": 4000},
        4000,
        DEFAULT_MEMORY_REQUEST,
    ),
    (
        "pod-level overhead is still added",
        make(
            [c("a", {"cpu": "1"})],
            resources={"requests": {"cpu": "2", "memory": "1Gi"}},
            overhead={"cpu": "100m"},
        ),
        {"cpu": 2100, "memory": GI},
        2100,
        GI,
    ),
    (
        "pod-level hugepages requests are honoured",
        make(
            [c("a", {"cpu": "1", "hugepages-2Mi": "2Mi"})], resources={"requests": {"hugepages-2Mi": "6Mi"}}
        ),
        {"cpu": 1000, "hugepages-2Mi": 6 * MI},
        1000,
        DEFAULT_MEMORY_REQUEST,
    ),
    (
        # InPlacePodVerticalScaling: max(spec, actuated, allocated) for a running container
        "status resources of a resized container count (the larger wins)",
        make(
            [c("a", {"cpu": "1", "memory": "1Gi"})],
            status={
                "phase": "Running",
                "containerStatuses": [
                    {
                        "name": "a",
                        "resources": {"requests": {"cpu": "2", "memory": "512Mi"}},
                        "allocatedResources": {"cpu": "1500m"},
                    }
                ],
            },
        ),
        {"cpu": 2000, "memory": GI},
        2000,
        GI,
    ),
    (
        "an infeasible resize counts only what is actuated and allocated",
        make(
            [c("a", {"cpu": "3"})],
            status={
                "conditions": [{"type": "PodResizePending", "reason": "Infeasible"}],
                "containerStatuses": [
                    {"name": "a", "resources": {"requests": {"cpu": "1"}}, "allocatedResources": {"cpu": "1"}}
                ],
            },
        ),
        {"cpu": 1000},
        1000,
        DEFAULT_MEMORY_REQUEST,
    ),
    (
        "status of a regular init container is ignored",
        make(
            [c("a", {"cpu": "1"})],
            initContainers=[c("i", {"cpu": "2"})],
            status={"initContainerStatuses": [{"name": "i", "resources": {"requests": {"cpu": "8"}}}]},
        ),
        {"cpu": 2000},
        2000,
        DEFAULT_MEMORY_REQUEST,
    ),
]


@pytest.mark.parametrize(("name", "pod", "requests", "nz_cpu", "nz_mem"), CASES, ids=[x[0] for x in CASES])
def test_pod_resources(name: str, pod: Pod, requests: dict[str, int], nz_cpu: int, nz_mem: int) -> None:
    r = pod.resources
    assert r.requests == requests
    assert (r.nonzero_cpu, r.nonzero_memory) == (nz_cpu, nz_mem)


def test_fit_requests_ignore_status_resources() -> None:
    # computePodResourceRequest (Filter) reads the spec only; NodeInfo accounting reads the status
    pod = make(
        [c("a", {"cpu": "1"})],
        status={"containerStatuses": [{"name": "a", "resources": {"requests": {"cpu": "2"}}}]},
    )
    assert pod.resources.requests == {"cpu": 2000}
    assert pod.resources.fit_requests == {"cpu": 1000}


def test_fit_requests_equal_requests_without_status() -> None:
    pod = make([c("a", {"cpu": "1", "memory": "1Gi"})], overhead={"cpu": "10m"})
    assert pod.resources.fit_requests == pod.resources.requests == {"cpu": 1010, "memory": GI}


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"containers": [c("a", {"cpu": "lots"})]}, "spec.containers[0].resources.requests.cpu"),
        ({"containers": [c("a", {"cpu": "-1"})]}, "spec.containers[0].resources.requests.cpu"),
        (
            {"containers": [{"name": "a", "resources": {"limits": {"memory": True}}}]},
            "spec.containers[0].resources.limits.memory",
        ),
        (
            {"containers": [c("a")], "initContainers": [c("i", {"cpu": "1x"})]},
            "spec.initContainers[0].resources.requests.cpu",
        ),
        ({"containers": [c("a")], "overhead": {"cpu": "??"}}, "spec.overhead.cpu"),
        (
            {"containers": [c("a")], "resources": {"requests": {"memory": "x"}}},
            "spec.resources.requests.memory",
        ),
        (
            {"containers": [{"name": "a", "resources": {"requests": ["cpu"]}}]},
            "spec.containers[0].resources.requests",
        ),
    ],
)
def test_bad_quantities_name_the_field(spec: dict[str, Any], field: str) -> None:
    raw = b.pod("bad")
    raw["spec"] = spec
    with pytest.raises(InputError) as exc:
        Pod(raw)
    assert exc.value.field == field
    assert exc.value.obj == "Pod default/bad"


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("cpu", False, False),
        ("memory", False, False),
        ("pods", False, False),
        ("storage", False, False),
        ("ephemeral-storage", False, False),
        ("example.com/aaa", True, True),
        ("nvidia.com/gpu", True, True),
        ("kubernetes.io/something", False, True),
        ("subdomain.kubernetes.io/something", False, True),
        ("hugepages-2Mi", False, True),
        ("attachable-volumes-aws-ebs", False, True),
        ("Example.com/foo", False, False),  # "requests.Example.com" is not a DNS subdomain
        ("requests.example.com/foo", False, False),
        ("example.com/", False, False),
    ],
)
def test_resource_names(name: str, extended: bool, scalar: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar


def test_cluster_sums_what_nodeinfo_counts() -> None:
    pods = [
        b.pod("a", node_name="n1", containers=[c("a", {"cpu": "1", "memory": "1Gi", "example.com/x": "2"})]),
        b.pod("b", node_name="n1", containers=[c("b")]),  # best effort: 0 requested, defaults for non-zero
        b.pod("c", node_name="n2", containers=[c("c", lim={"cpu": "2"})]),
        b.pod(
            "d", node_name="n1", containers=[c("d", {"cpu": "5"})], phase="Succeeded"
        ),  # finished: not counted
    ]
    cl = b.cluster([b.node("n1"), b.node("n2")], pods)
    assert cl.requested("cpu").tolist() == [1000, 2000]
    assert cl.requested("memory").tolist() == [GI, 0]
    assert cl.requested("example.com/x").tolist() == [2, 0]
    assert cl.nonzero_cpu.tolist() == [1000 + DEFAULT_MILLI_CPU_REQUEST, 2000]
    assert cl.nonzero_memory.tolist() == [GI + DEFAULT_MEMORY_REQUEST, DEFAULT_MEMORY_REQUEST]
    assert cl.pod_count.tolist() == [2, 1]
    # removing a pod takes exactly its share back
    cl.remove_pod(cl.pods_on[0][0])
    assert cl.requested("cpu").tolist() == [0, 2000]
    assert cl.nonzero_cpu.tolist() == [DEFAULT_MILLI_CPU_REQUEST, 2000]
    assert cl.pod_count.tolist() == [1, 1]
