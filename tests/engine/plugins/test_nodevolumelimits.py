"""NodeVolumeLimits (framework/plugins/nodevolumelimits/csi.go)."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits
from tests.engine.builders import all_nodes, cluster, node, pod
from tests.engine.plugins._storage_builders import claim_vol, csidriver, csinode, pv, pvc, storage_class

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
OK = (Code.Success, ())
FULL = (Code.Unschedulable, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))


def csi_claim(name: str, handle: str, driver: str = EBS) -> list[dict[str, Any]]:
    """A claim bound to a CSI PV with the given volume handle."""
    return [pvc(name, volume=f"pv-{name}", bound=True), pv(f"pv-{name}", csi=(driver, handle))]


@pytest.mark.parametrize(
    ("volumes", "want"),
    [
        ([], Code.Skip),
        ([{"name": "e", "emptyDir": {}}], Code.Skip),
        ([{"name": "h", "hostPath": {"path": "/x"}}], Code.Skip),
        ([claim_vol("any")], Code.Success),  # PreFilter does not look the claim up
        ([{"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}], Code.Success),
        ([{"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-1"}}], Code.Success),  # migratable inline
        ([{"name": "nfs", "nfs": {"server": "s", "path": "/"}}], Code.Skip),
    ],
)
def test_pre_filter(volumes: list[dict[str, Any]], want: Code) -> None:
    c = cluster([node("n1")])
    _, s = NodeVolumeLimits({}, Handle(c)).pre_filter(CycleState(c), Pod(pod("p", volumes=volumes)))
    assert s.code == want


# Node n1 has EBS limit 2 and runs a pod using vol-a; n2 has limit 1 and runs nothing; n3 has no
# CSINode; n4's CSINode lists the driver without a limit.
BASE_OBJECTS = [
    csinode("n1", {EBS: 2}),
    csinode("n2", {EBS: 1}),
    csinode("n4", {EBS: None}),
    *csi_claim("a", "vol-a"),
    *csi_claim("b", "vol-b"),
    *csi_claim("c", "vol-c"),
    *csi_claim("g", "disk-g", GCE),
]
EXISTING = [pod("old", node_name="n1", volumes=[claim_vol("a")])]


@pytest.mark.parametrize(
    ("volumes", "want"),
    [
        # vol-b: n1 has 1 of 2 in use -> fits; n2 0 of 1 -> fits.
        ([claim_vol("b")], [OK, OK, OK, OK]),
        # vol-b and vol-c: n1 would reach 3 > 2; n2 2 > 1.
        ([claim_vol("b"), claim_vol("c", "d2")], [FULL, FULL, OK, OK]),
        # vol-a is already attached to n1: counted once, so vol-a + vol-b fit on n1 (2 of 2).
        ([claim_vol("a"), claim_vol("b", "d2")], [OK, FULL, OK, OK]),
        # Another driver without a limit on the node is not limited.
        ([claim_vol("g"), claim_vol("b", "d2"), claim_vol("c", "d3")], [FULL, FULL, OK, OK]),
        ([claim_vol("g")], [OK, OK, OK, OK]),
        # The same claim twice is one volume.
        ([claim_vol("b"), claim_vol("b", "again")], [OK, OK, OK, OK]),
    ],
)
def test_limits(volumes: list[dict[str, Any]], want: list[tuple[Code, tuple[str, ...]]]) -> None:
    c = cluster([node("n1"), node("n2"), node("n3"), node("n4")], EXISTING, BASE_OBJECTS)
    pl = NodeVolumeLimits({}, Handle(c))
    v = pl.filter(CycleState(c), Pod(pod("new", volumes=volumes)), all_nodes(c))
    assert [v.at(k) for k in range(4)] == want


def test_unbound_claims_count_through_their_storage_class() -> None:
    objects = [
        csinode("n1", {EBS: 1}),
        storage_class("ebs", provisioner=EBS),
        pvc("u1", sc="ebs"),
        pvc("u2", sc="ebs"),
        pvc("noclass"),
        pvc("unknown-class", sc="missing"),
    ]
    c = cluster([node("n1")], [], objects)
    pl = NodeVolumeLimits({}, Handle(c))

    def verdict(*claims: str) -> tuple[Code, tuple[str, ...]]:
        vols = [claim_vol(cl, f"v{i}") for i, cl in enumerate(claims)]
        return pl.filter(CycleState(c), Pod(pod("new", volumes=vols)), all_nodes(c)).at(0)

    assert verdict("u1") == OK
    assert verdict("u1", "u2") == FULL
    # Claims without a class, or with an unknown class, are not counted.
    assert verdict("u1", "noclass", "unknown-class") == OK


def test_existing_unbound_claim_is_the_same_volume() -> None:
    objects = [csinode("n1", {EBS: 1}), storage_class("ebs", provisioner=EBS), pvc("u1", sc="ebs")]
    c = cluster([node("n1")], [pod("old", node_name="n1", volumes=[claim_vol("u1")])], objects)
    v = NodeVolumeLimits({}, Handle(c)).filter(
        CycleState(c), Pod(pod("new", volumes=[claim_vol("u1")])), all_nodes(c)
    )
    assert v.at(0) == OK


def test_missing_claim_of_the_new_pod() -> None:
    c = cluster([node("n1")], [], [csinode("n1", {EBS: 1})])
    v = NodeVolumeLimits({}, Handle(c)).filter(
        CycleState(c), Pod(pod("new", volumes=[claim_vol("nope")])), all_nodes(c)
    )
    assert v.at(0) == (
        Code.UnschedulableAndUnresolvable,
        ('looking up PVC default/nope: persistentvolumeclaim "nope" not found',),
    )


def test_missing_claim_of_an_existing_pod_is_not_counted() -> None:
    objects = [csinode("n1", {EBS: 1}), *csi_claim("b", "vol-b")]
    c = cluster([node("n1")], [pod("old", node_name="n1", volumes=[claim_vol("gone")])], objects)
    v = NodeVolumeLimits({}, Handle(c)).filter(
        CycleState(c), Pod(pod("new", volumes=[claim_vol("b")])), all_nodes(c)
    )
    assert v.at(0) == OK


def test_volume_attachments_count_but_do_not_dedupe_new_volumes() -> None:
    va = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": "va-b"},
        "spec": {"attacher": EBS, "nodeName": "n1", "source": {"persistentVolumeName": "pv-b"}},
    }
    objects = [csinode("n1", {EBS: 1}), *csi_claim("b", "vol-b"), *csi_claim("c", "vol-c"), va]
    c = cluster([node("n1")], [], objects)
    pl = NodeVolumeLimits({}, Handle(c))
    # vol-b is attached by a VolumeAttachment: 1 attached + 1 new > 1, even for vol-b itself.
    for claim in ("b", "c"):
        v = pl.filter(CycleState(c), Pod(pod("new", volumes=[claim_vol(claim)])), all_nodes(c))
        assert v.at(0) == FULL


def test_inline_in_tree_volume_counts_only_where_migrated() -> None:
    migrated = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}
    objects = [csinode("n1", {EBS: 1}, migrated), csinode("n2", {EBS: 1})]
    existing = [
        pod("old1", node_name="n1", volumes=[{"name": "x", "awsElasticBlockStore": {"volumeID": "vol-x"}}]),
        pod("old2", node_name="n2", volumes=[{"name": "x", "awsElasticBlockStore": {"volumeID": "vol-x"}}]),
    ]
    c = cluster([node("n1"), node("n2")], existing, objects)
    new = Pod(pod("new", volumes=[{"name": "y", "awsElasticBlockStore": {"volumeID": "aws://us-1a/vol-y"}}]))
    v = NodeVolumeLimits({}, Handle(c)).filter(CycleState(c), new, all_nodes(c))
    # n1: migrated, vol-x counted, vol-y would be the second -> full. n2: not migrated, nothing counted.
    assert [v.at(0), v.at(1)] == [FULL, OK]


def test_volume_limit_scaling_gate_checks_the_driver_is_installed() -> None:
    objects = [csinode("n1", {EBS: 5}), csinode("n2", {GCE: 5}), csidriver(EBS), *csi_claim("b", "vol-b")]
    c = cluster([node("n1"), node("n2"), node("n3")], [], objects)
    p = Pod(pod("new", volumes=[claim_vol("b")]))
    off = NodeVolumeLimits({}, Handle(c)).filter(CycleState(c), p, all_nodes(c))
    assert [off.at(k) for k in range(3)] == [OK, OK, OK]
    on = NodeVolumeLimits({}, Handle(c, {"VolumeLimitScaling": True})).filter(CycleState(c), p, all_nodes(c))
    missing = (Code.Unschedulable, (f"{EBS} CSI driver is not installed on the node",))
    assert [on.at(k) for k in range(3)] == [OK, missing, missing]
