"""DefaultPreemption (framework/plugins/defaultpreemption/default_preemption.go, framework/preemption/).

Scenarios follow upstream's default_preemption_test.go (TestPostFilter, TestDryRunPreemption,
TestSelectBestCandidate, TestPreempt); expected victims and nodes are worked out from upstream's
rules: evict every lower-priority pod, reprieve the most important first (PDB-violating ones before
the others), then pick the node with fewest PDB violations, lowest top victim priority, smallest
(shifted) priority sum, fewest victims, latest start of the top victims.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from schedviz.engine.cluster import ClusterState
from schedviz.engine.config import PluginRef, ProfileConfig
from schedviz.engine.framework import (
    Code,
    CycleState,
    Handle,
    NodeToStatus,
    PostFilterResult,
    Status,
    Verdicts,
)
from schedviz.engine.labels import LabelSelector
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.defaultpreemption import (
    PDB,
    DefaultPreemption,
    go_sort_slice,
    split_by_pdb_violation,
)
from schedviz.engine.runtime import registry
from schedviz.engine.runtime.framework import Framework
from tests.engine.builders import cluster, node, pod

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


def rpod(
    name: str,
    node_name: str | None = None,
    prio: int | None = None,
    req: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    start: int | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A pod; ``start`` is status.startTime in seconds after the epoch."""
    req = req or {}
    p = pod(
        name,
        node_name=node_name,
        priority=prio,
        labels=labels,
        cpu=req.get("cpu"),
        memory=req.get("memory"),
        **spec,
    )
    if start is not None:
        p["status"] = {"startTime": f"1970-01-01T00:{start // 60:02d}:{start % 60:02d}Z"}
    return p


def pdb(
    name: str, match: dict[str, str], allowed: int, disrupted: tuple[str, ...] = (), ns: str = "default"
) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": match}},
        "status": {
            "disruptionsAllowed": allowed,
            "disruptedPods": {d: "2026-01-01T00:00:00Z" for d in disrupted},
        },
    }


def plugin_for(
    c: ClusterState, filters: tuple[str, ...] = ("NodeResourcesFit",), args: dict[str, Any] | None = None
) -> DefaultPreemption:
    """DefaultPreemption inside a profile whose PreFilter/Filter plugins are ``filters``."""
    pre = [PluginRef(n) for n in filters if "preFilter" in registry.points_of(registry.plugin_class(n))]
    profile = ProfileConfig(
        "default-scheduler",
        None,
        {
            "preFilter": pre,
            "filter": [PluginRef(n) for n in filters],
            "postFilter": [PluginRef("DefaultPreemption")],
        },
        {"DefaultPreemption": args or {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}},
    )
    fw = Framework(profile, Handle(c))
    pl = fw.instances["DefaultPreemption"]
    assert isinstance(pl, DefaultPreemption)
    return pl


def statuses_for(
    c: ClusterState, codes: dict[str, Code], absent: Code = Code.UnschedulableAndUnresolvable
) -> NodeToStatus:
    return NodeToStatus({c.index[n]: Status(code) for n, code in codes.items()}, Status(absent))


def all_unschedulable(c: ClusterState) -> NodeToStatus:
    return statuses_for(c, {n: Code.Unschedulable for n in c.names})


def run(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    preemptor: dict[str, Any],
    statuses: dict[str, Code] | None = None,
    objects: list[dict[str, Any]] = (),  # type: ignore[assignment]
    filters: tuple[str, ...] = ("NodeResourcesFit",),
    args: dict[str, Any] | None = None,
) -> tuple[PostFilterResult | None, Status, ClusterState]:
    c = cluster(nodes, pods, objects)
    pl = plugin_for(c, filters, args)
    m = statuses_for(c, statuses) if statuses is not None else all_unschedulable(c)
    result, status = pl.post_filter(CycleState(c), Pod(preemptor, 99), m)
    return result, status, c


ONE_POD = {"cpu": "0", "memory": "0", "pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400", "pods": "110"}
VL_NODE = {"cpu": "500m", "memory": "500", "pods": "110"}


def n(name: str, res: dict[str, str] = VL_NODE, **kw: Any) -> dict[str, Any]:
    return node(name, cpu=res["cpu"], memory=res["memory"], pods=res["pods"], **kw)


