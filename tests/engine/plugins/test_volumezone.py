"""VolumeZone (framework/plugins/volumezone/volume_zone.go)."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone
from tests.engine.builders import all_nodes, cluster, node, pod
from tests.engine.plugins._storage_builders import claim_vol, pv, pvc, storage_class

GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"

NODES = [
    node("zone-a", labels={GA_ZONE: "us-1a", GA_REGION: "us-1"}),
    node("zone-b", labels={GA_ZONE: "us-1b", GA_REGION: "us-1"}),
    node("beta-a", labels={BETA_ZONE: "us-1a"}),
    node("plain"),  # no topology label: always fits
    node("other-region", labels={GA_ZONE: "us-1a", GA_REGION: "us-2"}),
]
OK = (Code.Success, ())
NO = (Code.UnschedulableAndUnresolvable, (ERR_REASON_CONFLICT,))


def bound(claim: str, volume: str) -> dict[str, Any]:
    return pvc(claim, volume=volume, bound=True)


@pytest.mark.parametrize(
    ("pv_labels", "want"),
    [
        # GA zone label on the PV: the node's GA zone must be in the set.
        ({GA_ZONE: "us-1a"}, [OK, NO, NO, OK, OK]),
        # Beta zone on the PV matches the node's beta label, or its GA label when the beta one is absent.
        ({BETA_ZONE: "us-1a"}, [OK, NO, OK, OK, OK]),
        # Several zones separated by "__".
        ({GA_ZONE: "us-1a__us-1b"}, [OK, OK, NO, OK, OK]),
        # Zone and region both have to match.
        ({GA_ZONE: "us-1a", GA_REGION: "us-1"}, [OK, NO, NO, OK, NO]),
        # An unparsable value (empty zone) is ignored.
        ({GA_ZONE: "us-1a__"}, None),
        # Labels that are not topology labels do not count.
        ({"example.com/rack": "r1"}, None),
    ],
)
def test_filter_by_pv_topology(
    pv_labels: dict[str, str], want: list[tuple[Code, tuple[str, ...]]] | None
) -> None:
    c = cluster(NODES, [], [pv("vol", labels=pv_labels), bound("claim", "vol")])
    pl = VolumeZone({}, Handle(c))
    st = CycleState(c)
    p = Pod(pod("p", volumes=[claim_vol("claim")]))
    _, s = pl.pre_filter(st, p)
    if want is None:
        assert s.is_skip()
        return
    assert s.is_success()
    v = pl.filter(st, p, all_nodes(c))
    assert [v.at(k) for k in range(len(NODES))] == want


@pytest.mark.parametrize(
    ("objects", "volumes", "want"),
    [
        ([], [], (Code.Skip, ())),
        ([], [{"name": "e", "emptyDir": {}}], (Code.Skip, ())),
        ([], [claim_vol("x")], (Code.UnschedulableAndUnresolvable, ('persistentvolumeclaim "x" not found',))),
        ([], [claim_vol("")], (Code.UnschedulableAndUnresolvable, ("PersistentVolumeClaim had no name",))),
        (
            [pvc("x", volume="gone", bound=True)],
            [claim_vol("x")],
            (Code.UnschedulableAndUnresolvable, ('persistentvolume "gone" not found',)),
        ),
        (
            [pvc("x")],
            [claim_vol("x")],
            (
                Code.UnschedulableAndUnresolvable,
                ("PersistentVolumeClaim had no pv name and storageClass name",),
            ),
        ),
        (
            [pvc("x", sc="nope")],
            [claim_vol("x")],
            (Code.UnschedulableAndUnresolvable, ('storageclass.storage.k8s.io "nope" not found',)),
        ),
        # Unbound claim of a WaitForFirstConsumer class: nothing to check yet.
        ([pvc("x", sc="wffc"), storage_class("wffc")], [claim_vol("x")], (Code.Skip, ())),
        # Unbound claim of an Immediate class (also the API default): should have been bound.
        (
            [pvc("x", sc="imm"), storage_class("imm", mode="Immediate")],
            [claim_vol("x")],
            (Code.UnschedulableAndUnresolvable, ("PersistentVolume had no name",)),
        ),
        (
            [pvc("x", sc="imm"), storage_class("imm", mode=None)],
            [claim_vol("x")],
            (Code.UnschedulableAndUnresolvable, ("PersistentVolume had no name",)),
        ),
        # A bound PV without topology labels: Skip.
        ([pvc("x", volume="v", bound=True), pv("v")], [claim_vol("x")], (Code.Skip, ())),
    ],
)
def test_pre_filter(
    objects: list[dict[str, Any]], volumes: list[dict[str, Any]], want: tuple[Code, tuple[str, ...]]
) -> None:
    c = cluster(NODES, [], objects)
    _, s = VolumeZone({}, Handle(c)).pre_filter(CycleState(c), Pod(pod("p", volumes=volumes)))
    assert (s.code, s.reasons) == want


def test_filter_without_pre_filter_state_computes_topologies() -> None:
    c = cluster(NODES, [], [pv("vol", labels={GA_ZONE: "us-1b"}), bound("claim", "vol")])
    pl = VolumeZone({}, Handle(c))
    v = pl.filter(CycleState(c), Pod(pod("p", volumes=[claim_vol("claim")])), all_nodes(c))
    assert [v.at(k) for k in range(len(NODES))] == [NO, OK, NO, OK, NO]
