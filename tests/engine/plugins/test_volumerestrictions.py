"""VolumeRestrictions (framework/plugins/volumerestrictions/volume_restrictions.go)."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)
from tests.engine.builders import all_nodes, cluster, node, pod


def pvc(name: str, *modes: str, namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"accessModes": list(modes) or ["ReadWriteOnce"]},
    }


def claim_vol(claim: str, name: str = "data") -> dict[str, Any]:
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


GCE_FOO = {"name": "d", "gcePersistentDisk": {"pdName": "foo"}}
GCE_FOO_RO = {"name": "d", "gcePersistentDisk": {"pdName": "foo", "readOnly": True}}
GCE_BAR = {"name": "d", "gcePersistentDisk": {"pdName": "bar"}}
AWS_FOO = {"name": "d", "awsElasticBlockStore": {"volumeID": "foo"}}
AWS_FOO_RO = {"name": "d", "awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}
AWS_BAR = {"name": "d", "awsElasticBlockStore": {"volumeID": "bar"}}
ISCSI_1 = {
    "name": "d",
    "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0},
}
ISCSI_1_RO = {
    "name": "d",
    "iscsi": {
        "targetPortal": "127.0.0.1:3260",
        "iqn": "iqn.2016-12.server:storage.target01",
        "lun": 0,
        "readOnly": True,
    },
}
ISCSI_2 = {
    "name": "d",
    "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "lun": 0},
}
RBD_AB = {"name": "d", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar"}}
RBD_BC = {"name": "d", "rbd": {"monitors": ["b", "c"], "pool": "foo", "image": "bar"}}
RBD_CD = {"name": "d", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar"}}
RBD_AB_DEFAULT_POOL = {"name": "d", "rbd": {"monitors": ["a"], "image": "bar"}}
RBD_A_EXPLICIT_RBD = {"name": "d", "rbd": {"monitors": ["a"], "pool": "rbd", "image": "bar"}}
RBD_AB_RO = {"name": "d", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "readOnly": True}}


def run(
    new_volumes: list[dict[str, Any]],
    existing: dict[str, list[list[dict[str, Any]]]],
    objects: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> tuple[Any, Any, Any]:
    nodes = [node("n1"), node("n2")]
    pods = [
        pod(f"old-{n}-{i}", node_name=n, volumes=v)
        for n, vols in existing.items()
        for i, v in enumerate(vols)
    ]
    c = cluster(nodes, pods, objects)
    pl = VolumeRestrictions({}, Handle(c))
    st = CycleState(c)
    p = Pod(pod("new", volumes=new_volumes))
    _, pf = pl.pre_filter(st, p)
    v = pl.filter(st, p, all_nodes(c)) if pf.is_success() else None
    return pf, v, (pl, st, p, c)


@pytest.mark.parametrize(
    ("new", "old", "conflict"),
    [
        # volume_restrictions_test.go TestGCEDiskConflicts / AWS / RBD / ISCSI, plus read-only rules.
        (GCE_FOO, GCE_FOO, True),
        (GCE_BAR, GCE_FOO, False),
        (GCE_FOO_RO, GCE_FOO_RO, False),
        (GCE_FOO_RO, GCE_FOO, True),
        (AWS_FOO, AWS_FOO, True),
        (AWS_FOO_RO, AWS_FOO_RO, True),  # EBS conflicts even read-only
        (AWS_BAR, AWS_FOO, False),
        (ISCSI_1, ISCSI_1, True),
        (ISCSI_1_RO, ISCSI_1_RO, False),
        (ISCSI_2, ISCSI_1, False),
        (RBD_AB, RBD_AB, True),
        (RBD_BC, RBD_AB, True),  # one shared monitor is enough
        (RBD_CD, RBD_AB, False),
        (RBD_AB_RO, RBD_AB_RO, False),
        (RBD_AB_DEFAULT_POOL, RBD_A_EXPLICIT_RBD, True),  # pool defaults to "rbd"
        (GCE_FOO, AWS_FOO, False),  # different disk types never conflict
    ],
)
def test_disk_conflicts(new: dict[str, Any], old: dict[str, Any], conflict: bool) -> None:
    pf, v, _ = run([new], {"n1": [[old]]})
    assert pf.is_success()
    assert v is not None
    assert v.at(0) == ((Code.Unschedulable, (ERR_REASON_DISK_CONFLICT,)) if conflict else (Code.Success, ()))
    assert v.at(1) == (Code.Success, ())


@pytest.mark.parametrize(
    ("volumes", "objects", "existing", "want_pf", "want_filter"),
    [
        ([], [], {}, (Code.Skip, ()), None),
        ([{"name": "e", "emptyDir": {}}], [], {}, (Code.Skip, ()), None),
        (
            [claim_vol("missing")],
            [],
            {},
            (Code.UnschedulableAndUnresolvable, ('persistentvolumeclaim "missing" not found',)),
            None,
        ),
        # A claim of another namespace does not count.
        (
            [claim_vol("c")],
            [pvc("c", namespace="other")],
            {},
            (Code.UnschedulableAndUnresolvable, ('persistentvolumeclaim "c" not found',)),
            None,
        ),
        ([claim_vol("c")], [pvc("c", "ReadWriteOnce")], {}, (Code.Skip, ()), None),
        ([claim_vol("c")], [pvc("c", "ReadWriteOncePod")], {}, (Code.Skip, ()), None),
        # ReadWriteOncePod claim used by a scheduled pod: every node is rejected.
        (
            [claim_vol("c")],
            [pvc("c", "ReadWriteOncePod")],
            {"n2": [[claim_vol("c")]]},
            (Code.Success, ()),
            (Code.Unschedulable, (ERR_REASON_RWOP_CONFLICT,)),
        ),
        # A ReadWriteMany claim in use is no conflict: PreFilter Skips.
        ([claim_vol("c")], [pvc("c", "ReadWriteMany")], {"n2": [[claim_vol("c")]]}, (Code.Skip, ()), None),
        # An in-tree disk always needs the check.
        ([GCE_FOO], [], {}, (Code.Success, ()), (Code.Success, ())),
    ],
)
def test_pre_filter_and_rwop(
    volumes: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    existing: dict[str, list[list[dict[str, Any]]]],
    want_pf: tuple[Code, tuple[str, ...]],
    want_filter: tuple[Code, tuple[str, ...]] | None,
) -> None:
    pf, v, _ = run(volumes, existing, objects)
    assert (pf.code, pf.reasons) == want_pf
    if want_filter is None:
        assert v is None
    else:
        assert v is not None
        assert [v.at(k) for k in range(2)] == [want_filter, want_filter]


def test_disk_conflict_wins_over_rwop_on_the_conflicting_node() -> None:
    objects = [pvc("c", "ReadWriteOncePod")]
    pf, v, _ = run([claim_vol("c"), GCE_FOO], {"n1": [[GCE_FOO]], "n2": [[claim_vol("c")]]}, objects)
    assert pf.is_success()
    assert v.at(0) == (Code.Unschedulable, (ERR_REASON_DISK_CONFLICT,))
    assert v.at(1) == (Code.Unschedulable, (ERR_REASON_RWOP_CONFLICT,))


def test_pre_filter_extensions_track_claim_users() -> None:
    objects = [pvc("c", "ReadWriteOncePod")]
    pf, _v, (pl, st, p, c) = run([claim_vol("c")], {"n2": [[claim_vol("c")]]}, objects)
    assert pf.is_success()
    user = c.pods_on[1][0]
    assert pl.remove_pod(st, p, user, 1).is_success()
    assert pl.filter(st, p, all_nodes(c)).at(0) == (Code.Success, ())
    assert pl.add_pod(st, p, user, 1).is_success()
    assert pl.filter(st, p, all_nodes(c)).at(0) == (Code.Unschedulable, (ERR_REASON_RWOP_CONFLICT,))
    # Without PreFilter state the extension fails as upstream does.
    assert pl.add_pod(CycleState(c), p, user, 1).code == Code.Error


def test_used_claims_follow_pod_changes() -> None:
    objects = [pvc("c", "ReadWriteOncePod")]
    c = cluster([node("n1")], [], objects)
    pl = VolumeRestrictions({}, Handle(c))
    p = Pod(pod("new", volumes=[claim_vol("c")]))
    assert pl.pre_filter(CycleState(c), p)[1].is_skip()
    user = Pod(pod("user", node_name="n1", volumes=[claim_vol("c")]))
    c.add_pod(user, 0)
    assert pl.pre_filter(CycleState(c), p)[1].is_success()
    c.remove_pod(user)
    assert pl.pre_filter(CycleState(c), p)[1].is_skip()