# ----- TestPostFilter ------------------------------------------------------------------------
POST_FILTER_CASES: list[
    tuple[str, list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], dict[str, Code], str, str]
] = [
    (
        "pod with higher priority can be made schedulable",
        [n("node1", ONE_POD)],
        [rpod("p1", "node1")],
        rpod("p", prio=HIGH),
        {"node1": Code.Unschedulable},
        "node1",
        "",
    ),
    (
        "pod with tied priority is still unschedulable",
        [n("node1", ONE_POD)],
        [rpod("p1", "node1")],
        rpod("p"),
        {"node1": Code.Unschedulable},
        "",
        f"preemption: 0/1 nodes are available: 1 {NO_VICTIMS}.",
    ),
    (
        "preemption should respect filteredNodesStatuses",
        [n("node1", ONE_POD)],
        [rpod("p1", "node1")],
        rpod("p", prio=HIGH),
        {"node1": Code.UnschedulableAndUnresolvable},
        "",
        f"preemption: 0/1 nodes are available: 1 {NOT_HELPFUL}.",
    ),
    (
        "absent status means UnschedulableAndUnresolvable",
        [n("node1", ONE_POD)],
        [rpod("p1", "node1")],
        rpod("p", prio=HIGH),
        {},
        "",
        f"preemption: 0/1 nodes are available: 1 {NOT_HELPFUL}.",
    ),
    (
        "pod can be made schedulable on one node",
        [n("node1", ONE_POD), n("node2", ONE_POD)],
        [rpod("p1", "node1", HIGH), rpod("p2", "node2", LOW)],
        rpod("p", prio=MID),
        {"node1": Code.Unschedulable, "node2": Code.Unschedulable},
        "node2",
        "",
    ),
    (
        "no enough resource after removing low priority pods",
        [n("node1", NODE_RES), n("node2", NODE_RES)],
        [rpod("p1", "node1"), rpod("p2", "node2")],
        rpod("p", prio=HIGH, req=LARGE),
        {"node1": Code.Unschedulable, "node2": Code.Unschedulable},
        "",
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
    ),
    (
        "mixed reasons: no lower priority pod and not enough CPU",
        [n("node1", ONE_POD), n("node2", NODE_RES), n("node3", ONE_POD)],
        [rpod("p1", "node1", HIGH), rpod("p2", "node2"), rpod("p3", "node3", HIGH)],
        rpod("p", prio=HIGH, req=LARGE),
        {"node1": Code.Unschedulable, "node2": Code.Unschedulable, "node3": Code.Unschedulable},
        "",
        f"preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 {NO_VICTIMS}.",
    ),
    (
        "mixed reasons: 2 unresolvable nodes and 2 without enough CPU",
        [n("node1", NODE_RES), n("node2", NODE_RES), n("node3", NODE_RES), n("node4", NODE_RES)],
        [rpod("p1", "node1"), rpod("p2", "node2")],
        rpod("p", prio=HIGH, req=LARGE),
        {
            "node1": Code.Unschedulable,
            "node2": Code.Unschedulable,
            "node4": Code.UnschedulableAndUnresolvable,
        },
        "",
        f"preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 {NOT_HELPFUL}.",
    ),
    (
        "preemptionPolicy Never",
        [n("node1", ONE_POD)],
        [rpod("p1", "node1")],
        rpod("p", prio=HIGH, preemptionPolicy="Never"),
        {"node1": Code.Unschedulable},
        "-",
        "preemption: not eligible due to preemptionPolicy=Never.",
    ),
]


@pytest.mark.parametrize(
    ("case", "nodes", "pods", "preemptor", "codes", "nominated", "message"),
    POST_FILTER_CASES,
    ids=[c[0] for c in POST_FILTER_CASES],
)
def test_post_filter(
    case: str,
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    preemptor: dict[str, Any],
    codes: dict[str, Code],
    nominated: str,
    message: str,
) -> None:
    result, status, _ = run(nodes, pods, preemptor, codes)
    if nominated == "-":
        assert result is None
    else:
        assert result is not None
        assert result.nominated_node_name == nominated
    assert status.message() == message
    assert status.code == (Code.Success if nominated not in ("", "-") else Code.Unschedulable)


