"""The replay loop: queue order, node sampling, the moving start index, selection, messages."""

from __future__ import annotations

import re
from typing import Any

import pytest

from schedviz.engine import ReplayOptions, load_config
from schedviz.engine.framework import Code, Status
from schedviz.engine.loader import Snapshot
from schedviz.engine.objects import Node, Pod
from schedviz.engine.runtime import registry
from schedviz.engine.runtime.replay import Replay, fit_error_message, num_feasible_nodes_to_find
from schedviz.engine.trace import NOT_EVALUATED
from tests.engine.builders import node, pod


def snapshot(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], objects: list[Any] = ()) -> Snapshot:  # type: ignore[assignment]
    return Snapshot(nodes=[Node(n) for n in nodes], pods=[Pod(p, i) for i, p in enumerate(pods)], objects=list(objects))


def config(raw: dict[str, Any] | None) -> Any:
    return load_config(raw)


@pytest.mark.parametrize(
    ("profile_pct", "global_pct", "num_nodes", "want"),
    [
        (None, None, 50, 50),  # fewer than 100 nodes: all of them
        (None, None, 99, 99),
        (None, None, 100, 100),  # adaptive 50 - 100/125 = 50% of 100 -> 50, floored at 100
        (None, None, 1000, 420),  # 50 - 8 = 42%
        (None, None, 5000, 500),  # 50 - 40 = 10%
        (None, None, 6000, 300),  # 50 - 48 = 2% -> floor 5%
        (None, 30, 1000, 300),  # the global percentage
        (10, 30, 1000, 100),  # the profile's wins
        (0, 30, 1000, 420),  # a profile's 0 means adaptive, even with a global value
        (5, None, 1000, 100),  # 50 nodes, floored at 100
        (100, None, 5000, 5000),
    ],
)
def test_num_feasible_nodes_to_find(profile_pct: int | None, global_pct: int | None, num_nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(profile_pct, global_pct, num_nodes) == want


def test_fit_error_message_sorts_counts_as_strings() -> None:
    statuses = {i: Status(Code.Unschedulable, "Insufficient cpu") for i in range(10)}
    statuses.update({10 + i: Status(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)") for i in range(2)})
    msg = fit_error_message(12, "", statuses, Status(Code.UnschedulableAndUnresolvable), "preemption: x")
    # "10 ..." sorts before "2 ..." as plain strings do
    assert msg == "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint(s). preemption: x"


def test_fit_error_message_counts_absent_nodes_and_prefilter_message() -> None:
    statuses = {0: Status(Code.Unschedulable, "Insufficient cpu")}
    absent = Status(Code.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [NodeAffinity]")
    msg = fit_error_message(3, "", statuses, absent, "")
    assert msg == "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    assert fit_error_message(3, "pod affinity terms conflict", {}, absent, "") == (
        "0/3 nodes are available: pod affinity terms conflict."
    )


def test_node_tree_order_round_robins_zones() -> None:
    nodes = [
        node("a1", labels={"topology.kubernetes.io/zone": "a"}),
        node("a2", labels={"topology.kubernetes.io/zone": "a"}),
        node("a3", labels={"topology.kubernetes.io/zone": "a"}),
        node("b1", labels={"topology.kubernetes.io/zone": "b"}),
        node("none"),
    ]
    c = snapshot(nodes, []).cluster()
    assert [c.names[i] for i in c.tree_order] == ["a1", "b1", "none", "a2", "a3"]


def _uniform(n: int, cpu: str = "4") -> list[dict[str, Any]]:
    return [node(f"n{i:03d}", cpu=cpu) for i in range(n)]


def test_sampling_stops_at_the_node_one_too_many_and_moves_the_start() -> None:
    # 200 identical nodes, percentageOfNodesToScore 50 -> look for 100 feasible nodes.
    pods = [pod(f"p{i}", cpu="100m", created=f"2026-01-01T00:00:0{i}Z") for i in range(3)]
    cfg = config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 50}
    )
    rp = Replay(snapshot(_uniform(200), pods), cfg)
    trace = rp.run()
    first, second, third = trace.cycles
    assert first.nodes_to_find == 100 and first.start_index == 0
    assert first.evaluation_order is not None and len(first.evaluation_order) == 100
    assert first.filter_codes is not None
    assert int(first.filter_codes[99]) == 0 and int(first.filter_codes[100]) == NOT_EVALUATED
    # the node that would have been the 101st feasible node is where the next cycle starts
    assert second.start_index == 100 and third.start_index == 0
    assert second.evaluation_order is not None and int(second.evaluation_order[0]) == 100
    assert first.feasible is not None and len(first.feasible) == 100


def test_sampling_counts_failed_nodes_in_the_start_index() -> None:
    nodes = _uniform(200)
    for i in range(0, 200, 2):  # every even node cordoned
        nodes[i]["spec"]["unschedulable"] = True
    cfg = config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 25}
    )
    trace = Replay(snapshot(nodes, [pod("a", cpu="1"), pod("b", cpu="1", created="2026-01-02T00:00:00Z")]), cfg).run()
    first, second = trace.cycles
    assert first.nodes_to_find == 100  # 25% of 200 is 50, floored at 100
    # 100 feasible nodes need 200 visits: all nodes processed, nothing left to cut
    assert first.evaluation_order is not None and len(first.evaluation_order) == 200
    assert second.start_index == 0


