"""TaintToleration (framework/plugins/tainttoleration/taint_toleration.go), cases after upstream's
taint_toleration_test.go."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from schedviz.engine.framework import Code, CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.tainttoleration import TaintToleration
from tests.engine.builders import all_nodes, cluster, node, pod

REASON = "node(s) had untolerated taint(s)"


def taint(key: str, value: str, effect: str) -> dict[str, Any]:
    return {"key": key, "value": value, "effect": effect}


def run_filter(
    tolerations: list[dict[str, Any]], taints: list[list[dict[str, Any]]], gate: bool = False
) -> list[tuple[Code, tuple[str, ...]]]:
    c = cluster([node(f"n{i}", taints=t) for i, t in enumerate(taints)])
    h = Handle(c, {"TaintTolerationComparisonOperators": gate})
    v = TaintToleration({}, h).filter(CycleState(c), Pod(pod("p", tolerations=tolerations)), all_nodes(c))
    return [v.at(k) for k in range(len(v))]


NS = "NoSchedule"
PNS = "PreferNoSchedule"
NE = "NoExecute"

FILTER_CASES: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]], bool, bool]] = [
    # (case, tolerations, node taints, comparison-operators gate, fits)
    ("no tolerations vs NoSchedule taint", [], [taint("dedicated", "user1", NS)], False, False),
    (
        "matching toleration, operator omitted",
        [{"key": "dedicated", "value": "user1", "effect": NS}],
        [taint("dedicated", "user1", NS)],
        False,
        True,
    ),
    (
        "Equal with another value",
        [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": NS}],
        [taint("dedicated", "user1", NS)],
        False,
        False,
    ),
    (
        "Exists tolerates any value",
        [{"key": "foo", "operator": "Exists", "effect": NS}],
        [taint("foo", "bar", NS)],
        False,
        True,
    ),
    (
        "all of several taints tolerated",
        [
            {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": NS},
            {"key": "foo", "operator": "Exists", "effect": NS},
        ],
        [taint("dedicated", "user2", NS), taint("foo", "bar", NS)],
        False,
        True,
    ),
    (
        "one of several taints untolerated",
        [{"key": "foo", "operator": "Exists", "effect": NS}],
        [taint("dedicated", "user2", NS), taint("foo", "bar", NS)],
        False,
        False,
    ),
    (
        "key and value match but effect differs",
        [{"key": "foo", "operator": "Equal", "value": "bar", "effect": PNS}],
        [taint("foo", "bar", NS)],
        False,
        False,
    ),
    (
        "empty toleration effect matches NoSchedule",
        [{"key": "foo", "operator": "Equal", "value": "bar"}],
        [taint("foo", "bar", NS)],
        False,
        True,
    ),
    (
        "PreferNoSchedule taints never filter",
        [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": NS}],
        [taint("dedicated", "user1", PNS)],
        False,
        True,
    ),
    ("PreferNoSchedule, no tolerations", [], [taint("dedicated", "user1", PNS)], False, True),
    ("NoExecute taints filter", [], [taint("evict", "", NE)], False, False),
    ("no taints", [], [], False, True),
    (
        "Gt below the threshold",
        [{"key": "prio", "operator": "Gt", "value": "950", "effect": NS}],
        [taint("prio", "800", NS)],
        True,
        False,
    ),
    (
        "Gt above the threshold",
        [{"key": "sla", "operator": "Gt", "value": "750", "effect": NS}],
        [taint("sla", "950", NS)],
        True,
        True,
    ),
    (
        "Lt above the threshold",
        [{"key": "prio", "operator": "Lt", "value": "800", "effect": NS}],
        [taint("prio", "950", NS)],
        True,
        False,
    ),
    (
        "Lt below the threshold",
        [{"key": "sla", "operator": "Lt", "value": "950", "effect": NS}],
        [taint("sla", "800", NS)],
        True,
        True,
    ),
    (
        "Gt with a non-numeric taint value",
        [{"key": "sla", "operator": "Gt", "value": "950", "effect": NS}],
        [taint("sla", "high", NS)],
        True,
        False,
    ),
    (
        "Gt with the gate off",
        [{"key": "sla", "operator": "Gt", "value": "750", "effect": NS}],
        [taint("sla", "950", NS)],
        False,
        False,
    ),
    (
        "Lt with the gate off",
        [{"key": "sla", "operator": "Lt", "value": "950", "effect": NS}],
        [taint("sla", "800", NS)],
        False,
        False,
    ),
    (
        "gate off: Equal honoured, Gt unused",
        [
            {"key": "dedicated", "operator": "Equal", "value": "user1", "effect": NS},
            {"key": "sla", "operator": "Gt", "value": "750", "effect": NS},
        ],
        [taint("dedicated", "user1", NS)],
        False,
        True,
    ),
    (
        "gate off: the Gt toleration was needed",
        [
            {"key": "dedicated", "operator": "Equal", "value": "user1", "effect": NS},
            {"key": "sla", "operator": "Gt", "value": "750", "effect": NS},
        ],
        [taint("dedicated", "user1", NS), taint("sla", "950", NS)],
        False,
        False,
    ),
]


@pytest.mark.parametrize(
    ("case", "tolerations", "taints", "gate", "fits"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES]
)
def test_filter(
    case: str, tolerations: list[dict[str, Any]], taints: list[dict[str, Any]], gate: bool, fits: bool
) -> None:
    got = run_filter(tolerations, [taints], gate)
    want = (Code.Success, ()) if fits else (Code.UnschedulableAndUnresolvable, (REASON,))
    assert got == [want]


def test_filter_batch_of_nodes_and_subset() -> None:
    c = cluster(
        [
            node("a", taints=[taint("x", "1", NS)]),
            node("b"),
            node("c", taints=[taint("y", "1", NE)]),
            node("d", taints=[taint("x", "1", NS)]),
        ]
    )
    pl = TaintToleration({}, Handle(c))
    p = Pod(pod("p", tolerations=[{"key": "x", "operator": "Exists"}]))
    v = pl.filter(CycleState(c), p, np.asarray([3, 2, 1], dtype=np.int64))
    assert v.codes.tolist() == [0, int(Code.UnschedulableAndUnresolvable), 0]


def scores(
    tolerations: list[dict[str, Any]], taints: list[list[dict[str, Any]]], gate: bool = False
) -> tuple[list[int], list[int]]:
    c = cluster([node(f"n{i}", taints=t) for i, t in enumerate(taints)])
    pl = TaintToleration({}, Handle(c, {"TaintTolerationComparisonOperators": gate}))
    st = CycleState(c)
    p = Pod(pod("p", tolerations=tolerations))
    nodes = all_nodes(c)
    assert pl.pre_score(st, p, nodes).is_success()
    raw = pl.score(st, p, nodes)
    return raw.tolist(), pl.normalize_score(st, p, nodes, raw.copy()).tolist()


SCORE_CASES: list[
    tuple[str, list[dict[str, Any]], list[list[dict[str, Any]]], bool, list[int], list[int]]
] = [
    # (case, tolerations, taints per node, gate, raw counts, normalized)
    (
        "tolerated node beats untolerated",
        [{"key": "foo", "operator": "Equal", "value": "bar", "effect": PNS}],
        [[taint("foo", "bar", PNS)], [taint("foo", "blah", PNS)]],
        False,
        [0, 1],
        [100, 0],
    ),
    (
        "number of tolerated taints does not matter",
        [
            {"key": "cpu-type", "operator": "Equal", "value": "arm64", "effect": PNS},
            {"key": "disk-type", "operator": "Equal", "value": "ssd", "effect": PNS},
        ],
        [
            [],
            [taint("cpu-type", "arm64", PNS)],
            [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)],
        ],
        False,
        [0, 0, 0],
        [100, 100, 100],
    ),
    (
        "more untolerated taints, lower score",
        [{"key": "foo", "operator": "Equal", "value": "bar", "effect": PNS}],
        [
            [],
            [taint("cpu-type", "arm64", PNS)],
            [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)],
        ],
        False,
        [0, 1, 2],
        [100, 50, 0],
    ),
    (
        "only PreferNoSchedule taints and matching tolerations count",
        [
            {"key": "cpu-type", "operator": "Equal", "value": "arm64", "effect": NS},
            {"key": "disk-type", "operator": "Equal", "value": "ssd", "effect": NS},
        ],
        [
            [],
            [taint("cpu-type", "arm64", NS)],
            [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)],
        ],
        False,
        [0, 0, 2],
        [100, 100, 0],
    ),
    ("no tolerations", [], [[], [taint("cpu-type", "arm64", PNS)]], False, [0, 1], [100, 0]),
    (
        "nothing untolerated anywhere: all get max",
        [],
        [[], [taint("hard", "", NS)]],
        False,
        [0, 0],
        [100, 100],
    ),
    (
        "Gt prefers the high SLA node",
        [{"key": "sla", "operator": "Gt", "value": "950", "effect": PNS}],
        [[taint("sla", "800", PNS)], [taint("sla", "999", PNS)]],
        True,
        [1, 0],
        [0, 100],
    ),
    (
        "Lt prefers the low SLA node",
        [{"key": "sla", "operator": "Lt", "value": "800", "effect": PNS}],
        [[taint("sla", "950", PNS)], [taint("sla", "700", PNS)]],
        True,
        [1, 0],
        [0, 100],
    ),
    (
        "non-numeric taint value is simply untolerated",
        [{"key": "sla", "operator": "Gt", "value": "950", "effect": PNS}],
        [[], [taint("sla", "high", PNS)]],
        True,
        [0, 1],
        [100, 0],
    ),
    (
        "integer division: 3 untolerated max, 1 and 2",
        [],
        [
            [taint("a", "", PNS)],
            [taint("a", "", PNS), taint("b", "", PNS)],
            [taint("a", "", PNS), taint("b", "", PNS), taint("c", "", PNS)],
        ],
        False,
        [1, 2, 3],
        # 100 - 100*1/3 = 100 - 33; 100 - 100*2/3 = 100 - 66
        [67, 34, 0],
    ),
]


@pytest.mark.parametrize(
    ("case", "tolerations", "taints", "gate", "raw", "normalized"),
    SCORE_CASES,
    ids=[c[0] for c in SCORE_CASES],
)
def test_score(
    case: str,
    tolerations: list[dict[str, Any]],
    taints: list[list[dict[str, Any]]],
    gate: bool,
    raw: list[int],
    normalized: list[int],
) -> None:
    assert scores(tolerations, taints, gate) == (raw, normalized)


def test_pre_score_keeps_prefer_no_schedule_tolerations() -> None:
    c = cluster([node("n")])
    pl = TaintToleration({}, Handle(c))
    st = CycleState(c)
    p = Pod(
        pod(
            "p",
            tolerations=[
                {"key": "a", "operator": "Exists", "effect": NS},
                {"key": "b", "operator": "Exists", "effect": PNS},
                {"key": "c", "operator": "Exists"},
            ],
        )
    )
    assert pl.pre_score(st, p, all_nodes(c)).is_success()
    assert [t.key for t in st.read("PreScoreTaintToleration")] == ["b", "c"]