def test_min_highest_priority_node_with_pdbs() -> None:
    # node1: p1 (high, PDB with room) and p2 (low, PDB with none) -> both go, 1 violation.
    # node2: p3 (mid, PDB with none) -> 1 violation, but its top victim is only mid: node2 wins.
    viol = {"pdb": "violating"}
    fine = {"pdb": "non-violating"}
    result, status, _ = run(
        [n("node1", ONE_POD), n("node2", ONE_POD)],
        [
            rpod("p1", "node1", HIGH, labels=fine),
            rpod("p2", "node1", LOW, labels=viol),
            rpod("p3", "node2", MID, labels=viol),
        ],
        rpod("p", prio=VERY_HIGH),
        objects=[pdb("violating-pdb", viol, 0), pdb("non-violating-pdb", fine, 2**31 - 1)],
    )
    assert status.is_success() and status.message() == ""
    assert result is not None and result.nominated_node_name == "node2"
    assert result.details["victims"] == ["default/p3"]
    by_node = {c["node"]: c for c in result.details["candidates"]}
    assert by_node["node1"]["victims"] == ["default/p1", "default/p2"]
    assert by_node["node1"]["pdbViolations"] == 1
    assert by_node["node1"]["result"] == "higher highest-priority victim"
    assert by_node["node2"]["result"] == "selected"


# ----- TestDryRunPreemption --------------------------------------------------------------------
def candidates_of(result: PostFilterResult | None) -> dict[str, tuple[list[str], int]]:
    assert result is not None
    return {c["node"]: (sorted(c["victims"]), c["pdbViolations"]) for c in result.details["candidates"]}


def test_lower_priority_small_pod_stays() -> None:
    result, _, _ = run(
        [n("node1"), n("node2")],
        [
            rpod("p1.1", "node1", LOW, SMALL),
            rpod("p1.2", "node1", MID, LARGE),
            rpod("p2", "node2", MID, LARGE),
        ],
        rpod("p", prio=HIGH, req=LARGE),
    )
    assert candidates_of(result) == {"node1": (["default/p1.2"], 0), "node2": (["default/p2"], 0)}


def test_mixed_priority_pods_are_preempted() -> None:
    result, _, _ = run(
        [n("node1"), n("node2")],
        [
            rpod("p1.1", "node1", MID, SMALL),
            rpod("p1.2", "node1", LOW, SMALL),
            rpod("p1.3", "node1", MID, MEDIUM),
            rpod("p1.4", "node1", HIGH, SMALL),
            rpod("p2", "node2", HIGH, LARGE),
        ],
        rpod("p", prio=HIGH, req=LARGE),
    )
    assert candidates_of(result) == {"node1": (["default/p1.2", "default/p1.3"], 0)}
    assert result is not None and result.nominated_node_name == "node1"
    # Neither p1.1 nor p1.3 has started: each "now" is later than the previous one, so the
    # insertion sort moves p1.3 ahead of p1.1 and it is reprieved first, and evicted.
    assert result.details["victims"] == ["default/p1.3", "default/p1.2"]


def test_equal_priority_later_start_time_is_preempted() -> None:
    result, _, _ = run(
        [n("node1"), n("node2")],
        [
            rpod("p1.1", "node1", LOW, SMALL, start=5),
            rpod("p1.2", "node1", LOW, SMALL, start=4),
            rpod("p1.3", "node1", MID, MEDIUM, start=3),
            rpod("p1.4", "node1", HIGH, SMALL, start=2),
            rpod("p2", "node2", HIGH, LARGE, start=1),
        ],
        rpod("p", prio=HIGH, req=LARGE),
    )
    assert result is not None
    assert result.details["victims"] == ["default/p1.3", "default/p1.1"]
    assert [c["node"] for c in result.details["candidates"]] == ["node1"]


def test_no_victims_when_running_pods_are_more_important() -> None:
    result, status, _ = run(
        [n("node1"), n("node2")],
        [rpod("p1", "node1", MID, LARGE), rpod("p2", "node2", MID, LARGE)],
        rpod("p", prio=LOW, req=LARGE),
    )
    assert status.message() == f"preemption: 0/2 nodes are available: 2 {NO_VICTIMS}."
    assert result is not None and result.nominated_node_name == ""
    assert result.details["candidates"] == [] and result.details["victims"] == []


