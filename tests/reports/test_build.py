"""CI reports (schedviz/reports/build.py): content against small hand-built clusters, the exit policy."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from schedviz.engine import SchedulerConfig, load_config
from schedviz.engine.loader import Snapshot
from schedviz.engine.objects import Node, Pod
from schedviz.engine.runtime import registry
from schedviz.engine.runtime.replay import Replay
from schedviz.reports import build_report as _build_report
from schedviz.reports import (
    check_report,
    compare_traces,
    exit_status,
    load_inputs,
    policy_failures,
)
from tests.engine.builders import node, pod

AFFINITY_MSG = "node(s) didn't match scheduler-enforced node affinity"


def snapshot(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> Snapshot:
    return Snapshot(nodes=[Node(n) for n in nodes], pods=[Pod(p, i) for i, p in enumerate(pods)], name="test")


def config(plugin_config: list[dict[str, Any]] | None = None) -> SchedulerConfig:
    raw = None
    if plugin_config is not None:
        raw = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": plugin_config}],
        }
    return load_config(raw, implements=registry.implements_table())


MOST_ALLOCATED = [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]
ONLY_BATCH = [
    {
        "name": "NodeAffinity",
        "args": {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}
                    ]
                }
            }
        },
    }
]


def build_report(snap: Snapshot, cand: SchedulerConfig, base: SchedulerConfig | None) -> dict[str, Any]:
    report = _build_report(snap, cand, base)
    json.dumps(report)  # JSON-ready
    return report


def by_pod(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["pod"]: p for p in report["pods"]}


# ----- report content ---------------------------------------------------------------------------------


def moved_case() -> tuple[Snapshot, SchedulerConfig, SchedulerConfig]:
    # LeastAllocated (the default) prefers the larger node b; MostAllocated packs onto the smaller a.
    snap = snapshot([node("a", cpu="4"), node("b", cpu="8")], [pod("p", cpu="1")])
    return snap, config(MOST_ALLOCATED), config(None)


def test_config_change_that_moves_a_pod() -> None:
    snap, cand, base = moved_case()
    report = build_report(snap, cand, base)
    s = report["summary"]
    assert (
        s["pendingPods"],
        s["scheduled"],
        s["unschedulable"],
        s["notHandled"],
        s["gated"],
        s["errors"],
    ) == (
        1,
        1,
        0,
        0,
        0,
        0,
    )
    assert (s["changed"], s["moved"], s["newlyUnschedulable"], s["newlyScheduled"]) == (1, 1, 0, 0)
    p = by_pod(report)["default/p"]
    assert (p["namespace"], p["name"], p["result"], p["node"], p["message"]) == (
        "default",
        "p",
        "Scheduled",
        "a",
        None,
    )
    assert p["baseline"]["result"] == "Scheduled" and p["baseline"]["node"] == "b"
    assert p["changed"] is True and p["change"] == "moved"
    [moved] = report["changes"]["moved"]
    assert (moved["pod"], moved["from"], moved["to"]) == ("default/p", "b", "a")

    # Two feasible nodes: both cycles scored. Each winner beats the other node under its own config.
    [shift] = report["changes"]["scoreShifts"]
    assert (shift["aNode"], shift["bNode"]) == ("b", "a")
    assert shift["aTotal"] == p["baseline"]["total"] and shift["bTotal"] == p["total"]
    assert shift["aTotal"] > shift["bNodeTotalInA"]
    assert shift["bTotal"] >= shift["aNodeTotalInB"]

    # Utilisation: nothing ran before; the candidate put 1 CPU on a (of 4), nothing on b.
    util = {n["node"]: n for n in report["utilization"]}
    assert util["a"]["allocatable"] == {"cpuMilli": 4000, "memoryBytes": 8 * 2**30, "pods": 110}
    assert util["a"]["before"]["cpuMilli"] == 0 and util["a"]["before"]["pods"] == 0
    assert util["a"]["after"]["cpuMilli"] == 1000 and util["a"]["after"]["cpuPercent"] == 25.0
    assert util["a"]["after"]["pods"] == 1 and util["a"]["changed"] is True
    assert util["b"]["after"]["cpuMilli"] == 0 and util["b"]["changed"] is False
    assert util["b"]["afterBaseline"]["cpuMilli"] == 1000  # where the baseline put it
    totals = report["utilizationTotals"]
    assert totals["allocatable"]["cpuMilli"] == 12000 and totals["after"]["cpuMilli"] == 1000
    assert totals["after"]["cpuPercent"] == round(100 / 12, 1)


def affinity_case() -> tuple[Snapshot, SchedulerConfig, SchedulerConfig]:
    nodes = [node("a", cpu="8", labels={"pool": "web"}), node("b", cpu="2", labels={"pool": "batch"})]
    pods = [
        pod("running", node_name="a", cpu="1", memory="1Gi"),
        pod("p1", cpu="1", created="2026-01-01T00:00:01Z"),
        pod("p2", cpu="1500m", created="2026-01-01T00:00:02Z"),
    ]
    return snapshot(nodes, pods), config(ONLY_BATCH), config(None)


def test_config_change_that_makes_a_pod_unschedulable() -> None:
    # The candidate only allows pool=batch (node b, 2 CPUs): p1 moves there, then p2 (1.5 CPU) no longer fits.
    snap, cand, base = affinity_case()
    report = build_report(snap, cand, base)
    s = report["summary"]
    assert (s["pendingPods"], s["scheduled"], s["unschedulable"]) == (2, 1, 1)
    assert (s["moved"], s["newlyUnschedulable"], s["changed"]) == (1, 1, 2)
    assert report["baselineSummary"]["scheduled"] == 2 and report["baselineSummary"]["unschedulable"] == 0
    assert report["snapshot"] == {"name": "test", "nodes": 2, "runningPods": 1, "pendingPods": 2}
    pods = by_pod(report)
    assert [p["pod"] for p in report["pods"]] == ["default/p1", "default/p2"]  # queue order
    assert pods["default/p1"]["node"] == "b" and pods["default/p1"]["baseline"]["node"] == "a"
    p2 = pods["default/p2"]
    assert p2["result"] == "Unschedulable" and p2["node"] is None and p2["change"] == "newlyUnschedulable"
    assert p2["message"].startswith(f"0/2 nodes are available: 1 Insufficient cpu, 1 {AFFINITY_MSG}.")
    assert p2["baseline"] == {
        "result": "Scheduled",
        "node": "a",
        "message": None,
        "total": p2["baseline"]["total"],
    }
    [nu] = report["changes"]["newlyUnschedulable"]
    assert nu == {
        "pod": "default/p2",
        "previousResult": "Scheduled",
        "previousNode": "a",
        "message": p2["message"],
    }
    # Before: the running pod (1 CPU, 1Gi) on a. After the candidate: p1 on b, a unchanged.
    util = {n["node"]: n for n in report["utilization"]}
    assert util["a"]["before"] == util["a"]["after"]
    assert util["a"]["before"]["cpuMilli"] == 1000 and util["a"]["before"]["memoryPercent"] == 12.5
    assert util["b"]["after"]["cpuMilli"] == 1000 and util["b"]["after"]["cpuPercent"] == 50.0
    assert util["a"]["afterBaseline"]["cpuMilli"] == 3500  # the baseline put both pods on a
    assert policy_failures(report, {"unschedulable"}) == ["unschedulable: 1 pending pod cannot be scheduled"]


def test_without_baseline_and_other_results() -> None:
    gated = pod("gated", schedulingGates=[{"name": "example.com/wait"}])
    other = pod("other", namespace="team", schedulerName="my-scheduler")
    snap = snapshot([node("a")], [pod("ok", cpu="1"), gated, other, pod("big", cpu="64")])
    report = build_report(snap, config(None), None)
    s = report["summary"]
    assert (s["pendingPods"], s["scheduled"], s["unschedulable"], s["notHandled"], s["gated"]) == (
        4,
        1,
        1,
        1,
        1,
    )
    assert s["changed"] is None and s["moved"] is None
    assert report["hasBaseline"] is False and report["changes"] is None and report["baselineSummary"] is None
    pods = by_pod(report)
    assert all(p["baseline"] is None and p["changed"] is None for p in report["pods"])
    assert pods["team/other"]["result"] == "NotHandled"
    assert pods["team/other"]["message"] == 'no profile for schedulerName "my-scheduler"'
    assert pods["default/gated"]["result"] == "Gated"
    assert pods["default/big"]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    with pytest.raises(ValueError, match="needs a baseline"):
        exit_status(report, {"changes"})


def test_report_is_stable_and_baseline_does_not_leak_into_candidate() -> None:
    snap, cand, base = affinity_case()
    first = json.dumps(build_report(snap, cand, base))
    assert json.dumps(build_report(snap, cand, base)) == first
    # The candidate's outcomes equal a replay of a fresh snapshot under the candidate alone.
    fresh, cand2, _ = affinity_case()
    alone = Replay(fresh, cand2).run()
    got = {p["pod"]: (p["result"], p["node"], p["message"]) for p in json.loads(first)["pods"]}
    assert got == {c.pod: (c.result, c.selected_node, c.message) for c in alone.cycles}


def test_compare_traces_matches_by_pod_name_across_snapshots() -> None:
    a = Replay(snapshot([node("a"), node("b")], [pod("p", cpu="1"), pod("q", cpu="1")]), config(None)).run()
    b = Replay(
        snapshot([node("b"), node("c", cpu="1")], [pod("p", cpu="1"), pod("r", cpu="8")]), config(None)
    ).run()
    cmp = compare_traces(a, b)
    assert cmp["onlyInA"] == ["default/q"] and cmp["onlyInB"] == ["default/r"]
    kinds = {e["pod"]: e["change"] for e in cmp["pods"]}
    assert kinds == {"default/p": "moved", "default/r": "onlyInB", "default/q": "onlyInA"}
    assert [e["pod"] for e in cmp["pods"]] == ["default/p", "default/r", "default/q"]
    assert cmp["counts"]["compared"] == 1 and cmp["counts"]["changed"] == 3
    # p: A had nodes a and b (4 CPUs each, the first wins the tie); B judges b and c (1 CPU).
    [moved] = cmp["moved"]
    assert (moved["from"], moved["to"]) == ("a", "b")
    r = next(e for e in cmp["pods"] if e["pod"] == "default/r")
    assert r["a"] is None and r["b"]["result"] == "Unschedulable"


def test_compare_traces_newly_scheduled_and_result_changed() -> None:
    snap = snapshot([node("a", cpu="2")], [pod("p", cpu="1"), pod("q", cpu="1", schedulerName="other")])
    a = Replay(snap, config([{"name": "NodeResourcesFit", "args": {"ignoredResources": []}}])).run()
    two = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "other"}],
    }
    b = Replay(snap, load_config(two, implements=registry.implements_table())).run()
    cmp = compare_traces(a, b)
    # p: Scheduled -> NotHandled (its profile is gone); q: NotHandled -> Scheduled.
    assert cmp["resultChanged"] == [
        {
            "pod": "default/p",
            "from": "Scheduled",
            "to": "NotHandled",
            "previousNode": "a",
            "node": None,
            "message": 'no profile for schedulerName "default-scheduler"',
        }
    ]
    assert cmp["newlyScheduled"] == [
        {
            "pod": "default/q",
            "node": "a",
            "previousResult": "NotHandled",
            "previousMessage": 'no profile for schedulerName "other"',
        }
    ]


def test_load_inputs_from_uploaded_texts() -> None:
    snap_text = json.dumps({"kind": "List", "items": [node("a"), pod("p", cpu="1")]})
    cfg_text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    snap, cand, base = load_inputs(
        [("cluster.json", snap_text)], ("cand.yaml", cfg_text), ("base.yaml", cfg_text)
    )
    assert snap.name == "cluster.json" and len(snap.pending) == 1 and base is not None
    assert build_report(snap, cand, base)["summary"]["changed"] == 0
    from schedviz.engine import ConfigError

    with pytest.raises(ConfigError, match=r"bad\.yaml"):
        load_inputs([("c.json", snap_text)], ("bad.yaml", "profiles: 3\n"))


def test_check_report_rejects_other_shapes() -> None:
    snap, cand, base = moved_case()
    report = build_report(snap, cand, base)
    assert check_report(report) is report
    for broken, fragment in (
        ([], "JSON object"),
        ({**report, "kind": "ReplayTrace"}, "kind"),
        ({**report, "pods": {}}, "'pods'"),
        ({**report, "changes": None}, "'changes'"),
        ({**report, "pods": [{"result": "Scheduled"}]}, "pods[0]"),
    ):
        with pytest.raises(ValueError, match=re.escape(fragment)):
            check_report(broken)


# ----- exit policy --------------------------------------------------------------------------------------


def test_exit_policy() -> None:
    moved = build_report(*moved_case())
    unsched = build_report(*affinity_case())
    snap = snapshot([node("a")], [pod("p", cpu="1")])
    same = build_report(snap, config(None), config(None))
    assert exit_status(same, set()) == 0
    assert exit_status(same, {"unschedulable", "changes"}) == 0
    assert exit_status(moved, {"unschedulable"}) == 0
    assert exit_status(moved, {"changes"}) == 1
    assert exit_status(unsched, set()) == 0
    assert exit_status(unsched, {"unschedulable"}) == 1
    assert exit_status(unsched, {"changes"}) == 1
    assert policy_failures(unsched, {"changes", "unschedulable"}) == [
        "changes: 2 pods placed differently than the baseline",
        "unschedulable: 1 pending pod cannot be scheduled",
    ]
    with pytest.raises(ValueError, match="unknown --fail-on policy 'moves'"):
        exit_status(same, {"moves"})
    errored = copy.deepcopy(same)
    errored["summary"]["errors"] = 1  # a cycle that failed with an error counts as not schedulable
    assert exit_status(errored, {"unschedulable"}) == 1
