"""The race replay: several scheduler processes, one stale snapshot, the API server's binding
conflicts and the kubelets' admission (runtime/race.py).

Expected figures come from upstream's rules: pkg/registry/core/pod/storage/storage.go
(setPodNodeAndMetadata, assignPod -> apierrors.NewConflict on "pods/binding"),
framework/runtime/framework.go RunBindPlugins, pkg/kubelet/lifecycle/predicate.go (Admit,
generalFilter, InsufficientResourceError, PredicateFailureError), kubelet.go rejectPod and
noderesources fitsRequest.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedviz.cli import main
from schedviz.engine import InputError, load_config
from schedviz.engine.framework import Code, CycleState, Handle, Status
from schedviz.engine.loader import Snapshot
from schedviz.engine.objects import Node, Pod
from schedviz.engine.runtime import registry
from schedviz.engine.runtime.race import (
    ApiServer,
    RaceOptions,
    RaceReport,
    RaceScheduler,
    kubelet_admit,
    race,
)
from schedviz.engine.runtime.replay import Replay, ReplayOptions
from tests.engine.builders import cluster, container, node, pod

T0 = 1767225600.0  # the builders' creationTimestamp


def snapshot(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> Snapshot:
    return Snapshot(nodes=[Node(n) for n in nodes], pods=[Pod(p, i) for i, p in enumerate(pods)])


def config(*names: str, disabled_filters: tuple[str, ...] = (), permit: tuple[str, ...] = ()) -> Any:
    profiles: list[dict[str, Any]] = []
    for n in names:
        prof: dict[str, Any] = {"schedulerName": n}
        plugins: dict[str, Any] = {}
        if disabled_filters:
            plugins["filter"] = {"disabled": [{"name": f} for f in disabled_filters]}
        if permit:
            plugins["permit"] = {"enabled": [{"name": p} for p in permit]}
        if plugins:
            prof["plugins"] = plugins
        profiles.append(prof)
    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": profiles,
    }
    return load_config(raw)


def timeline(report: RaceReport) -> list[tuple[Any, ...]]:
    return [
        (e["scheduler"], e["pod"], e["node"], e.get("result", e["kind"]))
        for e in report.to_dict()["timeline"]
    ]


# ----- the API server: a pod is bound once ---------------------------------------------------------------


def test_two_processes_of_one_scheduler_name_double_bind_a_pod() -> None:
    snap = snapshot([node("n1"), node("n2")], [pod("web", cpu="1")])
    report = race(snap, [("a", config("default-scheduler")), ("b", config("default-scheduler"))])
    # both queue the pod at the race's start; "a" is listed first, so its binding reaches the API
    # server first; both pick n1 (identical nodes: the first of the tie)
    assert timeline(report) == [
        ("a", "default/web", "n1", "Bound"),
        ("b", "default/web", "n1", "Conflict"),
    ]
    (conflict,) = report.conflicts
    message = 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"'
    assert conflict.message == message
    assert conflict.scheduler_error == f'running Bind plugin "DefaultBinder": {message}'
    assert (conflict.bound_to, conflict.bound_by, conflict.time) == ("n1", "a", T0)
    # the loser hears it from its Bind call: an Error, Unreserve, the pod forgotten from its cache
    rec = report.scheduler("b").trace.cycle("default/web")
    assert (rec.result, rec.error) == ("Error", f'running Bind plugin "DefaultBinder": {message}')
    bind = [(s.plugin, s.code, s.reason) for s in rec.stages if s.point == "Bind"]
    assert bind == [("DefaultBinder", "Error", message)]
    assert report.scheduler("a").trace.cycle("default/web").result == "Scheduled"
    usage = report.node("n1")
    assert usage.believed == {
        "a": {"cpu": 1000, "memory": 0, "pods": 1},
        "b": {"cpu": 0, "memory": 0, "pods": 0},
    }
    out = report.pod("default/web")
    assert (out.outcome, out.node, out.bound_by, out.schedulers) == ("Admitted", "n1", "a", ["a", "b"])
    assert out.decisions == [
        {"scheduler": "a", "result": "Scheduled", "node": "n1"},
        {"scheduler": "b", "result": "Error", "node": "n1"},
    ]
    assert report.summary()["bindingConflicts"] == 1


def test_the_process_listed_first_wins_a_tie() -> None:
    snap = snapshot([node("n1"), node("n2")], [pod("web", cpu="1")])
    report = race(snap, [("b", config("default-scheduler")), ("a", config("default-scheduler"))])
    assert timeline(report) == [
        ("b", "default/web", "n1", "Bound"),
        ("a", "default/web", "n1", "Conflict"),
    ]


def test_a_forgotten_pod_frees_room_in_the_losers_view() -> None:
    # "a" serves default-scheduler, "b" serves it and "sb". t=0: both bind p (3 cpu) to n1, "b" loses
    # and forgets p. t=0.01: "b" places q (3 cpu) in a view where n1 is empty again: n1 (first of the
    # tie); the kubelet then refuses q there.
    snap = snapshot(
        [node("n1", cpu="4"), node("n2", cpu="4")],
        [pod("p", cpu="3"), pod("q", cpu="3", schedulerName="sb")],
    )
    report = race(snap, [("a", config("default-scheduler")), ("b", config("default-scheduler", "sb"))])
    assert timeline(report) == [
        ("a", "default/p", "n1", "Bound"),
        ("b", "default/p", "n1", "Conflict"),
        ("b", "default/q", "n1", "Bound"),
    ]
    (fail,) = report.admission_failures
    assert (fail.pod, fail.reason) == ("default/q", "OutOfcpu")
    assert fail.status_message == (
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 3000, capacity: 4000"
    )


@pytest.mark.parametrize(
    ("deleting", "gates", "node_name", "want"),
    [
        (False, False, "", ""),
        (False, False, "n9", 'pod web is already assigned to node "n9"'),
        (True, False, "", "pod web is being deleted, cannot be assigned to a host"),
        (True, False, "n9", "pod web is being deleted, cannot be assigned to a host"),  # checked first
        (False, True, "", "pod web has non-empty .spec.schedulingGates"),
        (False, True, "n9", 'pod web is already assigned to node "n9"'),  # before the gates
    ],
)
def test_the_binding_subresource_checks(deleting: bool, gates: bool, node_name: str, want: str) -> None:
    raw = pod("web", cpu="1", node_name=node_name or None)
    if deleting:
        raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:05Z"
    if gates:
        raw["spec"]["schedulingGates"] = [{"name": "wait"}]
    snap = snapshot([node("n1"), node("n9")], [raw])
    api = ApiServer(snap)
    ev = api.bind(snap.pods[0], "n1", "a", T0, "DefaultBinder", True)
    if not want:
        assert (ev.result, api.node_of[snap.pods[0].uid]) == ("Bound", "n1")
    else:
        assert ev.result == "Conflict"
        assert ev.message == f'Operation cannot be fulfilled on pods/binding "web": {want}'


# ----- the kubelet: different scheduler names, one node -----------------------------------------------


def test_two_scheduler_names_fill_one_node_and_the_kubelet_rejects_the_later_binding() -> None:
    # n1 has 4 cpu with 500m already running. "a" (scheduler sa) sees room for 3 cpu, "b" (sb) for
    # 3 cpu too; each believes its own pod fits. "a" binds first; the kubelet admits a1 (500m + 2500m)
    # and rejects b1: 2000m requested, 3000m used, 4000m capacity.
    snap = snapshot(
        [node("n1", cpu="4")],
        [
            pod("running", cpu="500m", node_name="n1"),
            pod("a1", cpu="2500m", schedulerName="sa"),
            pod("b1", cpu="2", schedulerName="sb"),
        ],
    )
    report = race(snap, [("a", config("sa")), ("b", config("sb"))])
    assert report.scheduler("a").trace.cycle("default/a1").result == "Scheduled"
    assert report.scheduler("b").trace.cycle("default/b1").result == "Scheduled"
    assert timeline(report) == [("a", "default/a1", "n1", "Bound"), ("b", "default/b1", "n1", "Bound")]
    (fail,) = report.admission_failures
    assert (fail.pod, fail.node, fail.scheduler, fail.reason) == ("default/b1", "n1", "b", "OutOfcpu")
    assert (
        fail.message == "Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000"
    )
    assert fail.status_message == "Pod was rejected: " + fail.message
    d = fail.to_dict()
    assert (d["phase"], d["reason"], d["message"]) == ("Failed", "OutOfcpu", fail.status_message)
    assert d["event"] == {"type": "Warning", "reason": "OutOfcpu", "message": fail.message}
    usage = report.node("n1")
    assert usage.allocatable["cpu"] == 4000
    assert usage.believed == {
        "a": {"cpu": 3000, "memory": 0, "pods": 2},
        "b": {"cpu": 2500, "memory": 0, "pods": 2},
    }
    assert usage.bound["cpu"] == 5000 and usage.bound["pods"] == 3
    assert usage.admitted["cpu"] == 3000 and usage.admitted["pods"] == 2
    assert usage.overcommitted == ["cpu"]
    assert usage.rejected == ["default/b1"]
    assert report.pod("default/b1").outcome == "Rejected"
    assert report.pod("default/b1").message == fail.status_message
    assert report.pod("default/a1").outcome == "Admitted"
    s = report.summary()
    assert (s["admissionFailures"], s["overcommittedNodes"], s["admitted"], s["rejected"]) == (1, 1, 1, 1)


def test_listing_the_other_process_first_rejects_the_other_pod() -> None:
    snap = snapshot(
        [node("n1", cpu="4")],
        [pod("a1", cpu="2500m", schedulerName="sa"), pod("b1", cpu="2", schedulerName="sb")],
    )
    report = race(snap, [("b", config("sb")), ("a", config("sa"))])
    (fail,) = report.admission_failures
    assert fail.pod == "default/a1"
    assert (
        fail.message == "Node didn't have enough resource: cpu, requested: 2500, used: 2000, capacity: 4000"
    )


def test_host_ports_taken_by_the_other_process_fail_as_node_ports() -> None:
    port = [{"containerPort": 80, "hostPort": 8080}]
    snap = snapshot(
        [node("n1")],
        [
            pod("a1", containers=[container(cpu="100m", ports=port)], schedulerName="sa"),
            pod("b1", containers=[container(cpu="100m", ports=port)], schedulerName="sb"),
        ],
    )
    report = race(snap, [("a", config("sa")), ("b", config("sb"))])
    (fail,) = report.admission_failures
    assert (fail.pod, fail.reason) == ("default/b1", "NodePorts")
    assert fail.status_message == (
        "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
    )
    # nothing is overcommitted: the conflict is not a resource
    assert report.node("n1").overcommitted == []


def test_a_scheduler_without_node_affinity_is_caught_by_the_kubelet() -> None:
    snap = snapshot(
        [node("n1", labels={"disk": "hdd"})],
        [pod("p", cpu="1", nodeSelector={"disk": "ssd"})],
    )
    report = race(snap, [("lax", config("default-scheduler", disabled_filters=("NodeAffinity",)))])
    (fail,) = report.admission_failures
    assert fail.reason == "NodeAffinity"
    assert fail.message == "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"


def test_a_pod_no_process_serves_is_not_handled() -> None:
    snap = snapshot([node("n1")], [pod("p", cpu="1", schedulerName="nobody"), pod("q", cpu="1")])
    report = race(snap, [("a", config("default-scheduler"))])
    assert report.scheduler("a").queued == ["default/q"]
    assert [c.pod for c in report.scheduler("a").trace.cycles] == ["default/q"]
    assert report.pod("default/p").outcome == "NotHandled"
    assert report.pod("default/p").schedulers == []
    assert report.summary()["notHandled"] == 1


def test_an_unschedulable_pod_is_not_bound() -> None:
    snap = snapshot([node("n1", cpu="1")], [pod("big", cpu="2")])
    report = race(snap, [("a", config("default-scheduler"))])
    assert report.timeline == [] and report.nodes == []
    assert report.pod("default/big").outcome == "NotBound"


# ----- kubelet admission, rule by rule --------------------------------------------------------------------


def _admit(
    target: dict[str, Any], running: list[dict[str, Any]], pending: dict[str, Any], **features: bool
) -> tuple[str, str] | None:
    c = cluster([target], running)
    return kubelet_admit(Pod(pending, 99), 0, c, features)


GPU = "nvidia.com/gpu"


@pytest.mark.parametrize(
    ("target", "running", "pending", "want"),
    [
        # fits exactly
        (node("n", cpu="2"), [pod("r", cpu="1", node_name="n")], pod("p", cpu="1"), None),
        (
            node("n", memory="1Gi"),
            [pod("r", memory="512Mi", node_name="n")],
            pod("p", memory="768Mi"),
            (
                "OutOfmemory",
                "Node didn't have enough resource: memory, requested: 805306368, used: 536870912, capacity: 1073741824",
            ),
        ),
        # pods first, with a request of 1 and the number of pods as used
        (
            node("n", cpu="1", pods="1"),
            [pod("r", cpu="1", node_name="n")],
            pod("p", cpu="1"),
            ("OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"),
        ),
        # then cpu, before memory
        (
            node("n", cpu="1", memory="1Gi"),
            [],
            pod("p", cpu="2", memory="2Gi"),
            ("OutOfcpu", "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000"),
        ),
        (
            node("n", extra={"ephemeral-storage": "10Gi"}),
            [],
            pod("p", containers=[container(extra={"ephemeral-storage": "20Gi"})]),
            (
                "OutOfephemeral-storage",
                "Node didn't have enough resource: ephemeral-storage, requested: 21474836480, used: 0, capacity: 10737418240",
            ),
        ),
        # an extended resource: OutOf<name>
        (
            node("n", extra={GPU: "1"}),
            [pod("r", containers=[container(extra={GPU: "1"})], node_name="n")],
            pod("p", containers=[container(extra={GPU: "1"})]),
            (
                "OutOfnvidia.com/gpu",
                "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 1, capacity: 1",
            ),
        ),
        # removeMissingExtendedResources: a node without the resource at all is not checked for it
        (node("n"), [], pod("p", containers=[container(extra={GPU: "1"})]), None),
        # ... but one that lists it with 0 is
        (
            node("n", extra={GPU: "0"}),
            [],
            pod("p", containers=[container(extra={GPU: "2"})]),
            (
                "OutOfnvidia.com/gpu",
                "Node didn't have enough resource: nvidia.com/gpu, requested: 2, used: 0, capacity: 0",
            ),
        ),
        # resources come before the predicates
        (
            node("n", cpu="1", labels={"disk": "hdd"}),
            [],
            pod("p", cpu="2", nodeSelector={"disk": "ssd"}),
            ("OutOfcpu", "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000"),
        ),
        (
            node("n", labels={"disk": "hdd"}),
            [],
            pod(
                "p",
                cpu="1",
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}
                            ]
                        }
                    }
                },
            ),
            (
                "NodeAffinity",
                "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
            ),
        ),
        # host ports: 0.0.0.0 conflicts with a specific IP of the same protocol and port
        (
            node("n"),
            [
                pod(
                    "r",
                    containers=[
                        container(
                            ports=[
                                {"containerPort": 1, "hostPort": 53, "hostIP": "10.0.0.1", "protocol": "UDP"}
                            ]
                        )
                    ],
                    node_name="n",
                )
            ],
            pod("p", containers=[container(ports=[{"containerPort": 1, "hostPort": 53, "protocol": "UDP"}])]),
            (
                "NodePorts",
                "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
            ),
        ),
        # another protocol does not
        (
            node("n"),
            [
                pod(
                    "r",
                    containers=[container(ports=[{"containerPort": 1, "hostPort": 53, "protocol": "UDP"}])],
                    node_name="n",
                )
            ],
            pod("p", containers=[container(ports=[{"containerPort": 1, "hostPort": 53}])]),
            None,
        ),
        # the kubelet only minds NoExecute taints
        (node("n", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]), [], pod("p", cpu="1"), None),
        (
            node("n", taints=[{"key": "k", "value": "v", "effect": "NoExecute"}]),
            [],
            pod("p", cpu="1"),
            (
                "TaintToleration",
                "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
            ),
        ),
        (
            node("n", taints=[{"key": "k", "value": "v", "effect": "NoExecute"}]),
            [],
            pod("p", cpu="1", tolerations=[{"key": "k", "operator": "Exists"}]),
            None,
        ),
        # the pod's kubernetes.io/os *label* and spec.os, against the kubelet's OS, come first
        (
            node("n", cpu="1"),
            [],
            pod("p", cpu="2", labels={"kubernetes.io/os": "windows"}),
            (
                "PodOSSelectorNodeLabelDoesNotMatch",
                "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
            ),
        ),
        (
            node("n", labels={"kubernetes.io/os": "windows"}),
            [],
            pod("p", labels={"kubernetes.io/os": "windows"}),
            None,
        ),
        (
            node("n", cpu="1"),
            [],
            pod("p", cpu="2", os={"name": "windows"}),
            ("PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS"),
        ),
        (
            node("n"),
            [],
            pod("p", securityContext={"supplementalGroupsPolicy": "Strict"}),
            (
                "SupplementalGroupsPolicyNotSupported",
                "SupplementalGroupsPolicy=Strict is not supported in this node",
            ),
        ),
        (node("n"), [], pod("p", securityContext={"supplementalGroupsPolicy": "Merge"}), None),
    ],
)
def test_kubelet_admission(
    target: dict[str, Any],
    running: list[dict[str, Any]],
    pending: dict[str, Any],
    want: tuple[str, str] | None,
) -> None:
    assert _admit(target, running, pending) == want


def test_a_node_that_supports_strict_supplemental_groups_admits() -> None:
    target = node("n")
    target["status"]["features"] = {"supplementalGroupsPolicy": True}
    assert _admit(target, [], pod("p", securityContext={"supplementalGroupsPolicy": "Strict"})) is None


def test_several_short_extended_resources_report_the_first_by_name() -> None:
    target = node("n", extra={"b.example/x": "1", "a.example/y": "1"})
    pending = pod("p", containers=[container(extra={"b.example/x": "2", "a.example/y": "2"})])
    got = _admit(target, [], pending)
    assert got is not None and got[0] == "OutOfa.example/y"


def test_bad_pod_fields_name_the_pod() -> None:
    with pytest.raises(InputError, match=r"Pod default/p: field spec.os: expected an object"):
        _admit(node("n"), [], pod("p", os="linux"))


# ----- interleaving ------------------------------------------------------------------------------------------


def _shared(n: int) -> Snapshot:
    return snapshot([node("n1", cpu="100")], [pod(f"p{i}", cpu="1") for i in range(n)])


def test_round_robin_by_default() -> None:
    report = race(_shared(2), [("a", config("default-scheduler")), ("b", config("default-scheduler"))])
    got = [
        (e["scheduler"], e["pod"], e["result"], round(e["time"] - T0, 6))
        for e in report.to_dict()["timeline"]
    ]
    assert got == [
        ("a", "default/p0", "Bound", 0.0),
        ("b", "default/p0", "Conflict", 0.0),
        ("a", "default/p1", "Bound", 0.01),
        ("b", "default/p1", "Conflict", 0.01),
    ]
    assert report.to_dict()["options"]["interleaving"] == "round-robin"


def test_pace_and_offset_decide_who_comes_first() -> None:
    # "slow" tries a pod every 0.03 s, "fast" every 0.01 s starting 0.005 s in: fast binds p1 (0.015)
    # and p2 (0.025) before slow gets to them (0.03, 0.06); slow binds p0 at 0.
    report = race(
        _shared(3),
        [
            RaceScheduler("slow", config("default-scheduler"), cycle_seconds=0.03),
            RaceScheduler("fast", config("default-scheduler"), offset_seconds=0.005),
        ],
    )
    got = [
        (e["scheduler"], e["pod"], e["result"], round(e["time"] - T0, 6))
        for e in report.to_dict()["timeline"]
    ]
    assert got == [
        ("slow", "default/p0", "Bound", 0.0),
        ("fast", "default/p0", "Conflict", 0.005),
        ("fast", "default/p1", "Bound", 0.015),
        ("fast", "default/p2", "Bound", 0.025),
        ("slow", "default/p1", "Conflict", 0.03),
        ("slow", "default/p2", "Conflict", 0.06),
    ]


def test_the_race_is_deterministic() -> None:
    def run() -> str:
        r = race(_shared(5), [("a", config("default-scheduler")), ("b", config("default-scheduler"))])
        d = r.to_dict()
        for s in d["schedulers"]:
            for c in s["trace"]["cycles"]:
                for st in c["stages"]:
                    st["durationMicros"] = 0
        return json.dumps(d, sort_keys=True)

    assert run() == run()


def _no_durations(d: dict[str, Any]) -> dict[str, Any]:
    for c in d["cycles"]:
        for st in c["stages"]:
            st["durationMicros"] = 0
    return d


def test_a_race_with_one_scheduler_is_a_replay() -> None:
    nodes = [node("n1", cpu="2"), node("n2", cpu="4", labels={"zone": "b"}), node("n3", cpu="8")]
    pods = [
        pod("big", cpu="6"),
        pod("small", cpu="1", priority=10),
        pod("picky", cpu="1", nodeSelector={"zone": "b"}),
        pod("huge", cpu="16"),
        pod("r", cpu="1", node_name="n1"),
    ]
    cfg = config("default-scheduler")
    report = race(snapshot(nodes, pods), [("only", cfg)])
    want = Replay(snapshot(nodes, pods), cfg, ReplayOptions()).run()
    got = report.scheduler("only").trace
    assert _no_durations(got.to_dict()) == _no_durations(want.to_dict())
    assert report.conflicts == [] and report.admission_failures == []
    assert [n.overcommitted for n in report.nodes] == [[] for _ in report.nodes]
    assert {p.pod: p.outcome for p in report.pods} == {
        "default/big": "Admitted",
        "default/small": "Admitted",
        "default/picky": "Admitted",
        "default/huge": "NotBound",
    }


def test_a_preemption_victim_is_deleted_and_its_room_admits_the_preemptor() -> None:
    # "a" preempts the running low-priority pod for "high" (victims are deleted: preemption "evict")
    # and binds "high" on its retry; "b", whose view still has "low", finds no room for "other"
    snap = snapshot(
        [node("n1", cpu="4")],
        [
            pod("low", cpu="3", node_name="n1", priority=0),
            pod("high", cpu="3", priority=100, schedulerName="sa"),
            pod("other", cpu="2", schedulerName="sb"),
        ],
    )
    options = RaceOptions(replay=ReplayOptions(preemption="evict"))
    report = race(snap, [("a", config("sa")), ("b", config("sb"))], options)
    assert timeline(report) == [("a", "default/low", "n1", "Eviction"), ("a", "default/high", "n1", "Bound")]
    assert report.admission_failures == []
    usage = report.node("n1")
    assert usage.bound["cpu"] == usage.admitted["cpu"] == 3000
    assert usage.believed["b"]["cpu"] == 3000  # the stale view still holds "low"
    assert report.pod("default/other").outcome == "NotBound"
    assert report.summary()["evictions"] == 1


# ----- Permit waits in a race -----------------------------------------------------------------------------


class _WaitThenRelease:
    """Permit: ``race.test/permit: wait`` waits (10 s); ``release`` allows every waiting pod."""

    name = "RaceWait"

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle

    def permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, float]:
        action = pod.labels.get("race.test/permit", "")
        if action == "wait":
            return Status(Code.Wait), 10.0
        if action == "release":
            for wp in self.handle.iterate_over_waiting_pods():
                wp.allow(self.name)
        if action == "explode":
            raise InputError("bad permit label", obj=pod.ident, field="metadata.labels")
        return Status.success(), 0.0


@pytest.fixture
def _wait_plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(registry._extra, _WaitThenRelease.name, _WaitThenRelease)
    yield


@pytest.mark.usefixtures("_wait_plugin")
def test_a_pod_waiting_at_permit_binds_when_allowed_and_can_lose() -> None:
    # "a" holds w at Permit (t=0) and binds it when r releases it (t=0.02: r first, then w's Binding
    # record); "b", without the Permit plugin, binds w at 0 and r at 0.01. Both of a's bindings fail.
    snap = snapshot(
        [node("n1"), node("n2")],
        [
            pod("w", cpu="1", labels={"race.test/permit": "wait"}),
            pod("r", cpu="1", labels={"race.test/permit": "release"}),
        ],
    )
    report = race(
        snap,
        [
            RaceScheduler("a", config("default-scheduler", permit=("RaceWait",)), cycle_seconds=0.02),
            RaceScheduler("b", config("default-scheduler")),
        ],
    )
    got = [
        (e["scheduler"], e["pod"], e["result"], round(e["time"] - T0, 6))
        for e in report.to_dict()["timeline"]
    ]
    assert got == [
        ("b", "default/w", "Bound", 0.0),
        ("b", "default/r", "Bound", 0.01),
        ("a", "default/r", "Conflict", 0.02),
        ("a", "default/w", "Conflict", 0.02),
    ]
    a = report.scheduler("a").trace
    assert [(c.kind, c.pod, c.result) for c in a.cycles] == [
        ("Scheduling", "default/w", "Waiting"),
        ("Scheduling", "default/r", "Error"),
        ("Binding", "default/w", "Error"),
    ]
    # the Binding record's seq is the one on the timeline
    assert report.to_dict()["timeline"][3]["recordSeq"] == a.cycles[2].seq == 3


@pytest.mark.usefixtures("_wait_plugin")
def test_an_error_in_one_process_ends_the_race_without_hanging_the_others() -> None:
    snap = snapshot(
        [node("n1")],
        [pod("p", cpu="1"), pod("boom", cpu="1", labels={"race.test/permit": "explode"}), pod("q", cpu="1")],
    )
    processes = [
        ("b", config("default-scheduler")),
        ("a", config("default-scheduler", permit=("RaceWait",))),
        ("c", config("default-scheduler")),
    ]
    before = threading.active_count()
    with pytest.raises(InputError, match=r"Pod default/boom: field metadata\.labels: bad permit label"):
        race(snap, processes)
    assert threading.active_count() == before


# ----- input and output ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schedulers", "fragment"),
    [
        ([], "at least one scheduler"),
        ([("", None)], "needs a name"),
        ([("a", None), ("a", None)], "'a' is given twice"),
        ([RaceScheduler("a", None, cycle_seconds=-1)], "must not be negative"),
    ],
)
def test_bad_schedulers(schedulers: list[Any], fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        race(_shared(1), schedulers)


def test_a_default_configuration_when_none_is_given() -> None:
    report = race(_shared(1), [("a", None)])
    assert report.scheduler("a").profiles == ["default-scheduler"]
    assert report.pod("default/p0").outcome == "Admitted"


def test_report_json_shape() -> None:
    snap = snapshot(
        [node("n1", cpu="4")],
        [pod("a1", cpu="3", schedulerName="sa"), pod("b1", cpu="2", schedulerName="sb")],
    )
    d = race(snap, [("a", config("sa")), ("b", config("sb"))], RaceOptions(all_nodes=True)).to_dict(
        nodes=False
    )
    json.dumps(d)
    assert (d["apiVersion"], d["kind"], d["formatVersion"]) == ("schedviz.io/v1", "RaceReport", 1)
    assert d["options"] == {
        "interleaving": "round-robin",
        "cycleSeconds": 0.01,
        "allNodes": True,
        "schedulers": ["a", "b"],
    }
    assert d["startTime"] == T0
    assert [s["name"] for s in d["schedulers"]] == ["a", "b"]
    assert d["schedulers"][0]["trace"]["kind"] == "ReplayTrace"
    assert "nodes" not in d["schedulers"][0]["trace"]["cycles"][0]
    assert d["schedulers"][1]["results"] == {"Scheduled": 1}
    assert [e["order"] for e in d["timeline"]] == [1, 2]
    assert d["bindingConflicts"] == []
    assert [f["pod"] for f in d["admissionFailures"]] == ["default/b1"]
    assert d["nodes"][0]["overcommitted"] == ["cpu"]
    assert d["summary"]["admissionFailures"] == 1


# ----- the command line -------------------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, obj: object) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(obj))
    return str(p)


def _cli_files(tmp_path: Path) -> tuple[str, str, str]:
    cluster_file = _write(
        tmp_path,
        "c.yaml",
        {
            "kind": "List",
            "items": [
                node("n1", cpu="4"),
                pod("a1", cpu="3", schedulerName="sa"),
                pod("b1", cpu="2", schedulerName="sb"),
            ],
        },
    )

    def cfg(name: str) -> dict[str, Any]:
        return {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": name}],
        }

    return cluster_file, _write(tmp_path, "a.yaml", cfg("sa")), _write(tmp_path, "b.yaml", cfg("sb"))


def test_cli_race_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f, a, b = _cli_files(tmp_path)
    assert main(["race", f, "--scheduler", f"a={a}", "--scheduler", f"b={b}", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "RaceReport"
    assert out["admissionFailures"][0]["message"] == (
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000"
    )


def test_cli_race_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f, a, b = _cli_files(tmp_path)
    assert main(["race", f, "--scheduler", f"a={a}", "--scheduler", f"b={b}"]) == 0
    out = capsys.readouterr().out
    assert "default/b1" in out and "Failed OutOfcpu" in out
    assert "OVERCOMMITTED: cpu" in out


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("a", "expected NAME=CONFIG_FILE"),
        ("=x.yaml", "expected NAME=CONFIG_FILE"),
        ("a=", "expected NAME=CONFIG_FILE"),
        ("a={missing}", "missing.yaml"),
        ("a={a}&a={a}", "'a' is given twice"),
    ],
)
def test_cli_race_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, fragment: str
) -> None:
    f, a, _ = _cli_files(tmp_path)
    args = ["race", f]
    for one in spec.split("&"):
        args += ["--scheduler", one.format(a=a, missing=tmp_path / "missing.yaml")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("schedviz: error:") and fragment in err


def test_cli_race_needs_a_scheduler(tmp_path: Path) -> None:
    f, _, _ = _cli_files(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["race", f])
    assert exc.value.code == 2


def test_node_usage_lists_resources_in_use_only() -> None:
    snap = snapshot(
        [node("n1", extra={GPU: "2", "ephemeral-storage": "10Gi"})],
        [pod("g", containers=[container(cpu="1", extra={GPU: "1"})])],
    )
    usage = race(snap, [("a", None)]).node("n1")
    assert list(usage.allocatable) == ["cpu", "memory", GPU, "pods"]
    assert usage.admitted == {"cpu": 1000, "memory": 0, GPU: 1, "pods": 1}
    assert usage.bound == usage.admitted and usage.overcommitted == []


# ----- an extender binder ---------------------------------------------------------------------------------------


class _BindOK(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        data = json.dumps({"Error": ""}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def binder_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _BindOK)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_an_extender_binders_conflict_is_found_but_not_reported_back(binder_url: str) -> None:
    ext = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "extenders": [{"urlPrefix": binder_url, "bindVerb": "bind"}],
        },
    )
    snap = snapshot([node("n1"), node("n2")], [pod("web", cpu="1")])
    report = race(snap, [("a", config("default-scheduler")), ("b", ext)])
    (conflict,) = report.conflicts
    assert (conflict.scheduler, conflict.binder, conflict.reported_to_scheduler) == ("b", "Extender", False)
    assert conflict.scheduler_error == conflict.message
    # the extender said yes: the scheduler's trace keeps the pod, and so does its view of n1
    assert report.scheduler("b").trace.cycle("default/web").result == "Scheduled"
    assert report.node("n1").believed["b"]["pods"] == 1
    assert report.to_dict()["bindingConflicts"][0]["reportedToScheduler"] is False