@pytest.mark.parametrize(
    ("case", "disrupted", "pods", "want_victims", "want_violations"),
    [
        ("same PDB violated once", [], ["p1.1", "p1.2"], ["p1.1", "p1.2"], 1),
        ("disrupted pod elsewhere does not count", ["p2"], ["p1.1", "p1.2"], ["p1.1", "p1.2"], 1),
        ("victim already in disruptedPods is not charged", ["p1.2"], ["p1.1", "p1.2"], ["p1.1", "p1.2"], 0),
        (
            "disrupted victim is non-violating",
            ["p1.3"],
            ["p1.1", "p1.2", "p1.3"],
            ["p1.1", "p1.2", "p1.3"],
            1,
        ),
    ],
)
def test_pdb_violations(
    case: str, disrupted: list[str], pods: list[str], want_victims: list[str], want_violations: int
) -> None:
    foo = {"app": "foo"}
    result, status, _ = run(
        [n("node1")],
        [rpod(name, "node1", MID, MEDIUM, labels=foo) for name in pods],
        rpod("p", prio=HIGH, req=VERY_LARGE),
        objects=[pdb("pdb", foo, 1, tuple(disrupted))],
    )
    assert status.is_success()
    assert candidates_of(result) == {"node1": ([f"default/{v}" for v in want_victims], want_violations)}


def test_candidate_limit_stops_the_search() -> None:
    # 5 * 40% = 2 candidates wanted: the search stops after node1 and node2 (offset 0).
    nodes = [n(f"node{i}") for i in range(1, 6)]
    pods = [rpod(f"p{i}", f"node{i}", MID, LARGE) for i in range(1, 6)]
    result, _, _ = run(
        nodes,
        pods,
        rpod("p", prio=HIGH, req=LARGE),
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
    )
    assert result is not None
    assert [c["node"] for c in result.details["candidates"]] == ["node1", "node2"]
    assert result.details["numCandidates"] == 2 and result.details["potentialNodes"] == 5


def test_candidate_limit_skips_nodes_without_victims() -> None:
    nodes = [n(f"node{i}") for i in range(1, 6)]
    prios = [MID, VERY_HIGH, MID, MID, VERY_HIGH]
    pods = [rpod(f"p{i}", f"node{i}", prios[i - 1], LARGE) for i in range(1, 6)]
    result, _, _ = run(
        nodes,
        pods,
        rpod("p", prio=HIGH, req=LARGE),
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
    )
    assert result is not None
    assert [c["node"] for c in result.details["candidates"]] == ["node1", "node3"]


def test_search_goes_past_the_limit_until_a_non_violating_candidate() -> None:
    # Wanted: 2. node1 and node2 violate the PDB (that list is then full), node3 does not: stop.
    foo = {"app": "foo"}
    nodes = [n(f"node{i}") for i in range(1, 6)]
    labels = [foo, foo, None, None, foo]
    pods = [rpod(f"p{i}", f"node{i}", MID, LARGE, labels=labels[i - 1]) for i in range(1, 6)]
    result, _, _ = run(
        nodes,
        pods,
        rpod("p", prio=HIGH, req=LARGE),
        objects=[pdb("pdb", foo, 0)],
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
    )
    assert result is not None
    got = [(c["node"], c["pdbViolations"]) for c in result.details["candidates"]]
    assert got == [("node3", 0), ("node1", 1), ("node2", 1)]
    assert result.nominated_node_name == "node3"


def test_violating_list_is_capped() -> None:
    # Wanted: 1. node1 violates (list full), node2 violating is dropped, node3 is fine: stop.
    foo = {"app": "foo"}
    nodes = [n(f"node{i}") for i in range(1, 5)]
    labels = [foo, foo, None, None]
    pods = [rpod(f"p{i}", f"node{i}", MID, LARGE, labels=labels[i - 1]) for i in range(1, 5)]
    result, _, _ = run(
        nodes,
        pods,
        rpod("p", prio=HIGH, req=LARGE),
        objects=[pdb("pdb", foo, 0)],
        args={"minCandidateNodesPercentage": 1, "minCandidateNodesAbsolute": 1},
    )
    assert result is not None
    assert [c["node"] for c in result.details["candidates"]] == ["node3", "node1"]


