"""VolumeBinding (framework/plugins/volumebinding/volume_binding.go, binder.go)."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.engine.framework import Code, CycleState, Handle, Status
from schedviz.engine.objects import Pod
from schedviz.engine.plugins import _storage
from schedviz.engine.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    UNBOUND_IMMEDIATE,
    VolumeBinding,
)
from tests.engine.builders import all_nodes, cluster, node, pod
from tests.engine.plugins._storage_builders import claim_vol, csidriver, pv, pvc, storage_class

ZONE = "topology.kubernetes.io/zone"
NODES = [node("n1", labels={ZONE: "a"}), node("n2", labels={ZONE: "a"}), node("n3", labels={ZONE: "b"})]
OK = (Code.Success, ())


def u(*reasons: str) -> tuple[Code, tuple[str, ...]]:
    return (Code.UnschedulableAndUnresolvable, reasons)


def zone_affinity(zone: str) -> dict[str, Any]:
    return {
        "required": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]
        }
    }


def setup(objects: list[dict[str, Any]], volumes: list[dict[str, Any]], **handle: Any) -> tuple[Any, ...]:
    c = cluster(NODES, [], objects)
    pl = VolumeBinding({}, Handle(c, handle or None))
    st = CycleState(c)
    p = Pod(pod("p", volumes=volumes))
    return c, pl, st, p


def verdicts(
    objects: list[dict[str, Any]], volumes: list[dict[str, Any]]
) -> list[tuple[Code, tuple[str, ...]]]:
    c, pl, st, p = setup(objects, volumes)
    _, s = pl.pre_filter(st, p)
    assert s.is_success(), s
    v = pl.filter(st, p, all_nodes(c))
    return [v.at(k) for k in range(c.n)]


WFFC = storage_class("local")


@pytest.mark.parametrize(
    ("objects", "volumes", "want"),
    [
        ([], [], (Code.Skip, ())),
        ([], [{"name": "e", "emptyDir": {}}], (Code.Skip, ())),
        ([], [claim_vol("x")], u('persistentvolumeclaim "x" not found')),
        (
            [],
            [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}],
            u('waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"'),
        ),
        (
            [pvc("p-scratch", sc="local"), WFFC],
            [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}],
            u("PVC default/p-scratch was not created for pod default/p (pod is not owner)"),
        ),
        (
            [pvc("x", volume="v", phase="Lost")],
            [claim_vol("x")],
            u('persistentvolumeclaim "x" bound to non-existent persistentvolume "v"'),
        ),
        # Unbound claim of an Immediate class, or of no class at all: not bound yet.
        (
            [pvc("x", sc="imm"), storage_class("imm", mode="Immediate")],
            [claim_vol("x")],
            u(UNBOUND_IMMEDIATE),
        ),
        ([pvc("x")], [claim_vol("x")], u(UNBOUND_IMMEDIATE)),
        ([pvc("x", sc="missing-class")], [claim_vol("x")], u(UNBOUND_IMMEDIATE)),
        # A volume name without the bind-completed annotation: not fully bound, so immediate.
        (
            [pvc("x", sc="local", volume="v"), WFFC, pv("v", sc="local")],
            [claim_vol("x")],
            u(UNBOUND_IMMEDIATE),
        ),
        # Fully bound, or unbound of a WaitForFirstConsumer class: Success.
        ([pvc("x", volume="v", bound=True), pv("v")], [claim_vol("x")], OK),
        ([pvc("x", sc="local"), WFFC], [claim_vol("x")], OK),
    ],
)
def test_pre_filter(
    objects: list[dict[str, Any]], volumes: list[dict[str, Any]], want: tuple[Code, tuple[str, ...]]
) -> None:
    _c, pl, st, p = setup(objects, volumes)
    _, s = pl.pre_filter(st, p)
    assert (s.code, s.reasons) == want


def test_pod_without_claims_runs_every_point_trivially() -> None:
    c, pl, st, p = setup([], [])
    _, s = pl.pre_filter(st, p)
    assert s.is_skip()
    assert pl.pre_score(st, p, all_nodes(c)).is_skip()
    assert list(pl.score(st, p, all_nodes(c))) == [0, 0, 0]
    assert pl.reserve(st, p, "n1").is_success()
    assert pl.pre_bind_pre_flight(st, p, "n1").is_skip()
    assert pl.pre_bind(st, p, "n1").is_success()
    pl.unreserve(st, p, "n1")
    # Without PreFilter state the points that read it fail.
    fresh = CycleState(c)
    assert pl.reserve(fresh, p, "n1") == Status.error("not found")
    assert pl.filter(fresh, p, all_nodes(c)).at(0) == (Code.Error, ("not found",))


@pytest.mark.parametrize(
    ("objects", "want"),
    [
        # Bound claim: the PV's node affinity decides.
        (
            [pvc("x", volume="v", bound=True), pv("v", affinity=zone_affinity("a"))],
            [OK, OK, u(ERR_REASON_NODE_CONFLICT)],
        ),
        ([pvc("x", volume="v", bound=True), pv("v")], [OK, OK, OK]),
        # Bound to a PV that does not exist.
        ([pvc("x", volume="v", bound=True)], [u(ERR_REASON_PV_NOT_EXIST)] * 3),
    ],
)
def test_bound_claims(objects: list[dict[str, Any]], want: list[tuple[Code, tuple[str, ...]]]) -> None:
    assert verdicts(objects, [claim_vol("x")]) == want


def test_bound_claims_first_failure_decides() -> None:
    # Claim 1's PV admits zone a only; claim 2's PV is missing: nodes in zone b stop at claim 1.
    objects = [
        pvc("x", volume="v", bound=True),
        pv("v", affinity=zone_affinity("a")),
        pvc("y", volume="gone", bound=True),
    ]
    got = verdicts(objects, [claim_vol("x"), claim_vol("y", "d2")])
    assert got == [u(ERR_REASON_PV_NOT_EXIST), u(ERR_REASON_PV_NOT_EXIST), u(ERR_REASON_NODE_CONFLICT)]


@pytest.mark.parametrize(
    ("pvs", "claim", "want"),
    [
        # Local PVs of the class on n1 and n3: the others cannot bind.
        (
            [pv("l1", sc="local", hostnames=["n1"]), pv("l3", sc="local", hostnames=["n3"])],
            pvc("x", sc="local"),
            [OK, u(ERR_REASON_BIND_CONFLICT), OK],
        ),
        # Too small, wrong class, wrong access mode, not Available, wrong volume mode: no match anywhere.
        (
            [pv("small", sc="local", storage="512Mi", hostnames=["n1"])],
            pvc("x", sc="local"),
            [u(ERR_REASON_BIND_CONFLICT)] * 3,
        ),
        ([pv("other", sc="fast", hostnames=["n1"])], pvc("x", sc="local"), [u(ERR_REASON_BIND_CONFLICT)] * 3),
        (
            [pv("ro", sc="local", modes=("ReadOnlyMany",), hostnames=["n1"])],
            pvc("x", sc="local"),
            [u(ERR_REASON_BIND_CONFLICT)] * 3,
        ),
        (
            [pv("rel", sc="local", phase="Released", hostnames=["n1"])],
            pvc("x", sc="local"),
            [u(ERR_REASON_BIND_CONFLICT)] * 3,
        ),
        (
            [pv("blk", sc="local", volumeMode="Block", hostnames=["n1"])],
            pvc("x", sc="local"),
            [u(ERR_REASON_BIND_CONFLICT)] * 3,
        ),
        # A PV bound to another claim is not available.
        (
            [pv("taken", sc="local", claim="other", hostnames=["n1"])],
            pvc("x", sc="local"),
            [u(ERR_REASON_BIND_CONFLICT)] * 3,
        ),
        # A PV pre-bound to this claim is used even if not Available, but only where it fits.
        (
            [pv("pre", sc="local", claim="x", phase="Pending", hostnames=["n2"])],
            pvc("x", sc="local"),
            [u(ERR_REASON_BIND_CONFLICT), OK, u(ERR_REASON_BIND_CONFLICT)],
        ),
        # A claim label selector must match the PV's labels.
        (
            [pv("lab", sc="local", labels={"tier": "gold"}, hostnames=["n1"])],
            pvc("x", sc="local", selector={"matchLabels": {"tier": "silver"}}),
            [u(ERR_REASON_BIND_CONFLICT)] * 3,
        ),
        (
            [pv("lab", sc="local", labels={"tier": "gold"}, hostnames=["n1"])],
            pvc("x", sc="local", selector={"matchLabels": {"tier": "gold"}}),
            [OK, u(ERR_REASON_BIND_CONFLICT), u(ERR_REASON_BIND_CONFLICT)],
        ),
    ],
)
def test_unbound_claims_match_local_pvs(
    pvs: list[dict[str, Any]], claim: dict[str, Any], want: list[tuple[Code, tuple[str, ...]]]
) -> None:
    assert verdicts([WFFC, claim, *pvs], [claim_vol("x")]) == want


def test_smallest_pv_is_chosen_and_reserve_assumes_it() -> None:
    objects = [
        WFFC,
        pvc("x", sc="local", storage="4Gi"),
        pvc("y", sc="local", storage="4Gi"),
        pv("big", sc="local", storage="50Gi", hostnames=["n1"]),
        pv("small", sc="local", storage="5Gi", hostnames=["n1"]),
    ]
    c, pl, st, p = setup(objects, [claim_vol("x")])
    assert pl.pre_filter(st, p)[1].is_success()
    pl.filter(st, p, all_nodes(c))
    assert pl.reserve(st, p, "n1").is_success()
    assumed = _storage.assumed(c).pvs
    assert list(assumed) == ["small"]
    ref = assumed["small"]["spec"]["claimRef"]
    assert (ref["name"], ref["namespace"], ref["uid"]) == ("x", "default", "uid-pvc-x")
    assert assumed["small"]["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert pl.pre_bind_pre_flight(st, p, "n1").is_success()
    assert pl.pre_bind(st, p, "n1").is_success()

    # The next pod's claim cannot take the assumed PV, only the big one.
    st2 = CycleState(c)
    p2 = Pod(pod("p2", volumes=[claim_vol("y")]))
    assert pl.pre_filter(st2, p2)[1].is_success()
    assert pl.filter(st2, p2, all_nodes(c)).at(0) == OK
    assert pl.reserve(st2, p2, "n1").is_success()
    assert sorted(assumed) == ["big", "small"]

    # A third claim finds nothing; unreserving the second frees the big PV again.
    objects_z = pvc("z", sc="local", storage="4Gi")
    c.objects.add(_as_object(objects_z))
    p3 = Pod(pod("p3", volumes=[claim_vol("z")]))
    st3 = CycleState(c)
    assert pl.pre_filter(st3, p3)[1].is_success()
    assert pl.filter(st3, p3, all_nodes(c)).at(0) == u(ERR_REASON_BIND_CONFLICT)
    pl.unreserve(st2, p2, "n1")
    assert list(assumed) == ["small"]
    st4 = CycleState(c)
    assert pl.pre_filter(st4, p3)[1].is_success()
    assert pl.filter(st4, p3, all_nodes(c)).at(0) == OK


def _as_object(raw: dict[str, Any]) -> Any:
    from schedviz.engine.objects import KubeObject

    return KubeObject(raw)


def test_two_claims_do_not_share_a_pv() -> None:
    objects = [
        WFFC,
        pvc("x", sc="local", storage="1Gi"),
        pvc("y", sc="local", storage="2Gi"),
        pv("a", sc="local", storage="5Gi", hostnames=["n1", "n2"]),
        pv("b", sc="local", storage="5Gi", hostnames=["n1"]),
    ]
    got = verdicts(objects, [claim_vol("x"), claim_vol("y", "d2")])
    assert got == [OK, u(ERR_REASON_BIND_CONFLICT), u(ERR_REASON_BIND_CONFLICT)]


@pytest.mark.parametrize(
    ("objects", "want"),
    [
        # A provisioner can create the volume anywhere.
        ([storage_class("dyn", provisioner="ebs.csi.example.com"), pvc("x", sc="dyn")], [OK, OK, OK]),
        # ... restricted by the class's allowed topologies.
        (
            [
                storage_class(
                    "dyn",
                    provisioner="ebs.csi.example.com",
                    allowedTopologies=[{"matchLabelExpressions": [{"key": ZONE, "values": ["b"]}]}],
                ),
                pvc("x", sc="dyn"),
            ],
            [u(ERR_REASON_BIND_CONFLICT), u(ERR_REASON_BIND_CONFLICT), OK],
        ),
        # Storage capacity tracking: the driver opts in, capacity exists for zone a only.
        (
            [
                storage_class("dyn", provisioner="cap.csi.example.com"),
                csidriver("cap.csi.example.com", storageCapacity=True),
                pvc("x", sc="dyn", storage="10Gi"),
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSIStorageCapacity",
                    "metadata": {"name": "cap-a", "namespace": "kube-system"},
                    "storageClassName": "dyn",
                    "capacity": "100Gi",
                    "nodeTopology": {"matchLabels": {ZONE: "a"}},
                },
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSIStorageCapacity",
                    "metadata": {"name": "cap-b", "namespace": "kube-system"},
                    "storageClassName": "dyn",
                    "capacity": "100Gi",
                    "maximumVolumeSize": "5Gi",
                    "nodeTopology": {"matchLabels": {ZONE: "b"}},
                },
            ],
            [OK, OK, u(ERR_REASON_NOT_ENOUGH_SPACE)],
        ),
        # A driver that does not opt into capacity tracking is not checked.
        (
            [
                storage_class("dyn", provisioner="cap.csi.example.com"),
                csidriver("cap.csi.example.com"),
                pvc("x", sc="dyn"),
            ],
            [OK, OK, OK],
        ),
        # A claim already given to n2 (selected-node annotation) fits n2 only.
        (
            [
                storage_class("dyn", provisioner="ebs.csi.example.com"),
                pvc("x", sc="dyn", annotations={"volume.kubernetes.io/selected-node": "n2"}),
            ],
            [u(ERR_REASON_BIND_CONFLICT), OK, u(ERR_REASON_BIND_CONFLICT)],
        ),
    ],
)
def test_dynamic_provisioning(
    objects: list[dict[str, Any]], want: list[tuple[Code, tuple[str, ...]]]
) -> None:
    assert verdicts(objects, [claim_vol("x")]) == want


def test_reserve_of_a_provisioned_claim_sets_selected_node() -> None:
    objects = [storage_class("dyn", provisioner="ebs.csi.example.com"), pvc("x", sc="dyn")]
    c, pl, st, p = setup(objects, [claim_vol("x")])
    pl.pre_filter(st, p)
    pl.filter(st, p, all_nodes(c))
    assert pl.reserve(st, p, "n3").is_success()
    claim = _storage.assumed(c).pvcs[("default", "x")]
    assert claim["metadata"]["annotations"] == {"volume.kubernetes.io/selected-node": "n3"}
    # The next pod using the claim is held to n3 (fast path); unreserve drops the assumption.
    st2 = CycleState(c)
    p2 = Pod(pod("p2", volumes=[claim_vol("x")]))
    pl.pre_filter(st2, p2)
    v = pl.filter(st2, p2, all_nodes(c))
    assert [v.at(k) for k in range(3)] == [u(ERR_REASON_BIND_CONFLICT), u(ERR_REASON_BIND_CONFLICT), OK]
    pl.unreserve(st, p, "n3")
    assert _storage.assumed(c).pvcs == {}


def test_all_bound_pod_skips_pre_bind() -> None:
    objects = [pvc("x", volume="v", bound=True), pv("v")]
    c, pl, st, p = setup(objects, [claim_vol("x")])
    pl.pre_filter(st, p)
    pl.filter(st, p, all_nodes(c))
    assert pl.reserve(st, p, "n1").is_success()
    assert pl.pre_bind_pre_flight(st, p, "n1").is_skip()
    assert _storage.assumed(c).pvs == {}


def test_capacity_scoring_gate() -> None:
    objects = [
        WFFC,
        pvc("x", sc="local", storage="5Gi"),
        pv("exact", sc="local", storage="5Gi", hostnames=["n1"]),
        pv("double", sc="local", storage="10Gi", hostnames=["n2"]),
    ]
    c, pl, st, p = setup(objects, [claim_vol("x")], StorageCapacityScoring=True)
    pl.pre_filter(st, p)
    pl.filter(st, p, all_nodes(c))
    assert pl.pre_score(st, p, all_nodes(c)).is_success()
    # Default shape (0 -> 100, 100 -> 0): 5/5 used scores 0, 5/10 used scores 50; n3 has no volumes.
    assert list(pl.score(st, p, all_nodes(c))) == [0, 50, 0]


def term(*exprs: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields:
        t["matchFields"] = fields
    return t


GEN = "example.com/gen"
AFFINITY_NODES = [
    node("g1", labels={ZONE: "a", GEN: "1"}),
    node("g5", labels={ZONE: "b", GEN: "5"}),
    node("gx", labels={ZONE: "a", GEN: "x"}),
    node("none"),
]


@pytest.mark.parametrize(
    ("terms", "want"),
    [
        ([term({"key": GEN, "operator": "Gt", "values": ["2"]})], [False, True, False, False]),
        ([term({"key": GEN, "operator": "Lt", "values": ["2"]})], [True, False, False, False]),
        ([term({"key": ZONE, "operator": "NotIn", "values": ["a"]})], [False, True, False, True]),
        ([term({"key": ZONE, "operator": "DoesNotExist"})], [False, False, False, True]),
        (
            [term({"key": ZONE, "operator": "Exists"}, {"key": GEN, "operator": "In", "values": ["x", "5"]})],
            [False, True, True, False],
        ),
        # Terms are ORed; an empty term matches nothing.
        ([term(), term({"key": GEN, "operator": "In", "values": ["1"]})], [True, False, False, False]),
        (
            [term(fields=[{"key": "metadata.name", "operator": "In", "values": ["gx"]}])],
            [False, False, True, False],
        ),
        (
            [term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["gx"]}])],
            [True, True, False, True],
        ),
    ],
)
def test_pv_node_affinity_selectors(terms: list[dict[str, Any]], want: list[bool]) -> None:
    c = cluster(
        AFFINITY_NODES,
        [],
        [pvc("x", volume="v", bound=True), pv("v", affinity={"required": {"nodeSelectorTerms": terms}})],
    )
    pl = VolumeBinding({}, Handle(c))
    st, p = CycleState(c), Pod(pod("p", volumes=[claim_vol("x")]))
    assert pl.pre_filter(st, p)[1].is_success()
    v = pl.filter(st, p, all_nodes(c))
    assert [v.at(k) == OK for k in range(c.n)] == want


@pytest.mark.parametrize(
    ("expr", "field"),
    [
        ({"key": ZONE, "operator": "Near", "values": ["a"]}, "operator"),
        ({"key": ZONE, "operator": "In", "values": []}, "values"),
        ({"key": ZONE, "operator": "Exists", "values": ["a"]}, "values"),
        ({"key": GEN, "operator": "Gt", "values": ["two"]}, "values"),
    ],
)
def test_invalid_pv_node_affinity_is_an_input_error(expr: dict[str, Any], field: str) -> None:
    from schedviz.engine.errors import InputError

    c = cluster(
        AFFINITY_NODES,
        [],
        [
            pvc("x", volume="v", bound=True),
            pv("v", affinity={"required": {"nodeSelectorTerms": [term(expr)]}}),
        ],
    )
    pl = VolumeBinding({}, Handle(c))
    st, p = CycleState(c), Pod(pod("p", volumes=[claim_vol("x")]))
    pl.pre_filter(st, p)
    with pytest.raises(InputError, match=f"PersistentVolume v.*matchExpressions\\[0\\]\\.{field}"):
        pl.filter(st, p, all_nodes(c))


# ----- the trace and the replay: what each node would bind, and the binding later cycles see ---------


def replay_of(objects: list[dict[str, Any]], pods: list[dict[str, Any]]) -> Any:
    from schedviz.engine.loader import load_objects
    from schedviz.engine.runtime.replay import Replay

    for i, p in enumerate(pods):
        p["metadata"]["creationTimestamp"] = f"2026-01-01T00:00:{i:02d}Z"
    r = Replay(load_objects([*NODES, *objects, *pods]))
    r.run()
    return r


def stage(r: Any, pod_key: str, point: str, plugin: str = "VolumeBinding") -> dict[str, Any]:
    for s in r.trace.cycle(pod_key).stages:
        if s.point == point and s.plugin == plugin:
            return dict(s.details)
    raise AssertionError(f"no {point} stage of {plugin} for {pod_key}")


NO_PV = 'no available PersistentVolume matches and StorageClass "local" has no provisioner'


def test_second_pod_sees_the_local_pv_bound_by_the_first() -> None:
    objects = [WFFC, pv("pv-a", sc="local", hostnames=["n2"]), pvc("c1", sc="local"), pvc("c2", sc="local")]
    r = replay_of(
        objects,
        [
            pod("first", volumes=[claim_vol("c1")]),
            pod("second", volumes=[claim_vol("c2")]),
            pod("sharer", volumes=[claim_vol("c1")]),
        ],
    )
    first = r.trace.cycle("default/first")
    assert (first.result, first.selected_node) == ("Scheduled", "n2")
    unbound = {
        "claim": "default/c1",
        "storageClass": "local",
        "phase": "Unbound",
        "bindingMode": "WaitForFirstConsumer",
    }
    assert stage(r, "default/first", "Filter") == {
        "claims": [unbound],
        "nodes": [
            {"nodes": ["n2"], "nodeCount": 1, "passed": True, "claims": {"default/c1": {"bind": "pv-a"}}},
            {
                "nodes": ["n1", "n3"],
                "nodeCount": 2,
                "passed": False,
                "claims": {"default/c1": {"problem": NO_PV}},
            },
        ],
    }
    binding = {"bindings": [{"claim": "default/c1", "volume": "pv-a"}], "provisions": []}
    assert stage(r, "default/first", "Reserve") == {"assumed": binding}
    assert stage(r, "default/first", "PreBind") == binding

    # The replay applied the binding: the claim is bound to the PV, which no other claim can take.
    claim = _storage.cached_pvc(r.cluster, "default", "c1")
    assert claim is not None and claim["spec"]["volumeName"] == "pv-a" and _storage.is_fully_bound(claim)
    assert claim["status"]["phase"] == "Bound"
    volume = _storage.cached_pv(r.cluster, "pv-a")
    assert volume is not None and volume["status"]["phase"] == "Bound"
    assert volume["spec"]["claimRef"]["name"] == "c1"

    second = r.trace.cycle("default/second")
    assert second.result == "Unschedulable"
    assert second.message_before_post_filter == f"0/3 nodes are available: 3 {ERR_REASON_BIND_CONFLICT}."
    assert stage(r, "default/second", "Filter")["nodes"] == [
        {
            "nodes": ["n1", "n2", "n3"],
            "nodeCount": 3,
            "passed": False,
            "claims": {"default/c2": {"problem": NO_PV}},
        }
    ]

    # A pod sharing the bound claim goes where the PV is, through the bound-claim check.
    sharer = r.trace.cycle("default/sharer")
    assert (sharer.result, sharer.selected_node) == ("Scheduled", "n2")
    details = stage(r, "default/sharer", "Filter")
    assert details["claims"] == [
        {"claim": "default/c1", "storageClass": "local", "phase": "Bound", "volume": "pv-a"}
    ]
    affinity = "the PersistentVolume's node affinity does not match the node"
    assert details["nodes"][1] == {
        "nodes": ["n1", "n3"],
        "nodeCount": 2,
        "passed": False,
        "claims": {"default/c1": {"volume": "pv-a", "problem": affinity}},
    }
    assert [s.point for s in sharer.stages if s.plugin == "VolumeBinding"] == [
        "PreFilter",
        "Filter",
        "Reserve",
        "PreBindPreFlight",
    ]
    rejected = r.trace.to_dict()["cycles"][2]["nodes"]["n1"]["filter"]
    assert rejected == {
        "code": "UnschedulableAndUnresolvable",
        "plugin": "VolumeBinding",
        "reasons": [ERR_REASON_NODE_CONFLICT],
    }


def test_provisioned_claim_holds_later_pods_to_the_selected_node() -> None:
    fast = storage_class(
        "fast",
        provisioner="ebs.csi.example.com",
        allowedTopologies=[{"matchLabelExpressions": [{"key": ZONE, "values": ["a"]}]}],
    )
    r = replay_of(
        [fast, pvc("data", sc="fast")],
        [pod("writer", volumes=[claim_vol("data")]), pod("reader", volumes=[claim_vol("data")])],
    )
    writer = r.trace.cycle("default/writer")
    assert writer.result == "Scheduled" and writer.selected_node in ("n1", "n2")
    topology = 'no available PersistentVolume matches and StorageClass "fast" cannot provision here (allowedTopologies)'
    assert stage(r, "default/writer", "Filter")["nodes"] == [
        {
            "nodes": ["n1", "n2"],
            "nodeCount": 2,
            "passed": True,
            "claims": {"default/data": {"provision": "fast"}},
        },
        {"nodes": ["n3"], "nodeCount": 1, "passed": False, "claims": {"default/data": {"problem": topology}}},
    ]
    node = writer.selected_node
    provision = {"claim": "default/data", "storageClass": "fast", "selectedNode": node}
    assert stage(r, "default/writer", "PreBind") == {"bindings": [], "provisions": [provision]}

    reader = r.trace.cycle("default/reader")
    assert (reader.result, reader.selected_node) == ("Scheduled", node)
    details = stage(r, "default/reader", "Filter")
    assert details["claims"][0]["selectedNode"] == node
    others = [g for g in details["nodes"] if not g["passed"]]
    held = f'the claim is being provisioned for node "{node}" (volume.kubernetes.io/selected-node)'
    assert others == [
        {
            "nodes": [n for n in ("n1", "n2", "n3") if n != node],
            "nodeCount": 2,
            "passed": False,
            "claims": {"default/data": {"problem": held}},
        }
    ]


def test_bound_claim_to_a_missing_pv_in_the_details() -> None:
    # (In a replay VolumeZone's PreFilter rejects such a pod first; the plugin alone records this.)
    c, pl, st, p = setup([pvc("gone", volume="nowhere", bound=True)], [claim_vol("gone")])
    assert pl.pre_filter(st, p)[1].is_success()
    pl.filter(st, p, all_nodes(c))
    assert st.stage_details[("Filter", "VolumeBinding")]["nodes"] == [
        {
            "nodes": ["n1", "n2", "n3"],
            "nodeCount": 3,
            "passed": False,
            "claims": {
                "default/gone": {"volume": "nowhere", "problem": "the PersistentVolume does not exist"}
            },
        }
    ]


def test_node_groups_put_passing_nodes_first_and_cap_names(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    c = cluster([node(f"n{i}") for i in range(6)], [])
    nodes = np.asarray([5, 4, 3, 2, 1, 0], dtype=np.int64)
    keys = np.asarray([[3, 0, 3, 0, 3, 3], [7, 1, 7, 1, 8, 7]], dtype=np.int64)
    monkeypatch.setattr(_storage, "MAX_DETAIL_NAMES", 2)
    groups, omitted = _storage.group_nodes(c, nodes, keys)
    assert [(g.names, g.count, g.first) for g in groups] == [
        (["n2", "n4"], 2, 3),  # passing (code 0) first; names in snapshot order
        (["n0", "n3"], 3, 5),  # names capped, count complete; "first" is n0's position
        (["n1"], 1, 4),
    ]
    assert omitted == 0
    monkeypatch.setattr(_storage, "MAX_DETAIL_GROUPS", 1)
    assert _storage.group_nodes(c, nodes, keys)[1] == 2


def test_capacity_and_class_errors_in_the_details() -> None:
    capacity = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": "cap-a", "namespace": "kube-system"},
        "storageClassName": "dyn",
        "capacity": "100Gi",
        "nodeTopology": {"matchLabels": {ZONE: "a"}},
    }
    objects = [
        storage_class("dyn", provisioner="cap.csi.example.com"),
        csidriver("cap.csi.example.com", storageCapacity=True),
        pvc("x", sc="dyn", storage="10Gi"),
        capacity,
    ]
    c, pl, st, p = setup(objects, [claim_vol("x")])
    assert pl.pre_filter(st, p)[1].is_success()
    pl.filter(st, p, all_nodes(c))
    no_room = 'no CSIStorageCapacity of StorageClass "dyn" for the node has room for the claim'
    assert st.stage_details[("Filter", "VolumeBinding")]["nodes"] == [
        {
            "nodes": ["n1", "n2"],
            "nodeCount": 2,
            "passed": True,
            "claims": {"default/x": {"provision": "dyn", "capacity": "cap-a"}},
        },
        {"nodes": ["n3"], "nodeCount": 1, "passed": False, "claims": {"default/x": {"problem": no_room}}},
    ]
