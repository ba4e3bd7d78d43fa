"""DynamicResources (framework/plugins/dynamicresources/dynamicresources.go, structured allocator)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from schedviz.engine.errors import InputError
from schedviz.engine.framework import Code, CycleState, Handle, NodeToStatus, Status
from schedviz.engine.objects import KubeObject, Pod
from schedviz.engine.plugins.dynamicresources import DynamicResources, get_claim, tracker
from tests.engine.builders import all_nodes, cluster, node, pod
from tests.engine.plugins._storage_builders import (
    device,
    device_class,
    exact,
    pod_claims,
    resource_claim,
    resource_slice,
)

GPU = device_class("gpu", 'device.driver == "gpu.example.com"')
NODES = [node("n0"), node("n1"), node("n2")]
OK = (Code.Success, ())
CANNOT = (Code.UnschedulableAndUnresolvable, ("cannot allocate all claims",))


def setup(objects: list[dict[str, Any]], *claims: str, name: str = "p", **handle: bool) -> tuple[Any, ...]:
    c = cluster(NODES, [], objects)
    pl = DynamicResources({}, Handle(c, dict(handle) or None))
    p = Pod(pod(name, **pod_claims(*claims))) if claims else Pod(pod(name))
    return c, pl, CycleState(c), p


def verdicts(objects: list[dict[str, Any]], *claims: str) -> list[tuple[Code, tuple[str, ...]]]:
    c, pl, st, p = setup(objects, *claims)
    _, s = pl.pre_filter(st, p)
    assert s.is_success(), s
    v = pl.filter(st, p, all_nodes(c))
    return [v.at(k) for k in range(c.n)]


def test_pod_without_claims() -> None:
    c, pl, st, p = setup([GPU])
    assert pl.pre_enqueue(p).is_success()
    _, s = pl.pre_filter(st, p)
    assert s.is_skip()
    # Score is not skipped (no PreScore): zero everywhere, normalized stays zero.
    raw = pl.score(st, p, all_nodes(c))
    assert list(raw) == [0, 0, 0]
    assert list(pl.normalize_score(st, p, all_nodes(c), raw)) == [0, 0, 0]
    none = NodeToStatus({}, Status(Code.UnschedulableAndUnresolvable))
    assert pl.post_filter(st, p, none) == (None, Status(Code.Unschedulable, "no new claims to deallocate"))
    assert pl.reserve(st, p, "n0").is_success()
    assert pl.pre_bind_pre_flight(st, p, "n0").is_skip()
    assert pl.pre_bind(st, p, "n0").is_success()
    pl.unreserve(st, p, "n0")
    # When an earlier PreFilter rejected the pod, this PreFilter never ran: PostFilter errors.
    assert pl.post_filter(CycleState(c), p, none) == (None, Status(Code.Error, "not found"))


@pytest.mark.parametrize(
    ("objects", "pod_spec", "want"),
    [
        ([], pod_claims("missing"), 'could not find ResourceClaim "default/missing"'),
        (
            [],
            {"resourceClaims": [{"name": "r", "resourceClaimTemplateName": "t"}]},
            'pod "default/p": ResourceClaim not created yet',
        ),
        (
            [],
            {"resourceClaims": [{"name": "r"}]},
            'pod "default/p", spec.resourceClaim "r": none of the supported fields are set',
        ),
        (
            [
                {
                    **resource_claim("c", exact()),
                    "metadata": {
                        "name": "c",
                        "namespace": "default",
                        "deletionTimestamp": "2026-01-01T00:00:00Z",
                    },
                }
            ],
            pod_claims("c"),
            'resourceclaim "c" is being deleted',
        ),
    ],
)
def test_claims_that_cannot_be_used(
    objects: list[dict[str, Any]], pod_spec: dict[str, Any], want: str
) -> None:
    c = cluster(NODES, [], objects)
    pl = DynamicResources({}, Handle(c))
    p = Pod(pod("p", **pod_spec))
    assert pl.pre_enqueue(p) == Status(Code.UnschedulableAndUnresolvable, want)
    st = CycleState(c)
    assert pl.pre_filter(st, p)[1] == Status(Code.UnschedulableAndUnresolvable, want)
    # The state was written before the claims were looked up.
    assert pl.post_filter(st, p, NodeToStatus({}, Status())) == (
        None,
        Status(Code.Unschedulable, "no new claims to deallocate"),
    )


def test_template_claim_from_pod_status() -> None:
    generated = resource_claim("p-r-abc", exact())
    generated["metadata"]["ownerReferences"] = [
        {"uid": "uid-default-p", "controller": True, "kind": "Pod", "name": "p"}
    ]
    stranger = resource_claim("other-claim", exact())
    objects = [GPU, resource_slice("n1", [device("gpu-0")]), generated, stranger]
    c = cluster(NODES, [], objects)
    pl = DynamicResources({}, Handle(c))
    raw = pod("p", resourceClaims=[{"name": "r", "resourceClaimTemplateName": "t"}])
    raw["status"] = {"resourceClaimStatuses": [{"name": "r", "resourceClaimName": "p-r-abc"}]}
    assert pl.pre_filter(CycleState(c), Pod(raw))[1].is_success()
    raw["status"] = {"resourceClaimStatuses": [{"name": "r", "resourceClaimName": "other-claim"}]}
    assert pl.pre_filter(CycleState(c), Pod(raw))[1] == Status(
        Code.UnschedulableAndUnresolvable,
        "ResourceClaim default/other-claim was not created for pod default/p (pod is not owner)",
    )
    # No claim generated (resourceClaimName unset): nothing to allocate for that entry.
    raw["status"] = {"resourceClaimStatuses": [{"name": "r"}]}
    assert pl.pre_filter(CycleState(c), Pod(raw))[1].is_skip()


@pytest.mark.parametrize(
    ("claim", "want"),
    [
        (
            resource_claim("c", exact(cls="nope")),
            Status(Code.UnschedulableAndUnresolvable, "request gpu: device class nope does not exist"),
        ),
        (
            resource_claim(
                "c", {"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": "nope"}]}
            ),
            Status(Code.UnschedulableAndUnresolvable, "request gpu/big: device class nope does not exist"),
        ),
        (
            resource_claim("c", {"name": "gpu"}),
            Status(
                Code.UnschedulableAndUnresolvable,
                "resource claim default/c, request gpu: unknown request type",
            ),
        ),
    ],
)
def test_pre_filter_validates_requests(claim: dict[str, Any], want: Status) -> None:
    _c, pl, st, p = setup([GPU, claim], "c")
    assert pl.pre_filter(st, p)[1] == want


SLICES = [
    resource_slice("n0", [device("gpu-0", model="a100"), device("gpu-1", model="h100")]),
    resource_slice("n1", [device("gpu-0", model="h100")]),
]


@pytest.mark.parametrize(
    ("claim", "want"),
    [
        (resource_claim("c", exact()), [OK, OK, CANNOT]),
        (resource_claim("c", exact(count=2)), [OK, CANNOT, CANNOT]),
        (resource_claim("c", exact(count=3)), [CANNOT, CANNOT, CANNOT]),
        (
            resource_claim(
                "c", exact("gpu", 1, "gpu", 'device.attributes["gpu.example.com"].model == "a100"')
            ),
            [OK, CANNOT, CANNOT],
        ),
        # All devices of the class on the node (at least one).
        (
            resource_claim(
                "c", {"name": "gpu", "exactly": {"allocationMode": "All", "deviceClassName": "gpu"}}
            ),
            [OK, OK, CANNOT],
        ),
        # Two requests in one claim take distinct devices.
        (resource_claim("c", exact("a"), exact("b")), [OK, CANNOT, CANNOT]),
    ],
)
def test_allocation(claim: dict[str, Any], want: list[tuple[Code, tuple[str, ...]]]) -> None:
    assert verdicts([GPU, *SLICES, claim], "c") == want


def test_class_selector_must_match_too() -> None:
    other = resource_slice("n2", [device("x-0")], driver="other.example.com")
    assert verdicts([GPU, *SLICES, other, resource_claim("c", exact())], "c") == [OK, OK, CANNOT]


def test_cel_runtime_error_is_an_error() -> None:
    claim = resource_claim("c", exact("gpu", 1, "gpu", 'device.attributes["gpu.example.com"].memoryGiB > 10'))
    got = verdicts([GPU, *SLICES, claim], "c")
    msg = "claim default/c: selector #0: CEL runtime error: no such key: memoryGiB"
    assert got == [(Code.Error, (msg,)), (Code.Error, (msg,)), CANNOT]


def test_unsupported_cel_names_the_object() -> None:
    # Two-variable comprehensions are in Kubernetes' CEL environment but not evaluated here.
    claim = resource_claim("c", exact("gpu", 1, "gpu", "device.attributes.exists(d, ids, true)"))
    c, pl, st, p = setup([GPU, *SLICES, claim], "c")
    pl.pre_filter(st, p)
    with pytest.raises(InputError, match="ResourceClaim default/c"):
        pl.filter(st, p, all_nodes(c))


def test_match_attribute_constraint() -> None:
    slices = [
        resource_slice("n0", [device("g0", model="a100"), device("g1", model="h100")]),
        resource_slice("n1", [device("g0", model="h100"), device("g1", model="h100")]),
    ]
    claim = resource_claim(
        "c", exact("a"), exact("b"), constraints=[{"matchAttribute": "gpu.example.com/model", "requests": []}]
    )
    assert verdicts([GPU, *slices, claim], "c") == [CANNOT, OK, CANNOT]


def test_pools_must_be_complete_and_valid() -> None:
    incomplete = resource_slice("n0", [device("g0")], count=2)
    duplicate = resource_slice("n1", [device("g0"), device("g0")])
    old = resource_slice(None, [device("g9")], pool="n2", name="old", generation=1, nodeName="n2")
    new = resource_slice(None, [], pool="n2", name="new", generation=2, nodeName="n2")
    got = verdicts([GPU, incomplete, duplicate, old, new, resource_claim("c", exact())], "c")
    assert got == [
        CANNOT,
        (Code.UnschedulableAndUnresolvable, ("invalid resource pools were encountered",)),
        CANNOT,
    ]


def test_network_attached_slice_with_node_selector() -> None:
    shared = resource_slice(
        None,
        [device("net-0")],
        pool="rack",
        nodeSelector={
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1", "n2"]}
                    ]
                }
            ]
        },
    )
    c, pl, st, p = setup([GPU, shared, resource_claim("c", exact())], "c")
    pl.pre_filter(st, p)
    v = pl.filter(st, p, all_nodes(c))
    assert [v.at(k) for k in range(3)] == [CANNOT, OK, OK]
    assert pl.reserve(st, p, "n1").is_success()
    alloc = tracker(c).in_flight["uid-claim-c"]["status"]["allocation"]
    assert alloc["devices"]["results"] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "rack", "device": "net-0"}
    ]
    assert alloc["nodeSelector"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["n1", "n2"]


def test_reserve_puts_devices_in_flight_and_pre_bind_writes_the_claim() -> None:
    objects = [
        GPU,
        *SLICES,
        resource_claim("c1", exact()),
        resource_claim("c2", exact()),
        resource_claim("shared", exact()),
    ]
    c, pl, st, p = setup(objects, "c1", "shared")
    pl.pre_filter(st, p)
    v = pl.filter(st, p, all_nodes(c))
    # Two claims need two devices: only n0 has them.
    assert [v.at(k) for k in range(3)] == [OK, CANNOT, CANNOT]
    assert pl.reserve(st, p, "n0").is_success()
    t = tracker(c)
    assert set(t.in_flight) == {"uid-claim-c1", "uid-claim-shared"}
    results = [
        t.in_flight[u]["status"]["allocation"]["devices"]["results"][0]["device"]
        for u in ("uid-claim-c1", "uid-claim-shared")
    ]
    assert results == ["gpu-0", "gpu-1"]

    # n0's devices are in flight: another pod's claim only fits n1.
    assert verdicts_on(c, pl, "c2") == [CANNOT, OK, CANNOT]
    # A pod sharing a claim that is being allocated waits.
    p3 = Pod(pod("r", **pod_claims("shared")))
    assert pl.pre_filter(CycleState(c), p3)[1] == Status(
        Code.UnschedulableAndUnresolvable,
        "resource claim default/shared is in the process of being allocated",
    )

    assert pl.pre_bind_pre_flight(st, p, "n0").is_success()
    assert pl.pre_bind(st, p, "n0").is_success()
    assert t.in_flight == {}
    bound = get_claim(c, "default", "shared")
    assert bound is not None
    assert bound["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "uid-default-p"}]
    assert bound["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    node_sel = bound["status"]["allocation"]["nodeSelector"]
    assert node_sel == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]
    }
    # Still taken after PreBind (now through the claim's status).
    assert verdicts_on(c, pl, "c2") == [CANNOT, OK, CANNOT]
    # A pod sharing the allocated claim fits n0 only, and is not waiting any more.
    st3 = CycleState(c)
    assert pl.pre_filter(st3, p3)[1].is_success()
    v = pl.filter(st3, p3, all_nodes(c))
    unavailable = (Code.UnschedulableAndUnresolvable, ("resourceclaim not available on the node",))
    assert [v.at(k) for k in range(3)] == [OK, unavailable, unavailable]
    # Its own PreBind only adds it to reservedFor.
    assert pl.reserve(st3, p3, "n0").is_success()
    assert pl.pre_bind(st3, p3, "n0").is_success()
    shared = get_claim(c, "default", "shared")
    assert shared is not None
    assert [r["name"] for r in shared["status"]["reservedFor"]] == ["p", "r"]


def test_two_claims_on_one_node_need_two_devices() -> None:
    objects = [GPU, *SLICES, resource_claim("c1", exact()), resource_claim("c2", exact())]
    assert verdicts(objects, "c1", "c2") == [OK, CANNOT, CANNOT]


def test_unreserve_returns_the_devices() -> None:
    objects = [GPU, *SLICES, resource_claim("c1", exact()), resource_claim("c2", exact())]
    c, pl, st, p = setup(objects, "c1")
    pl.pre_filter(st, p)
    pl.filter(st, p, all_nodes(c))
    pl.reserve(st, p, "n1")
    pl.unreserve(st, p, "n1")
    assert tracker(c).in_flight == {}
    assert verdicts_on(c, pl, "c2") == [OK, OK, CANNOT]


def verdicts_on(c: Any, pl: DynamicResources, claim: str) -> list[tuple[Code, tuple[str, ...]]]:
    st, p = CycleState(c), Pod(pod("z", **pod_claims(claim)))
    pl.pre_filter(st, p)
    v = pl.filter(st, p, all_nodes(c))
    return [v.at(k) for k in range(c.n)]


def test_allocated_claim_devices_are_taken() -> None:
    allocated = resource_claim(
        "done",
        exact(),
        status={
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}
                    ]
                }
            }
        },
    )
    admin = resource_claim(
        "admin",
        exact(),
        status={
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "gpu",
                            "driver": "gpu.example.com",
                            "pool": "n0",
                            "device": "gpu-0",
                            "adminAccess": True,
                        }
                    ]
                }
            }
        },
    )
    objects = [GPU, *SLICES, allocated, admin, resource_claim("c", exact(count=2))]
    assert verdicts(objects, "c") == [OK, CANNOT, CANNOT]
    assert verdicts([*objects[:-1], resource_claim("c", exact())], "c") == [OK, CANNOT, CANNOT]


def test_post_filter_deallocates_a_claim_unavailable_on_the_nodes() -> None:
    pinned = resource_claim(
        "pinned",
        exact(),
        status={
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": "gpu.example.com", "pool": "n9", "device": "gpu-0"}
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}]}
                    ]
                },
            }
        },
    )
    c, pl, st, p = setup([GPU, pinned], "pinned")
    assert pl.pre_filter(st, p)[1].is_success()
    v = pl.filter(st, p, all_nodes(c))
    unavailable = (Code.UnschedulableAndUnresolvable, ("resourceclaim not available on the node",))
    assert [v.at(k) for k in range(3)] == [unavailable] * 3
    _, s = pl.post_filter(st, p, NodeToStatus({}, Status()))
    assert s == Status(Code.Unschedulable, "deallocation of ResourceClaim completed")
    assert "allocation" not in get_claim(c, "default", "pinned")["status"]  # type: ignore[index]


def test_post_filter_with_nothing_to_deallocate() -> None:
    c, pl, st, p = setup([GPU, *SLICES, resource_claim("c", exact(count=5))], "c")
    pl.pre_filter(st, p)
    pl.filter(st, p, all_nodes(c))
    assert pl.post_filter(st, p, NodeToStatus({}, Status()))[1] == Status(
        Code.Unschedulable, "still not schedulable"
    )


def test_first_available_scores_by_position() -> None:
    slices = [
        resource_slice("n0", [device("g0", model="a100")]),
        resource_slice("n1", [device("g0", model="h100")]),
        resource_slice("n2", [device("g0", model="t4")]),
    ]
    claim = resource_claim(
        "c",
        {
            "name": "gpu",
            "firstAvailable": [
                {
                    "name": "best",
                    "deviceClassName": "gpu",
                    "selectors": [
                        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100"'}}
                    ],
                },
                {
                    "name": "good",
                    "deviceClassName": "gpu",
                    "selectors": [
                        {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}
                    ],
                },
            ],
        },
    )
    c, pl, st, p = setup([GPU, *slices, claim], "c")
    pl.pre_filter(st, p)
    v = pl.filter(st, p, all_nodes(c))
    assert [v.at(k) for k in range(3)] == [OK, OK, CANNOT]
    feasible = np.asarray([0, 1], dtype=np.int64)
    raw = pl.score(st, p, feasible)
    assert list(raw) == [8, 7]
    # DefaultNormalizeScore: 100 * score / max, integer division.
    assert list(pl.normalize_score(st, p, feasible, raw)) == [100, 87]
    pl.reserve(st, p, "n1")
    results = tracker(c).in_flight["uid-claim-c"]["status"]["allocation"]["devices"]["results"]
    assert results == [{"request": "gpu/good", "driver": "gpu.example.com", "pool": "n1", "device": "g0"}]


def test_prioritized_list_gate_off() -> None:
    claim = resource_claim("c", {"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "gpu"}]})
    _c, pl, st, p = setup([GPU, *SLICES, claim], "c", DRAPrioritizedList=False)
    assert pl.pre_filter(st, p)[1] == Status(
        Code.UnschedulableAndUnresolvable,
        "resource claim default/c, request gpu: has subrequests, but the DRAPrioritizedList feature is disabled",
    )


def test_disabled_plugin() -> None:
    _c, pl, st, p = setup([GPU, *SLICES, resource_claim("c", exact())], "c", DynamicResourceAllocation=False)
    assert pl.pre_filter(st, p)[1].is_skip()
    assert pl.post_filter(st, p, NodeToStatus({}, Status()))[1] == Status(
        Code.Unschedulable, "plugin disabled"
    )


def test_v1beta1_objects() -> None:
    slice_beta = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": "n2-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "n2",
            "pool": {"name": "n2", "generation": 0, "resourceSliceCount": 1},
            "devices": [{"name": "g0", "basic": {"attributes": {"model": {"string": "a100"}}}}],
        },
    }
    claim_beta = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "deviceClassName": "gpu",
                        "selectors": [
                            {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100"'}}
                        ],
                    }
                ]
            }
        },
    }
    assert verdicts([GPU, slice_beta, claim_beta], "c") == [CANNOT, CANNOT, OK]


def test_objects_used_here_load() -> None:
    # The builders produce objects the engine accepts.
    for raw in (GPU, *SLICES, resource_claim("c", exact())):
        KubeObject(raw)


# ----- the trace and the replay: devices considered, allocations later cycles see ---------------------


def replay_of(objects: list[dict[str, Any]], pods: list[dict[str, Any]], nodes: Any = None) -> Any:
    from schedviz.engine.loader import load_objects
    from schedviz.engine.runtime.replay import Replay

    for i, p in enumerate(pods):
        p["metadata"]["creationTimestamp"] = f"2026-01-01T00:00:{i:02d}Z"
    r = Replay(load_objects([*(nodes or NODES), *objects, *pods]))
    r.run()
    return r


def stage(r: Any, pod_key: str, point: str) -> dict[str, Any]:
    for s in r.trace.cycle(pod_key).stages:
        if s.point == point and s.plugin == "DynamicResources":
            return dict(s.details)
    raise AssertionError(f"no {point} stage for {pod_key}")


H100 = 'device.attributes["gpu.example.com"].model == "h100"'


def test_two_pods_want_the_last_gpu() -> None:
    objects = [
        GPU,
        resource_slice("n1", [device("gpu-0", model="a100"), device("gpu-1", model="h100")]),
        resource_claim("c1", exact("gpu", 1, "gpu", H100)),
        resource_claim("c2", exact("gpu", 1, "gpu", H100)),
    ]
    r = replay_of(objects, [pod("first", **pod_claims("c1")), pod("second", **pod_claims("c2"))])
    first = r.trace.cycle("default/first")
    assert (first.result, first.selected_node) == ("Scheduled", "n1")
    assert stage(r, "default/first", "Filter") == {
        "claims": [{"claim": "default/c1", "allocated": False}],
        "nodes": [
            {
                "nodes": ["n1"],
                "nodeCount": 1,
                "passed": True,
                "allocation": [
                    {"claim": "default/c1", "request": "gpu", "device": "gpu.example.com/n1/gpu-1"}
                ],
            },
            {
                # No ResourceSlice for these nodes: nothing to consider.
                "nodes": ["n0", "n2"],
                "nodeCount": 2,
                "passed": False,
                "requests": [
                    {"claim": "default/c1", "request": "gpu", "count": 1, "selectable": [], "rejected": {}}
                ],
            },
        ],
    }
    assert stage(r, "default/first", "Reserve") == {
        "inFlight": [{"claim": "default/c1", "devices": ["gpu.example.com/n1/gpu-1"]}]
    }
    assert stage(r, "default/first", "PreBind") == {
        "claims": [
            {
                "claim": "default/c1",
                "devices": ["gpu.example.com/n1/gpu-1"],
                "newlyAllocated": True,
                "reservedFor": "default/first",
            }
        ]
    }
    # The replay wrote the allocation into the claim.
    claim = get_claim(r.cluster, "default", "c1")
    assert claim is not None
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-1"}
    ]
    assert claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": "first", "uid": "uid-default-first"}
    ]

    second = r.trace.cycle("default/second")
    assert second.result == "Unschedulable"
    assert second.message_before_post_filter == "0/3 nodes are available: 3 cannot allocate all claims."
    n1 = stage(r, "default/second", "Filter")["nodes"][1]
    assert n1 == {
        "nodes": ["n1"],
        "nodeCount": 1,
        "passed": False,
        "requests": [
            {
                "claim": "default/c2",
                "request": "gpu",
                "count": 1,
                "selectable": [],
                "rejected": {
                    "gpu.example.com/n1/gpu-0": "does not match the request's selectors",
                    "gpu.example.com/n1/gpu-1": "already allocated to default/c1",
                },
            }
        ],
    }


def test_device_rejections_name_the_class_and_count() -> None:
    other = resource_slice("n0", [device("x-0")], driver="other.example.com", name="n0-other")
    objects = [GPU, other, resource_slice("n0", [device("gpu-0")]), resource_claim("c", exact(count=2))]
    c, pl, st, p = setup(objects, "c")
    assert pl.pre_filter(st, p)[1].is_success()
    pl.filter(st, p, all_nodes(c))
    groups = st.stage_details[("Filter", "DynamicResources")]["nodes"]
    assert groups[0] == {
        "nodes": ["n0"],
        "nodeCount": 1,
        "passed": False,
        "requests": [
            {
                "claim": "default/c",
                "request": "gpu",
                "count": 2,
                "selectable": ["gpu.example.com/n0/gpu-0"],
                "rejected": {"other.example.com/n0/x-0": "does not match DeviceClass gpu"},
            }
        ],
    }


def test_post_filter_records_the_deallocated_claim() -> None:
    on_n0 = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n0", "device": "gpu-0"}]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n0"]}]}
                ]
            },
        }
    }
    nodes = [node("n0", unschedulable=True), node("n1"), node("n2")]
    objects = [
        GPU,
        resource_slice("n0", [device("gpu-0")]),
        resource_slice("n1", [device("gpu-0")]),
        resource_claim("stale", exact(), status=on_n0),
    ]
    r = replay_of(objects, [pod("stuck", **pod_claims("stale")), pod("later", **pod_claims("stale"))], nodes)
    stuck = r.trace.cycle("default/stuck")
    assert stuck.result == "Unschedulable"
    assert "deallocation of ResourceClaim completed" in (stuck.message or "")
    assert stage(r, "default/stuck", "Filter")["nodes"] == [
        {"nodes": ["n1", "n2"], "nodeCount": 2, "passed": False, "unavailableClaims": ["default/stale"]}
    ]
    assert stage(r, "default/stuck", "PostFilter") == {"deallocated": "default/stale"}
    # The next pod using the claim finds it free and has it allocated anew.
    later = r.trace.cycle("default/later")
    assert (later.result, later.selected_node) == ("Scheduled", "n1")
    assert stage(r, "default/later", "PreBind")["claims"][0]["devices"] == ["gpu.example.com/n1/gpu-0"]


def test_selector_compile_problems_are_errors_naming_the_claim() -> None:
    claim = resource_claim("c", exact("gpu", 1, "gpu", 'device.attributes["gpu.example.com"].model'))
    got = verdicts([GPU, *SLICES, claim], "c")
    # A non-bool result is compile.go's type problem, reported without "compilation failed: ".
    msg = "claim default/c: selector #0: CEL compile error: must evaluate to bool or the unknown type, not string"
    assert got[0] != (Code.Error, (msg,))  # the attribute's type is unknown at compile time: a runtime error
    assert got[0] == (
        Code.Error,
        (
            "claim default/c: selector #0: CEL runtime error: CEL result of type string could not be converted "
            "to bool: unsupported native conversion from string to 'bool'",
        ),
    )
    typed = resource_claim("c", exact("gpu", 1, "gpu", "device.driver"))
    assert verdicts([GPU, *SLICES, typed], "c")[0] == (Code.Error, (msg,))
    undeclared = resource_claim("c", exact("gpu", 1, "gpu", "gpu.model == 1"))
    assert verdicts([GPU, *SLICES, undeclared], "c")[0] == (
        Code.Error,
        (
            "claim default/c: selector #0: CEL compile error: compilation failed: undeclared reference to 'gpu' (in container '')",
        ),
    )


def test_selectors_with_macros_and_quantities() -> None:
    slices = [
        resource_slice(
            "n0", [device("gpu-0", model="a100", memory="40Gi"), device("gpu-1", model="a100", memory="80Gi")]
        ),
        resource_slice("n1", [device("gpu-0", model="h100", memory="80Gi")]),
    ]
    big = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0'
    ampere = 'cel.bind(a, device.attributes["gpu.example.com"], ["a100", "a30"].exists(m, m == a.model))'
    claim = resource_claim("c", exact("gpu", 1, "gpu", big, ampere))
    assert verdicts([GPU, *slices, claim], "c") == [OK, CANNOT, CANNOT]