@pytest.mark.parametrize(
    ("pct", "absolute", "num_nodes", "want"),
    [
        (10, 100, 50, 50),
        (10, 100, 5000, 500),
        (10, 100, 500, 100),
        (40, 1, 5, 2),
        (0, 3, 10, 3),
        (100, 0, 7, 7),
    ],
)
def test_num_candidates(pct: int, absolute: int, num_nodes: int, want: int) -> None:
    pl = DefaultPreemption(
        {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}, Handle(cluster([]))
    )
    assert pl.num_candidates(num_nodes) == want


# ----- TestSelectBestCandidate -----------------------------------------------------------------
SELECT_CASES: list[tuple[str, list[tuple[str, str, int, dict[str, str], int]], str]] = [
    (
        "node with min highest priority pod is picked",
        [
            ("p1.1", "node1", MID, MEDIUM, 0),
            ("p1.2", "node1", MID, LARGE, 0),
            ("p2.1", "node2", MID, MEDIUM, 0),
            ("p2.2", "node2", LOW, MEDIUM, 0),
            ("p3.1", "node3", LOW, MEDIUM, 0),
            ("p3.2", "node3", LOW, MEDIUM, 0),
        ],
        "node3",
    ),
    (
        "when highest priorities are the same, minimum sum of priorities is picked",
        [
            ("p1.1", "node1", MID, MEDIUM, 0),
            ("p1.2", "node1", MID, LARGE, 0),
            ("p2.1", "node2", MID, LARGE, 0),
            ("p2.2", "node2", LOW, MEDIUM, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", MID, MEDIUM, 0),
        ],
        "node2",
    ),
    (
        "when highest priority and sum are the same, minimum number of pods is picked",
        [
            ("p1.1", "node1", MID, SMALL, 0),
            ("p1.2", "node1", NEG, SMALL, 0),
            ("p1.3", "node1", MID, SMALL, 0),
            ("p1.4", "node1", NEG, SMALL, 0),
            ("p2.1", "node2", MID, LARGE, 0),
            ("p2.2", "node2", NEG, MEDIUM, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", NEG, SMALL, 0),
            ("p3.3", "node3", LOW, SMALL, 0),
        ],
        "node2",
    ),
    (
        "sum of adjusted priorities is considered",
        [
            ("p1.1", "node1", MID, SMALL, 0),
            ("p1.2", "node1", NEG, SMALL, 0),
            ("p1.3", "node1", NEG, SMALL, 0),
            ("p2.1", "node2", MID, LARGE, 0),
            ("p2.2", "node2", NEG, MEDIUM, 0),
            ("p3.1", "node3", MID, MEDIUM, 0),
            ("p3.2", "node3", NEG, SMALL, 0),
            ("p3.3", "node3", LOW, SMALL, 0),
        ],
        "node2",
    ),
    (
        "same priority and number of victims, latest start time per node wins",
        [
            ("p1.1", "node1", MID, MEDIUM, 2),
            ("p1.2", "node1", MID, MEDIUM, 2),
            ("p2.1", "node2", MID, MEDIUM, 3),
            ("p2.2", "node2", MID, MEDIUM, 3),
            ("p3.1", "node3", MID, MEDIUM, 1),
            ("p3.2", "node3", MID, MEDIUM, 1),
        ],
        "node2",
    ),
    (
        "same priority and number of victims, earliest start on each node compared",
        [
            ("p1.1", "node1", MID, MEDIUM, 4),
            ("p1.2", "node1", MID, MEDIUM, 2),
            ("p2.1", "node2", MID, MEDIUM, 5),
            ("p2.2", "node2", MID, MEDIUM, 1),
            ("p3.1", "node3", MID, MEDIUM, 3),
            ("p3.2", "node3", MID, MEDIUM, 6),
        ],
        "node3",
    ),
    (
        "only the start times of the highest-priority victims count",
        [
            ("p1.1", "node1", LOW, MEDIUM, 4),
            ("p1.2", "node1", MID, MEDIUM, 2),
            ("p2.1", "node2", MID, MEDIUM, 6),
            ("p2.2", "node2", LOW, MEDIUM, 1),
            ("p3.1", "node3", LOW, MEDIUM, 3),
            ("p3.2", "node3", MID, MEDIUM, 5),
        ],
        "node2",
    ),
]


@pytest.mark.parametrize(("case", "pods", "want"), SELECT_CASES, ids=[c[0] for c in SELECT_CASES])
def test_select_best_candidate(
    case: str, pods: list[tuple[str, str, int, dict[str, str], int]], want: str
) -> None:
    nodes = sorted({p[1] for p in pods})
    result, status, _ = run(
        [n(name) for name in nodes],
        [rpod(name, nd, prio, req, start=start) for name, nd, prio, req, start in pods],
        rpod("p", prio=HIGH, req=VERY_LARGE),
    )
    assert status.is_success()
    assert result is not None and result.nominated_node_name == want


def test_lost_reasons_are_recorded() -> None:
    result, _, _ = run(
        [n("node1"), n("node2"), n("node3")],
        [
            rpod("p1.1", "node1", MID, MEDIUM, start=1),
            rpod("p1.2", "node1", MID, LARGE, start=1),
            rpod("p2.1", "node2", MID, LARGE, start=1),
            rpod("p2.2", "node2", LOW, MEDIUM, start=1),
            rpod("p3.1", "node3", HIGH - 1, VERY_LARGE, start=1),
        ],
        rpod("p", prio=HIGH, req=VERY_LARGE),
    )
    assert result is not None
    outcome = {c["node"]: c["result"] for c in result.details["candidates"]}
    assert outcome == {
        "node1": "larger sum of victim priorities",
        "node2": "selected",
        "node3": "higher highest-priority victim",
    }


def test_full_tie_picks_first_candidate() -> None:
    result, _, _ = run(
        [n("node1"), n("node2")],
        [rpod("p1", "node1", MID, LARGE, start=7), rpod("p2", "node2", MID, LARGE, start=7)],
        rpod("p", prio=HIGH, req=LARGE),
    )
    assert result is not None and result.nominated_node_name == "node1"
    assert [c["result"] for c in result.details["candidates"]] == [
        "selected",
        "tied on every criterion; the first candidate was picked",
    ]


def test_unstarted_victims_count_as_started_now() -> None:
    # Running pods without status.startTime start "now", i.e. later than any recorded start, and
    # each look-up later than the previous one: the node looked at last wins the start-time round.
    result, _, _ = run(
        [n("node1"), n("node2"), n("node3")],
        [
            rpod("p1", "node1", MID, LARGE),
            rpod("p2", "node2", MID, LARGE),
            rpod("p3", "node3", MID, LARGE, start=9),
        ],
        rpod("p", prio=HIGH, req=LARGE),
    )
    assert result is not None and result.nominated_node_name == "node2"


# ----- TestPreempt (extra plugins) -------------------------------------------------------------
def test_preemption_resolves_topology_spread() -> None:
    def zn(name: str, zone: str) -> dict[str, Any]:
        return n(name, labels={"zone": zone, "hostname": name})

    spread: dict[str, Any] = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
            }
            for key in ("zone", "hostname")
        ]
    }
    foo = {"foo": ""}
    result, status, _ = run(
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        [
            rpod("p-a1", "node-a", HIGH, labels=foo),
            rpod("p-a2", "node-a", HIGH, labels=foo),
            rpod("p-b1", "node-b", LOW, labels=foo),
            rpod("p-x1", "node-x", HIGH, labels=foo),
            rpod("p-x2", "node-x", HIGH, labels=foo),
        ],
        rpod("p", prio=HIGH, labels=foo, **spread),
        filters=("PodTopologySpread",),
    )
    assert status.is_success()
    assert result is not None and result.nominated_node_name == "node-b"
    assert result.details["victims"] == ["default/p-b1"]