def test_all_nodes_option_evaluates_every_node() -> None:
    cfg = config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 10}
    )
    trace = Replay(snapshot(_uniform(300), [pod("a", cpu="1")]), cfg, ReplayOptions(all_nodes=True)).run()
    c = trace.cycles[0]
    assert c.filter_codes is not None and (c.filter_codes == 0).all()
    assert c.feasible is not None and len(c.feasible) == 300


def test_ties_go_to_the_first_node_in_snapshot_order() -> None:
    nodes = [
        node("z-last", labels={"topology.kubernetes.io/zone": "b"}),
        node("a-first", labels={"topology.kubernetes.io/zone": "a"}),
        node("m-middle", labels={"topology.kubernetes.io/zone": "a"}),
    ]
    trace = Replay(snapshot(nodes, [pod("a", cpu="1")]), config(None)).run()
    c = trace.cycles[0]
    assert c.tied_names(trace.node_names) == ["z-last", "a-first", "m-middle"]
    assert c.selected_node == "z-last"


def test_scheduled_pods_are_assumed_before_the_next_cycle() -> None:
    nodes = [node("small", cpu="1"), node("big", cpu="2")]
    pods = [pod("first", cpu="1500m"), pod("second", cpu="1", created="2026-01-02T00:00:00Z")]
    trace = Replay(snapshot(nodes, pods), config(None)).run()
    assert [c.selected_node for c in trace.cycles] == ["big", "small"]
    assert trace.cycles[1].result == "Scheduled"


def test_unschedulable_pod_gets_the_scheduler_message() -> None:
    nodes = [node("a", cpu="1"), node("b", cpu="1", taints=[{"key": "k", "effect": "NoSchedule"}])]
    pods = [pod("busy", cpu="900m", node_name="a", priority=10), pod("p", cpu="500m", priority=5)]
    trace = Replay(snapshot(nodes, pods), config(None)).run()
    c = trace.cycles[0]
    assert c.result == "Unschedulable" and c.selected_node is None
    assert c.message_before_post_filter == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)."
    )
    assert c.message is not None and c.message.startswith(c.message_before_post_filter + " ")
    assert "preemption: 0/2 nodes are available:" in c.message