def test_cluster_is_restored() -> None:
    nodes = [n("node1"), n("node2")]
    pods = [
        rpod("a", "node1", LOW, SMALL),
        rpod("b", "node1", MID, MEDIUM),
        rpod("c", "node1", LOW, SMALL),
        rpod("d", "node2", HIGH, LARGE),
    ]
    c = cluster(nodes, pods)
    before = [[p.key for p in ps] for ps in c.pods_on]
    cpu_before = c.requested("cpu").copy()
    pl = plugin_for(c)
    result, _ = pl.post_filter(
        CycleState(c), Pod(rpod("p", prio=HIGH, req=VERY_LARGE), 9), all_unschedulable(c)
    )
    assert result is not None and result.nominated_node_name == "node1"
    assert [[p.key for p in ps] for ps in c.pods_on] == before
    assert c.requested("cpu").tolist() == cpu_before.tolist()
    assert {p.key: c.node_of(p) for p in c.assigned_pods()} == {
        "default/a": 0,
        "default/b": 0,
        "default/c": 0,
        "default/d": 1,
    }


class _Boom:
    """A filter that fails with an error on nodes labelled error=true."""

    name = "BoomFilter"

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle

    def filter(self, state: CycleState, pod: Pod, nodes: Any) -> Verdicts:
        b = Verdicts.build(len(nodes))
        for k, i in enumerate(nodes.tolist()):
            if self.handle.cluster.nodes[i].labels.get("error") == "true":
                b.reject(k, Code.Error, f"failed to check pod: {pod.name}")
        return b.done()


registry.register(_Boom)


def test_errors_are_reported_only_without_candidates() -> None:
    # Only the erroring node: the error is the result.
    result, status, _ = run(
        [n("node1", labels={"error": "true"})],
        [rpod("p1", "node1")],
        rpod("p", prio=HIGH, req=LARGE),
        filters=("NodeResourcesFit", "BoomFilter"),
    )
    assert result is None
    assert status.code == Code.Error
    assert status.message() == 'preemption: running "BoomFilter" filter plugin: failed to check pod: p'
    # Another node works: it is nominated despite the error.
    large_node = {"cpu": "300m", "memory": "300", "pods": "110"}
    result, status, _ = run(
        [n("node1", large_node, labels={"error": "true"}), n("node2", large_node)],
        [rpod("p1", "node1"), rpod("p2", "node2", req=MEDIUM)],
        rpod("p", prio=HIGH, req=LARGE),
        filters=("NodeResourcesFit", "BoomFilter"),
    )
    assert status.is_success()
    assert result is not None and result.nominated_node_name == "node2"
    # A node where the pod fits without evicting anyone is an error too; errors are aggregated.
    result, status, _ = run(
        [n("node1", labels={"error": "true"}), n("node2")],
        [rpod("p1", "node1"), rpod("p2", "node2", req=MEDIUM)],
        rpod("p", prio=HIGH, req=LARGE),
        filters=("NodeResourcesFit", "BoomFilter"),
    )
    assert result is None
    assert status.code == Code.Error
    assert status.message() == (
        'preemption: [running "BoomFilter" filter plugin: failed to check pod: p, '
        'expected at least one victim pod on node "node2"]'
    )


# ----- PodEligibleToPreemptOthers -------------------------------------------------------------
def terminating(name: str, node_name: str, prio: int, condition: dict[str, str] | None) -> dict[str, Any]:
    p = rpod(name, node_name, prio)
    p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if condition is not None:
        p["status"] = {"conditions": [condition]}
    return p


PREEMPTED = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}


@pytest.mark.parametrize(
    ("case", "running", "nominated_code", "policy", "want"),
    [
        ("policy Never", [], Code.Unschedulable, "Never", "not eligible due to preemptionPolicy=Never."),
        ("policy PreemptLowerPriority", [], Code.Unschedulable, "PreemptLowerPriority", ""),
        (
            "terminating victim on the nominated node",
            [terminating("v", "node1", LOW, PREEMPTED)],
            Code.Unschedulable,
            None,
            "not eligible due to a terminating pod on the nominated node.",
        ),
        (
            "nominated node unresolvable: try again",
            [terminating("v", "node1", LOW, PREEMPTED)],
            Code.UnschedulableAndUnresolvable,
            None,
            "",
        ),
        (
            "terminating pod of higher priority",
            [terminating("v", "node1", VERY_HIGH, PREEMPTED)],
            Code.Unschedulable,
            None,
            "",
        ),
        (
            "terminating without condition",
            [terminating("v", "node1", LOW, None)],
            Code.Unschedulable,
            None,
            "",
        ),
        (
            "condition from another cause",
            [terminating("v", "node1", LOW, {**PREEMPTED, "reason": "DeletionByTaintManager"})],
            Code.Unschedulable,
            None,
            "",
        ),
        (
            "not terminating",
            [{**rpod("v", "node1", LOW), "status": {"conditions": [PREEMPTED]}}],
            Code.Unschedulable,
            None,
            "",
        ),
    ],
)
def test_eligible_to_preempt_others(
    case: str, running: list[dict[str, Any]], nominated_code: Code, policy: str | None, want: str
) -> None:
    c = cluster([n("node1")], running)
    pl = DefaultPreemption({}, Handle(c))
    extra: dict[str, Any] = {"preemptionPolicy": policy} if policy else {}
    raw = rpod("p", prio=HIGH, **extra)
    raw["status"] = {"nominatedNodeName": "node1"}
    ok, why = pl.eligible_to_preempt_others(Pod(raw), Status(nominated_code))
    assert (ok, why) == (want == "", want)