def test_single_feasible_node_is_not_scored_unless_all_nodes() -> None:
    nodes = [node("a", cpu="1"), node("b", cpu="1", unschedulable=True)]
    snap = snapshot(nodes, [pod("p", cpu="100m")])
    c = Replay(snap, config(None)).run().cycles[0]
    assert c.selected_node == "a" and not c.scored and c.score_plugins == []
    c2 = Replay(snap, config(None), ReplayOptions(all_nodes=True)).run().cycles[0]
    assert c2.selected_node == "a" and c2.scored and "NodeResourcesFit" in c2.score_plugins


def test_queue_order_priority_then_creation_then_input_order() -> None:
    pods = [
        pod("late-low", created="2026-01-03T00:00:00Z"),
        pod("early-low", created="2026-01-01T00:00:00Z"),
        pod("high", priority=100, created="2026-01-05T00:00:00Z"),
        pod("early-low-2", created="2026-01-01T00:00:00Z"),
    ]
    trace = Replay(snapshot([node("a")], pods), config(None)).run()
    assert [c.pod for c in trace.cycles] == ["default/high", "default/early-low", "default/early-low-2", "default/late-low"]


def test_unknown_scheduler_and_gated_pods_get_no_cycle() -> None:
    pods = [
        pod("other", schedulerName="custom"),
        pod("gated", schedulingGates=[{"name": "example.com/wait"}]),
    ]
    trace = Replay(snapshot([node("a")], pods), config(None)).run()
    by = {c.pod: c for c in trace.cycles}
    assert by["default/other"].result == "NotHandled"
    assert by["default/other"].error == 'no profile for schedulerName "custom"'
    assert by["default/gated"].result == "Gated"
    assert by["default/gated"].message == "waiting for scheduling gates: [example.com/wait]"


def test_finished_pods_hold_no_resources() -> None:
    nodes = [node("a", cpu="1")]
    pods = [pod("done", cpu="1", node_name="a", phase="Succeeded"), pod("p", cpu="1")]
    trace = Replay(snapshot(nodes, pods), config(None)).run()
    assert trace.cycles[0].selected_node == "a"


def test_trace_json_shape() -> None:
    nodes = [node("a", cpu="1"), node("b", cpu="2")]
    d = Replay(snapshot(nodes, [pod("p", cpu="100m")]), config(None)).run().to_dict()
    assert d["apiVersion"] == "schedviz.io/v1" and d["kind"] == "ReplayTrace"
    assert d["kubernetesVersion"] == "v1.35.4"
    cyc = d["cycles"][0]
    assert cyc["pod"] == "default/p" and cyc["result"] == "Scheduled"
    assert set(cyc["nodes"]) == {"a", "b"}
    fit = cyc["nodes"]["b"]["scores"]["NodeResourcesFit"]
    assert fit["weighted"] == fit["normalized"] * cyc["scoreWeights"]["NodeResourcesFit"]
    assert cyc["nodes"]["b"]["total"] == sum(
        s["weighted"] for s in cyc["nodes"]["b"]["scores"].values() if not s.get("skipped")
    )
    points = [s["point"] for s in cyc["stages"]]
    for p in ("PreFilter", "Filter", "PreScore", "Score", "NormalizeScore", "Reserve", "PreBindPreFlight", "Bind"):
        assert p in points


def test_a_plugin_that_fails_to_initialise_is_a_config_error() -> None:
    from schedviz.engine.errors import ConfigError
    from schedviz.engine.framework import CycleState, Verdicts

    class Boom:
        name = "example.com/Boom"

        def __init__(self, args: dict[str, Any], handle: Any) -> None:
            raise RuntimeError("no GPU inventory configured")

        def filter(self, state: CycleState, pod: Pod, nodes: Any) -> Verdicts:
            return Verdicts.all_pass(len(nodes))

    registry.register(Boom)
    try:
        cfg = config(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": Boom.name}]}}}],
            }
        )
        with pytest.raises(ConfigError, match=re.escape('initializing plugin "example.com/Boom": RuntimeError: no GPU')):
            Replay(snapshot([node("a")], [pod("p")]), cfg)
    finally:
        registry._extra.pop(Boom.name, None)