def test_pre_enqueue_admits_every_pod() -> None:
    c = cluster([n("node1")])
    assert DefaultPreemption({}, Handle(c)).pre_enqueue(Pod(rpod("p"))).is_success()
    assert "preEnqueue" in registry.points_of(DefaultPreemption)
    assert "postFilter" in registry.points_of(DefaultPreemption)


def test_potential_nodes_with_unschedulable_absent_status() -> None:
    # A PreFilter that rejected with Unschedulable leaves every node absent with that status.
    c = cluster([n("node1"), n("node2"), n("node3")])
    pl = DefaultPreemption({}, Handle(c))
    m = NodeToStatus({1: Status(Code.UnschedulableAndUnresolvable)}, Status(Code.Unschedulable, "x"))
    assert pl.potential_nodes(m) == [0, 2]


# ----- filterPodsWithPDBViolation ---------------------------------------------------------------
def test_split_by_pdb_violation() -> None:
    def mk(name: str, labels: dict[str, str], ns: str = "default") -> Pod:
        return Pod(rpod(name, "n", LOW, labels=labels, namespace=ns))

    pods = [
        mk("a", {"app": "x"}),
        mk("b", {"app": "x"}),
        mk("c", {}),
        mk("d", {"app": "x"}, "other"),
        mk("e", {"app": "x"}),
    ]
    pdbs = [PDB("default", LabelSelector.parse({"matchLabels": {"app": "x"}}), 1, frozenset({"e"}))]
    bad, good = split_by_pdb_violation(pods, pdbs)
    assert [p.name for p in bad] == ["b"]
    assert [p.name for p in good] == ["a", "c", "d", "e"]


def test_pdb_with_empty_or_missing_selector_matches_nothing() -> None:
    foo = {"app": "foo"}
    empty = pdb("empty", foo, 0)
    empty["spec"]["selector"] = {}
    missing = pdb("missing", foo, 0)
    del missing["spec"]["selector"]
    bad_op = pdb("bad", foo, 0)
    bad_op["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}
    result, _, _ = run(
        [n("node1")],
        [rpod("v", "node1", LOW, LARGE, labels=foo)],
        rpod("p", prio=HIGH, req=VERY_LARGE),
        objects=[empty, missing, bad_op],
    )
    assert candidates_of(result) == {"node1": (["default/v"], 0)}


# ----- Go's sort.Slice -------------------------------------------------------------------------
def test_go_sort_small_inputs_match_go() -> None:
    # Output of Go's sort.Slice for 13 equal keys after one larger one (a pattern whose result
    # does not involve breakPatterns): the pivot swap moves element 5 to the front.
    data = [(-1, "x")] + [(i, "test") for i in range(12)]
    go_sort_slice(data, lambda a, b: a[1] < b[1])
    assert [d[0] for d in data] == [5, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, -1]
    # Up to 12 elements it is an insertion sort: stable.
    data = [(-1, "x")] + [(i, "test") for i in range(11)]
    go_sort_slice(data, lambda a, b: a[1] < b[1])
    assert [d[0] for d in data] == [*range(11), -1]


@pytest.mark.parametrize("size", [0, 1, 2, 7, 12, 13, 20, 49, 50, 51, 100, 257, 1000])
def test_go_sort_sorts(size: int) -> None:
    rng = random.Random(size)
    for pattern in ("random", "sorted", "reversed", "few", "sawtooth"):
        if pattern == "random":
            data = [rng.randrange(1000) for _ in range(size)]
        elif pattern == "sorted":
            data = list(range(size))
        elif pattern == "reversed":
            data = list(range(size, 0, -1))
        elif pattern == "few":
            data = [rng.randrange(3) for _ in range(size)]
        else:
            data = [i % 17 for i in range(size)]
        got = list(data)
        go_sort_slice(got, lambda a, b: a < b)
        assert got == sorted(data), pattern
