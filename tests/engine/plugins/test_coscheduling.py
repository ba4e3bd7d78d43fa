"""Coscheduling (kubernetes-sigs/scheduler-plugins v0.35.4 pkg/coscheduling): queue order, PreFilter,
PostFilter, Permit and Unreserve, and gangs replayed end to end.

Cases follow upstream's coscheduling_test.go and core/core_test.go; messages and figures are derived
from upstream's rules (core.go, util/podgroup.go, apimachinery's Quantity arithmetic).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from schedviz.engine import load_config
from schedviz.engine.cluster import ClusterState, ObjectStore
from schedviz.engine.errors import ConfigError, InputError
from schedviz.engine.framework import Code, CycleState, Handle, NodeToStatus, Status
from schedviz.engine.loader import load_documents
from schedviz.engine.objects import KubeObject, Node, Pod
from schedviz.engine.plugins.coscheduling import (
    POD_GROUP_LABEL,
    Coscheduling,
    format_resource_gap,
    parse_go_quantity,
)
from schedviz.engine.runtime.replay import Replay
from schedviz.engine.trace import CycleRecord

from ..builders import node, pod

T0 = 1767225600.0  # 2026-01-01T00:00:00Z
NS = 1_000_000_000


def pg(
    name: str,
    min_member: int | None = None,
    *,
    ns: str = "default",
    created: str | None = "2026-01-01T00:00:00Z",
    **spec: Any,
) -> dict[str, Any]:
    s: dict[str, Any] = dict(spec)
    if min_member is not None:
        s["minMember"] = min_member
    md: dict[str, Any] = {"name": name, "namespace": ns}
    if created is not None:
        md["creationTimestamp"] = created
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": md, "spec": s}


def member(
    name: str,
    group: str | None = None,
    *,
    ns: str = "default",
    node_name: str | None = None,
    cpu: str | None = None,
    gated: bool = False,
    priority: int | None = None,
    created: str = "2026-01-01T00:00:00Z",
) -> dict[str, Any]:
    labels = {POD_GROUP_LABEL: group} if group else {}
    extra: dict[str, Any] = {}
    if gated:
        extra["schedulingGates"] = [{"name": "example-gate"}]
    return pod(
        name,
        namespace=ns,
        node_name=node_name,
        cpu=cpu,
        labels=labels,
        priority=priority,
        created=created,
        **extra,
    )


ARGS = {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 0, "podGroupRejectPercentage": 10}


def plugin(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], groups: list[dict[str, Any]], **args: Any
) -> tuple[Coscheduling, Handle, list[Pod]]:
    c = ClusterState([Node(n) for n in nodes], ObjectStore(KubeObject(o) for o in groups))
    ps = [Pod(p, i) for i, p in enumerate(pods)]
    for p in ps:
        if p.node_name:
            c.add_pod(p, c.index[p.node_name])
    h = Handle(c)
    h.pods = ps
    return Coscheduling({**ARGS, **args}, h), h, ps


def by_name(ps: list[Pod], name: str) -> Pod:
    return next(p for p in ps if p.name == name)


NODE4 = [node("node", cpu="4")]


# ----- QueueSort -----------------------------------------------------------------------------------

T1, T2 = "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"


@pytest.mark.parametrize(
    ("p1", "p2", "groups", "want"),
    [
        # priorities first
        (member("p1", ns="ns1", priority=10), member("p2", ns="ns2", priority=100), [], False),
        (member("p1", ns="ns1", priority=100), member("p2", ns="ns2", priority=10), [], True),
        # then the queue timestamp (a replayed pod's creationTimestamp)
        (member("p1", ns="ns1", created=T1), member("p2", ns="ns2", created=T2), [], True),
        (member("p1", ns="ns1", created=T2), member("p2", ns="ns2", created=T1), [], False),
        (
            member("p1", "pg1", ns="ns1", priority=10),
            member("p2", ns="ns2", priority=100),
            [pg("pg1", ns="ns1")],
            False,
        ),
        (
            member("p1", "pg1", ns="ns1", priority=100),
            member("p2", ns="ns2", priority=10),
            [pg("pg1", ns="ns1")],
            True,
        ),
        # a member's timestamp is its group's creationTimestamp
        (
            member("p1", "pg1", ns="ns1", created=T2),
            member("p2", ns="ns2", created=T2),
            [pg("pg1", ns="ns1", created=T1)],
            True,
        ),
        (
            member("p1", "pg1", ns="ns1", created=T1),
            member("p2", ns="ns2", created=T1),
            [pg("pg1", ns="ns1", created=T2)],
            False,
        ),
        (
            member("p1", "pg1", ns="ns1", priority=100),
            member("p2", "pg1", ns="ns1", priority=10),
            [pg("pg1", ns="ns1", created=T1), pg("pg2", ns="ns2", created=T2)],
            True,
        ),
        (
            member("p1", "pg1", ns="ns1", created=T2),
            member("p2", "pg2", ns="ns2", created=T1),
            [pg("pg1", ns="ns1", created=T1), pg("pg2", ns="ns2", created=T2)],
            True,
        ),
        (
            member("p1", "pg2", ns="ns", priority=10),
            member("p2", "pg1", ns="ns", priority=100),
            [pg("pg1", ns="ns", created=T1), pg("pg2", ns="ns", created=T2)],
            False,
        ),
        # p1's group ns1/pg2 does not exist: p1's own timestamp (T1) against ns2/pg2's (T2)
        (
            member("p1", "pg2", ns="ns1", created=T1),
            member("p2", "pg2", ns="ns2", created=T1),
            [pg("pg1", ns="ns1", created=T1), pg("pg2", ns="ns2", created=T2)],
            True,
        ),
        (
            member("p1", ns="ns1", created=T1),
            member("p2", "pg2", ns="ns2", created=T1),
            [pg("pg2", ns="ns2", created=T2)],
            True,
        ),
        # same timestamp: the pods' namespace/name, not the groups' names
        (member("a", "g"), member("b", "g"), [pg("g")], True),
        (member("b-1", "a"), member("a-2", "b"), [pg("a"), pg("b")], False),
        (member("p", ns="ns1"), member("p", ns="ns0"), [], False),
        # a missing creationTimestamp is Go's zero time: before any other
        (member("p1", "g"), member("p2"), [pg("g", created=None)], True),
    ],
)
def test_less(p1: dict[str, Any], p2: dict[str, Any], groups: list[dict[str, Any]], want: bool) -> None:
    pl, _, ps = plugin(NODE4, [p1, p2], groups)
    assert pl.less(ps[0], ps[1]) is want


def test_less_after_a_schedule_failure() -> None:
    # core_test.go TestLessAfterScheduleFailure: pg1 is older than pg2 until pg1 fails
    groups = [pg("pg1", 3, created="2025-12-31T23:59:50Z"), pg("pg2", 3, created="2025-12-31T23:59:55Z")]
    pl, h, ps = plugin(NODE4, [member("p1", "pg1"), member("p2", "pg2")], groups)
    h.clock.start = T0
    p1, p2 = ps
    assert pl.less(p1, p2)
    pl.unreserve(CycleState(h.cluster), p1, "node")  # MarkPodGroupScheduleFailure at the replay time
    assert pl.creation_timestamp(p1) == T0
    assert not pl.less(p1, p2) and pl.less(p2, p1)
    pl.permit(CycleState(h.cluster), p1, "node")  # Wait: minMember 3 not reached, the failure stays
    assert not pl.less(p1, p2)
    pl.groups["default/pg1"] = replace(pl.groups["default/pg1"], min_member=1)
    pl.permit(CycleState(h.cluster), p1, "node")  # Success: ClearPodGroupScheduleFailure
    assert pl.less(p1, p2)


def test_the_queue_keeps_each_group_together() -> None:
    # input order interleaves two gangs and a lone pod; the gangs' creation times order the queue
    pods = [
        member("b-1", "b", created="2026-01-01T00:00:01Z", cpu="1"),
        member("a-1", "a", created="2026-01-01T00:00:05Z", cpu="1"),
        member("lone", created="2026-01-01T00:00:03Z", cpu="1"),
        member("b-2", "b", created="2026-01-01T00:00:02Z", cpu="1"),
        member("a-2", "a", created="2026-01-01T00:00:06Z", cpu="1"),
    ]
    groups = [pg("a", 2, created="2025-12-01T00:00:00Z"), pg("b", 2, created="2025-12-02T00:00:00Z")]
    rp = _replay([node("n1", cpu="8")], pods, groups)
    assert [p.name for p in rp.queue()] == ["a-1", "a-2", "b-1", "b-2", "lone"]


# ----- PreFilter -----------------------------------------------------------------------------------

TWO_NODES = [node("node-a", cpu="4"), node("node-b", cpu="4")]


@pytest.mark.parametrize(
    ("pod_name", "pods", "groups", "message"),
    [
        (
            "p",
            [member("p"), member("p1", "pg1", ns="ns"), member("p2", "pg2", ns="ns")],
            [pg("pg1", 1, ns="ns")],
            "",
        ),
        ("p", [member("p", "pg-non-existent", ns="ns")], [pg("pg1", 1, ns="ns")], ""),
        (
            "p",
            [member("p", "pg1", ns="ns"), member("pg2-1", "pg2", ns="ns")],
            [pg("pg1", 2, ns="ns"), pg("pg2", 2, ns="ns")],
            "pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 2",
        ),
        ("p1a", [member(f"p1{x}", "pg1", ns="ns") for x in "abc"][:2], [pg("pg1", 2, ns="ns")], ""),
        ("p1a", [member(f"p1{x}", "pg1", ns="ns") for x in "abc"], [pg("pg1", 2, ns="ns")], ""),
        # bound members count too
        (
            "p1a",
            [member("p1a", "pg1", ns="ns"), member("p1b", "pg1", ns="ns", node_name="node-a")],
            [pg("pg1", 2, ns="ns")],
            "",
        ),
        # members in another namespace do not
        (
            "p1a",
            [member("p1a", "pg1", ns="ns"), member("p1b", "pg1", ns="other")],
            [pg("pg1", 2, ns="ns")],
            "pre-filter pod p1a cannot find enough sibling pods, current pods number: 1, minMember of group: 2",
        ),
        (
            "p1a",
            [
                member("p1a", "pg1", ns="ns"),
                member("p1b", "pg1", ns="ns"),
                member("p1c", "pg1", ns="ns", gated=True),
            ],
            [pg("pg1", 2, ns="ns")],
            "",
        ),
        (
            "p1a",
            [
                member("p1a", "pg1", ns="ns"),
                member("p1b", "pg1", ns="ns", gated=True),
                member("p1c", "pg1", ns="ns"),
            ],
            [pg("pg1", 3, ns="ns")],
            "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup",
        ),
        (
            "p1a",
            [
                member("p1a", "pg1", ns="ns"),
                member("p1b", "pg1", ns="ns", gated=True),
                member("p1c", "pg1", ns="ns", gated=True),
            ],
            [pg("pg1", 2, ns="ns")],
            "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup",
        ),
        # two 4-CPU nodes: 6 CPUs fit (even if Filter would fail later), 10 do not
        (
            "p1a",
            [member(f"p1{x}", "pg1", ns="ns") for x in "abc"],
            [pg("pg1", 2, ns="ns", minResources={"cpu": "6"})],
            "",
        ),
        (
            "p1a",
            [member(f"p1{x}", "pg1", ns="ns") for x in "abc"],
            [pg("pg1", 2, ns="ns", minResources={"cpu": "10"})],
            # {10 0} - {4000 -3} = {6000 -3}; - {4000 -3} = {2000 -3}
            "resource gap: map[cpu:{{2000 -3} {<nil>}  DecimalSI}]",
        ),
        (
            "p1a",
            [member(f"p1{x}", "pg1", ns="ns") for x in "abc"],
            [pg("pg1", 2, ns="ns", minResources={})],  # an empty (non-nil) map still checks minMember pods
            "",
        ),
    ],
)
def test_pre_filter(
    pod_name: str, pods: list[dict[str, Any]], groups: list[dict[str, Any]], message: str
) -> None:
    pl, h, ps = plugin(TWO_NODES, pods, groups)
    res, s = pl.pre_filter(CycleState(h.cluster), by_name(ps, pod_name))
    assert res is None
    if message:
        assert s == Status(Code.UnschedulableAndUnresolvable, message)
    else:
        assert s.is_success()


GIB = 2**30


@pytest.mark.parametrize(
    ("nodes", "pods", "wanted", "gap"),
    [
        # core_test.go TestCheckClusterResource: two 3-CPU nodes
        (
            [node("node-a", cpu="3"), node("node-b", cpu="3")],
            [member("p1", node_name="node-a", cpu="2")],
            {"cpu": "4"},
            {},
        ),
        (
            [node("node-a", cpu="3"), node("node-b", cpu="3")],
            [member("p1", node_name="node-a", cpu="2"), member("p2", node_name="node-b", cpu="1")],
            {"cpu": "4"},
            {"cpu": (1000, -3, "DecimalSI")},
        ),
        (
            # p1 belongs to the group: its CPUs count as free
            [node("node-a", cpu="3"), node("node-b", cpu="3")],
            [member("p1", "pg1", node_name="node-a", cpu="2"), member("p2", node_name="node-b", cpu="1")],
            {"cpu": "4"},
            {},
        ),
        (
            TWO_NODES,
            [],
            {"cpu": "9500m", "memory": "20Gi", "pods": "300"},
            {
                "cpu": (1500, -3, "DecimalSI"),
                "memory": (20 * GIB - 16 * GIB, 0, "BinarySI"),  # 8Gi free on each node
                "pods": (80, 0, "DecimalSI"),  # 110 pods on each node
            },
        ),
        # a larger scale is brought down to the nodes' milli-CPUs
        (TWO_NODES, [], {"cpu": "1k"}, {"cpu": (1_000_000 - 8000, -3, "DecimalSI")}),
        (TWO_NODES, [], {"cpu": "8"}, {}),
        (TWO_NODES, [], {"cpu": "0"}, {}),
        # an extended resource: only on nodes that have it
        (
            [
                node("node-a", extra={"example.com/gpu": "1"}),
                node("node-b"),
                node("node-c", extra={"example.com/gpu": "1"}),
            ],
            [],
            {"example.com/gpu": "4"},
            {"example.com/gpu": (2, 0, "DecimalSI")},
        ),
        # no node has it: the request is left as parsed
        (TWO_NODES, [], {"example.com/gpu": "1.5"}, {"example.com/gpu": (15, -1, "DecimalSI")}),
        # a resource no node accounts (not a scalar resource name)
        (TWO_NODES, [], {"widgets": "2"}, {"widgets": (2, 0, "DecimalSI")}),
    ],
)
def test_resource_gap(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], wanted: dict[str, str], gap: dict[str, Any]
) -> None:
    pl, _, _ = plugin(nodes, pods, [pg("pg1", 1)])
    want = {k: parse_go_quantity(v) for k, v in wanted.items()}
    assert pl.resource_gap("default/pg1", want) == gap  # type: ignore[arg-type]


def test_resource_gap_message_lists_resources_in_key_order() -> None:
    gap = {"pods": (80, 0, "DecimalSI"), "cpu": (1500, -3, "DecimalSI"), "memory": (4 * GIB, 0, "BinarySI")}
    assert format_resource_gap(gap) == (
        "map[cpu:{{1500 -3} {<nil>}  DecimalSI} memory:{{4294967296 0} {<nil>}  BinarySI} "
        "pods:{{80 0} {<nil>}  DecimalSI}]"
    )


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("0", (0, 0, "DecimalSI")),
        ("10", (10, 0, "DecimalSI")),
        ("007", (7, 0, "DecimalSI")),
        ("500m", (500, -3, "DecimalSI")),
        ("1.5", (15, -1, "DecimalSI")),
        ("1.50", (150, -2, "DecimalSI")),
        ("2k", (2, 3, "DecimalSI")),
        ("6Gi", (6 * GIB, 0, "BinarySI")),
        ("1Ki", (1024, 0, "BinarySI")),
        ("1e3", (1, 3, "DecimalExponent")),
        ("1E-2", (1, -2, "DecimalExponent")),
        ("-3", (-3, 0, "DecimalSI")),
        ("100n", (100, -9, "DecimalSI")),
        ("1.5n", (2, -9, "DecimalSI")),  # finer than nano: rounded up
        ("1.5Gi", (15 * GIB, -1, "BinarySI")),
        ("12x", None),
        ("1e", None),
        ("abc", None),
    ],
)
def test_parse_go_quantity(text: str, want: tuple[int, int, str] | None) -> None:
    assert parse_go_quantity(text) == want


def test_a_group_that_passed_the_resource_check_is_not_checked_again_until_the_timeout() -> None:
    nodes = [node("node-a", cpu="4")]
    pods = [member("a", "g", cpu="1"), member("b", "g", cpu="1")]
    pl, h, ps = plugin(nodes, pods, [pg("g", 2, minResources={"cpu": "3"})], permitWaitingTimeSeconds=5)
    state = CycleState(h.cluster)
    assert pl.pre_filter(state, ps[0])[1].is_success()
    # 2 CPUs taken by a pod outside the group: the check would now fail
    other = Pod(member("x", node_name="node-a", cpu="2"), 9)
    h.cluster.add_pod(other, 0)
    h.clock.ns = 5 * NS  # the entry lives 5 s (inclusive)
    assert pl.pre_filter(state, ps[1])[1].is_success()
    h.clock.ns = 5 * NS + 1
    s = pl.pre_filter(state, ps[1])[1]
    assert s == Status(
        Code.UnschedulableAndUnresolvable, "resource gap: map[cpu:{{1000 -3} {<nil>}  DecimalSI}]"
    )


def test_a_zero_wait_keeps_a_passed_check_for_go_caches_default_3s() -> None:
    pods = [member("a", "g"), member("b", "g")]
    pl, h, ps = plugin(
        [node("node-a", cpu="4")], pods, [pg("g", 2, minResources={"cpu": "3"})], permitWaitingTimeSeconds=0
    )
    assert pl.pre_filter(CycleState(h.cluster), ps[0])[1].is_success()
    assert pl.permitted.expiry == {"default/g": 3 * NS}


# ----- PostFilter ----------------------------------------------------------------------------------

NO_STATUSES = NodeToStatus({}, Status(Code.UnschedulableAndUnresolvable))


@pytest.mark.parametrize(
    ("pods", "groups", "want"),
    [
        (
            [member("p", ns="ns")],
            [pg("pg1", 2, ns="ns")],
            Status(Code.Unschedulable, "can not find pod group"),
        ),
        (
            [member("p", "pg1", ns="ns"), member("p1", "pg1", ns="ns", node_name="node")],
            [pg("pg1", 1, ns="ns")],
            Status(Code.Unschedulable),
        ),
        (
            [member("p", "pg1", ns="ns"), member("p1", "pg1", ns="ns", node_name="node")],
            [pg("pg1", 2, ns="ns")],
            Status(
                Code.Unschedulable,
                "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",
            ),
        ),
    ],
)
def test_post_filter(pods: list[dict[str, Any]], groups: list[dict[str, Any]], want: Status) -> None:
    pl, h, ps = plugin(NODE4, pods, groups)
    res, s = pl.post_filter(CycleState(h.cluster), ps[0], NO_STATUSES)
    assert res is None
    assert s == want


@pytest.mark.parametrize(
    ("percentage", "min_member", "assigned", "rejects"),
    [
        (10, 10, 9, False),  # a 10% gap: not above the threshold
        (10, 10, 8, True),
        (0, 10, 9, True),  # 0: always reject
        (100, 10, 0, False),  # 100: never reject
        (50, 10, 6, False),
        (50, 10, 4, True),
    ],
)
def test_post_filter_reject_threshold(percentage: int, min_member: int, assigned: int, rejects: bool) -> None:
    pods = [member("p", "pg1", ns="ns")] + [
        member(f"assigned-{i}", "pg1", ns="ns", node_name="node") for i in range(assigned)
    ]
    pl, h, ps = plugin(NODE4, pods, [pg("pg1", min_member, ns="ns")], podGroupRejectPercentage=percentage)
    _, s = pl.post_filter(CycleState(h.cluster), ps[0], NO_STATUSES)
    if rejects:
        assert s == Status(
            Code.Unschedulable,
            "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",
        )
    else:
        assert s == Status(Code.Unschedulable)


def test_post_filter_rejects_the_waiting_members_and_backs_the_group_off() -> None:
    # coscheduling_test.go TestPodGroupBackoffTime
    pods = [member("pod1", "pg1", ns="ns"), member("pod2", "pg1", ns="ns"), member("pod3", "pg1", ns="ns")]
    other = member("stranger", "pg1", ns="elsewhere")
    pl, h, ps = plugin(NODE4, [*pods, other], [pg("pg1", 3, ns="ns")], podGroupBackoffSeconds=1)
    h.clock.start = T0
    state = CycleState(h.cluster)
    s, wait = pl.permit(state, ps[0], "node")
    assert s.code == Code.Wait and wait == 60
    h.waiting_pods.add(ps[0], "node", {"Coscheduling": 60 * NS})
    h.waiting_pods.add(ps[3], "node", {"Coscheduling": 60 * NS})
    _, s = pl.post_filter(state, ps[1], NO_STATUSES)
    assert s.reasons == (
        "PodGroup ns/pg1 gets rejected due to Pod pod2 is unschedulable even after PostFilter",
    )
    rejected = [(wp.get_pod().name, wp.status) for wp in h.waiting_pods.signalled]
    assert rejected == [("pod1", Status(Code.Unschedulable, "optimistic rejection in PostFilter"))]
    assert h.waiting_pods.signalled[0].status.plugin == "Coscheduling"  # type: ignore[union-attr]
    _, s = pl.pre_filter(state, ps[2])
    assert s == Status(Code.UnschedulableAndUnresolvable, "podGroup ns/pg1 failed recently")
    h.clock.ns = NS  # the backoff lasts 1 s, inclusive
    assert not pl.pre_filter(state, ps[2])[1].is_success()
    h.clock.ns = NS + 1
    assert pl.pre_filter(state, ps[2])[1].is_success()
    assert pl.creation_timestamp(ps[2]) == T0  # the failure time orders the group in the queue


def test_no_backoff_when_the_group_lacks_pods() -> None:
    pods = [member("pod1", "pg1"), member("pod2", "pg1")]
    pl, h, ps = plugin(NODE4, pods, [pg("pg1", 3)], podGroupBackoffSeconds=10)
    pl.post_filter(CycleState(h.cluster), ps[0], NO_STATUSES)
    assert pl.backed_off.expiry == {}


def test_post_filter_changes_nothing_in_a_dry_run() -> None:
    pods = [member("pod1", "pg1"), member("pod2", "pg1")]
    pl, h, ps = plugin(NODE4, pods, [pg("pg1", 2)], podGroupBackoffSeconds=10)
    wp = h.waiting_pods.add(ps[0], "node", {"Coscheduling": NS})
    h.waiting_pods.dry_run = True
    _, s = pl.post_filter(CycleState(h.cluster), ps[1], NO_STATUSES)
    assert s.code == Code.Unschedulable and s.reasons
    assert wp.status is None
    assert pl.backed_off.expiry == {} and pl.last_failed == {}


# ----- Permit and Unreserve ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pods", "groups", "code", "message", "wait"),
    [
        ([member("p", ns="ns")], [pg("pg1", 1, ns="ns"), pg("pg2", 2, ns="ns")], Code.Success, "", 0),
        (
            [member("p", "pg-non-existent", ns="ns")],
            [pg("pg1", 2, ns="ns")],
            Code.Unschedulable,
            "PodGroup not found",
            0,
        ),
        ([member("p", "pg2", ns="ns")], [pg("pg1", 1, ns="ns"), pg("pg2", 2, ns="ns")], Code.Wait, "", 60),
        ([member("p", "pg1", ns="ns")], [pg("pg1", 1, ns="ns"), pg("pg2", 2, ns="ns")], Code.Success, "", 0),
        # a bound member is counted
        (
            [member("p1a", "pg1", ns="ns"), member("p1b", "pg1", ns="ns", node_name="node")],
            [pg("pg1", 2, ns="ns")],
            Code.Success,
            "",
            0,
        ),
        # minMember 0 (absent): always enough
        ([member("p", "pg1", ns="ns")], [pg("pg1", None, ns="ns")], Code.Success, "", 0),
    ],
)
def test_permit(
    pods: list[dict[str, Any]], groups: list[dict[str, Any]], code: Code, message: str, wait: float
) -> None:
    pl, h, ps = plugin(NODE4, pods, groups)
    s, timeout = pl.permit(CycleState(h.cluster), ps[0], "node")
    assert s == Status(code, *((message,) if message else ()))
    assert timeout == wait


@pytest.mark.parametrize(
    ("plugin_seconds", "group_seconds", "want"),
    [
        (10, None, 10),
        (10, 5, 5),  # the group's scheduleTimeoutSeconds wins
        (10, 0, 10),  # a zero wait keeps the plugin's
        (0, None, 60),  # util.DefaultWaitTime
        (0, 0, 0),
    ],
)
def test_permit_wait_time(plugin_seconds: int, group_seconds: int | None, want: float) -> None:
    spec: dict[str, Any] = {} if group_seconds is None else {"scheduleTimeoutSeconds": group_seconds}
    pl, h, ps = plugin(
        NODE4,
        [member("a", "g"), member("b", "g")],
        [pg("g", 2, **spec)],
        permitWaitingTimeSeconds=plugin_seconds,
    )
    s, timeout = pl.permit(CycleState(h.cluster), ps[0], "node")
    assert s.code == Code.Wait
    assert timeout == want


def test_the_member_that_completes_the_group_allows_its_waiting_siblings() -> None:
    pods = [
        member("a", "g"),
        member("b", "g"),
        member("c", "g"),
        member("x", "g", ns="other"),
        member("y", "h"),
    ]
    pl, h, ps = plugin(NODE4, pods, [pg("g", 3), pg("g", 1, ns="other"), pg("h", 2)])
    state = CycleState(h.cluster)
    waiting = {}
    for p in (ps[0], ps[1], ps[4]):
        s, _ = pl.permit(state, p, "node")
        assert s.code == Code.Wait
        waiting[p.name] = h.waiting_pods.add(p, "node", {"Coscheduling": 60 * NS})
    waiting["x"] = h.waiting_pods.add(ps[3], "node", {"Coscheduling": 60 * NS})  # same name, other namespace
    s, _ = pl.permit(state, ps[2], "node")
    assert s == Status.success()
    assert {n: (wp.status.code if wp.status else None) for n, wp in waiting.items()} == {
        "a": Code.Success,
        "b": Code.Success,
        "y": None,
        "x": None,
    }
    assert pl.assigned == {"default/g": {"a", "b", "c"}, "default/h": {"y"}}


def test_unreserve_forgets_the_member_and_rejects_its_waiting_siblings() -> None:
    pods = [member("a", "g"), member("b", "g"), member("c", "g"), member("y", "h")]
    pl, h, ps = plugin(NODE4, pods, [pg("g", 3), pg("h", 2)])
    h.clock.start = T0
    state = CycleState(h.cluster)
    for p in (ps[0], ps[1], ps[3]):
        pl.permit(state, p, "node")
    wb = h.waiting_pods.add(ps[1], "node", {"Coscheduling": 60 * NS})
    wy = h.waiting_pods.add(ps[3], "node", {"Coscheduling": 60 * NS})
    pl.permitted.add("default/g", 0, NS)
    pl.unreserve(state, ps[0], "node")
    assert pl.assigned == {"default/g": {"b"}, "default/h": {"y"}}
    assert wb.status == Status(Code.Unschedulable, "rejection in Unreserve")
    assert wy.status is None
    assert pl.permitted.expiry == {}
    assert pl.last_failed == {"default/g": T0}
    pl.unreserve(state, ps[1], "node")
    assert pl.assigned == {"default/h": {"y"}}


def test_bad_pod_groups_are_input_errors() -> None:
    with pytest.raises(InputError) as e:
        plugin(NODE4, [], [pg("g", "three")])  # type: ignore[arg-type]
    assert "PodGroup default/g" in str(e.value) and "spec.minMember" in str(e.value)
    with pytest.raises(InputError) as e:
        plugin(NODE4, [], [pg("g", 2, minResources={"cpu": "lots"})])
    assert "spec.minResources.cpu" in str(e.value)


def test_pod_groups_of_other_api_groups_are_not_coscheduling_groups() -> None:
    other = pg("g", 5)
    other["apiVersion"] = "scheduling.volcano.sh/v1beta1"
    pl, _, ps = plugin(NODE4, [member("a", "g")], [other])
    assert pl.pod_group(ps[0]) == ("default/g", None)


def test_the_loader_keeps_pod_groups() -> None:
    snap = load_documents([("s", {"kind": "List", "items": [pg("g", 2), node("n")]})])
    assert [o.kind for o in snap.objects] == ["PodGroup"]


# ----- configuration -------------------------------------------------------------------------------


def _raw_config(args: dict[str, Any] | None = None, *, queue_sort: bool = True) -> dict[str, Any]:
    plugins: dict[str, Any] = {"multiPoint": {"enabled": [{"name": "Coscheduling"}]}}
    if queue_sort:
        plugins["queueSort"] = {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}
    profile: dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": plugins}
    if args is not None:
        profile["pluginConfig"] = [{"name": "Coscheduling", "args": args}]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }


def test_config_defaults_and_extension_points() -> None:
    cfg = load_config(_raw_config())
    prof = cfg.profiles[0]
    assert prof.plugin_args["Coscheduling"] == ARGS
    points = {p for p, refs in prof.plugins.items() if any(r.name == "Coscheduling" for r in refs)}
    assert points == {"queueSort", "preFilter", "postFilter", "reserve", "permit"}
    assert [r.name for r in prof.plugins["queueSort"]] == ["Coscheduling"]
    default = load_config(None).profiles[0]
    assert all(r.name != "Coscheduling" for refs in default.plugins.values() for r in refs)


def test_config_needs_one_queue_sort() -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_raw_config(queue_sort=False))
    assert "only one queue sort plugin required" in str(e.value)


@pytest.mark.parametrize(
    ("args", "problems"),
    [
        ({"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 5}, []),
        (
            {"permitWaitingTimeSeconds": -1},
            [
                "profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0"
            ],
        ),
        (
            {"podGroupBackoffSeconds": -2, "podGroupRejectPercentage": 101},
            [
                "profiles[0].pluginConfig[0].args.podGroupBackoffSeconds: Invalid value: -2: must be greater than 0",
                "profiles[0].pluginConfig[0].args.podGroupRejectPercentage: Invalid value: 101: must be between 0 and 100",
            ],
        ),
        (
            {"permitWaitingTime": 3},
            ['strict decoding error: unknown field "profiles[0].pluginConfig[0].args.permitWaitingTime"'],
        ),
    ],
)
def test_config_args(args: dict[str, Any], problems: list[str]) -> None:
    if not problems:
        cfg = load_config(_raw_config(args))
        assert cfg.profiles[0].plugin_args["Coscheduling"] == {**ARGS, **args}
        return
    with pytest.raises(ConfigError) as e:
        load_config(_raw_config(args))
    assert e.value.problems == problems


# ----- gangs replayed -------------------------------------------------------------------------------


def _replay(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    groups: list[dict[str, Any]],
    args: dict[str, Any] | None = None,
) -> Replay:
    from schedviz.engine.loader import Snapshot

    snap = Snapshot(
        nodes=[Node(n) for n in nodes],
        pods=[Pod(p, i) for i, p in enumerate(pods)],
        objects=[KubeObject(o) for o in groups],
    )
    return Replay(snap, load_config(_raw_config(args)))


def _summary(trace_cycles: list[CycleRecord]) -> list[tuple[str, str, str, str | None]]:
    return [(c.kind, c.pod.split("/")[1], c.result, c.selected_node) for c in trace_cycles]


def test_a_gang_binds_together_when_its_last_member_is_reserved() -> None:
    pods = [member(f"g-{i}", "g", cpu="2") for i in range(3)] + [member("solo", cpu="1")]
    rp = _replay([node("n1", cpu="4"), node("n2", cpu="4")], pods, [pg("g", 3)])
    trace = rp.run()
    s = _summary(trace.cycles)
    assert [x[:3] for x in s] == [
        ("Scheduling", "g-0", "Waiting"),
        ("Scheduling", "g-1", "Waiting"),
        ("Scheduling", "g-2", "Scheduled"),
        ("Binding", "g-0", "Scheduled"),
        ("Binding", "g-1", "Scheduled"),
        ("Scheduling", "solo", "Scheduled"),
    ]
    third = trace.cycles[2]
    assert [(e.action, e.pod, e.plugin) for e in third.permit_events] == [
        ("Allow", "default/g-0", "Coscheduling"),
        ("Allow", "default/g-1", "Coscheduling"),
    ]
    for rec, follows in zip(trace.cycles[3:5], (1, 2), strict=True):
        assert rec.follows == follows
        assert rec.time == third.time == pytest.approx(T0 + 0.02)
        assert rec.selected_node == trace.cycles[follows - 1].selected_node
        assert [st.point for st in rec.stages] == ["Bind"]
    waits = [e for c in trace.cycles[:2] for e in c.permit_events]
    assert [(e.action, e.plugin, e.timeout) for e in waits] == [("Wait", "Coscheduling", 60.0)] * 2
    assert all(rp.cluster.node_of(p) is not None for p in rp.snapshot.pods)


def test_a_gang_that_times_out_releases_every_reservation() -> None:
    # the third member belongs to another scheduler: the gang never completes here
    third = member("g-2", "g", cpu="2")
    third["spec"]["schedulerName"] = "other-scheduler"
    pods = [member("g-0", "g", cpu="2"), member("g-1", "g", cpu="2"), third, member("big", cpu="3")]
    rp = _replay(
        [node("n1", cpu="4"), node("n2", cpu="4")],
        pods,
        [pg("g", 3, created="2025-12-31T00:00:00Z", scheduleTimeoutSeconds=5)],
    )
    trace = rp.run()
    assert [x[:3] for x in _summary(trace.cycles)] == [
        ("Scheduling", "g-0", "Waiting"),
        ("Scheduling", "g-1", "Waiting"),
        ("Scheduling", "g-2", "NotHandled"),
        # 2 CPUs are held on each node while the gang waits
        ("Scheduling", "big", "Unschedulable"),
        ("Binding", "g-0", "Unschedulable"),
        ("Binding", "g-1", "Unschedulable"),
    ]
    big, r0, r1 = trace.cycles[3:]
    assert big.message_before_post_filter == "0/2 nodes are available: 2 Insufficient cpu."
    assert r0.time == r1.time == pytest.approx(T0 + 5)
    assert (
        r0.message
        == "0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin Coscheduling."
    )
    assert r1.message == "0/1 nodes are available: 1 rejection in Unreserve."
    assert [(e.action, e.pod, e.plugin, e.message) for e in r0.permit_events] == [
        (
            "Reject",
            "default/g-0",
            "Coscheduling",
            "rejected due to timeout after waiting 5s at plugin Coscheduling",
        ),
        ("Reject", "default/g-1", "Coscheduling", "rejection in Unreserve"),
    ]
    assert r1.permit_events == []
    for rec in (r0, r1):
        assert next((st.point, st.plugin) for st in rec.stages if st.point == "Unreserve") == (
            "Unreserve",
            "Coscheduling",
        )
    assert [int(x) for x in rp.cluster.pod_count] == [0, 0]
    assert len(rp.waiting) == 0


def test_a_member_that_does_not_fit_rejects_the_waiting_gang() -> None:
    # room for two 3-CPU members only: the third fails Filter and PostFilter rejects the other two
    pods = [member(f"g-{i}", "g", cpu="3") for i in range(3)] + [member("after", cpu="3")]
    rp = _replay(
        [node("n1", cpu="4"), node("n2", cpu="4")],
        pods,
        [pg("g", 3, created="2025-12-31T00:00:00Z")],
        {"podGroupBackoffSeconds": 30},
    )
    trace = rp.run()
    assert [x[:3] for x in _summary(trace.cycles)] == [
        ("Scheduling", "g-0", "Waiting"),
        ("Scheduling", "g-1", "Waiting"),
        ("Scheduling", "g-2", "Unschedulable"),
        ("Binding", "g-0", "Unschedulable"),
        ("Binding", "g-1", "Unschedulable"),
        ("Scheduling", "after", "Scheduled"),
    ]
    failed = trace.cycles[2]
    assert failed.message is not None
    assert failed.message.endswith(
        "PodGroup default/g gets rejected due to Pod g-2 is unschedulable even after PostFilter"
    )
    assert [(e.action, e.pod, e.message) for e in failed.permit_events] == [
        ("Reject", "default/g-0", "optimistic rejection in PostFilter"),
        ("Reject", "default/g-1", "optimistic rejection in PostFilter"),
    ]
    for rec in trace.cycles[3:5]:
        assert rec.message == "0/1 nodes are available: 1 optimistic rejection in PostFilter."
        assert rec.time == pytest.approx(T0 + 0.02)
    pl = rp.frameworks["default-scheduler"].instances["Coscheduling"]
    assert pl.backed_off.has("default/g", rp.clock.ns)
    assert pl.last_failed == {"default/g": pytest.approx(T0 + 0.02)}


def test_a_group_that_can_never_reach_min_member_is_rejected_at_pre_filter() -> None:
    pods = [member("g-0", "g", cpu="1"), member("g-1", "g", cpu="1")]
    rp = _replay([node("n1", cpu="4"), node("n2", cpu="4")], pods, [pg("g", 3)])
    trace = rp.run()
    assert [c.result for c in trace.cycles] == ["Unschedulable", "Unschedulable"]
    for c, name in zip(trace.cycles, ("g-0", "g-1"), strict=True):
        msg = f"pre-filter pod {name} cannot find enough sibling pods, current pods number: 2, minMember of group: 3"
        stage = next(st for st in c.stages if st.point == "PreFilter" and st.plugin == "Coscheduling")
        assert (stage.code, stage.reason) == ("UnschedulableAndUnresolvable", msg)
        assert c.message_before_post_filter == f"0/2 nodes are available: {msg}."
        assert c.message is not None
        assert c.message.endswith(
            f"PodGroup default/g gets rejected due to Pod {name} is unschedulable even after PostFilter"
        )
    assert all(int(x) == 0 for x in rp.cluster.pod_count)


def test_min_resources_in_a_replay() -> None:
    pods = [member("g-0", "g", cpu="1"), member("g-1", "g", cpu="1")]
    groups = [pg("g", 2, minResources={"cpu": "9", "memory": "1Gi"})]
    trace = _replay([node("n1", cpu="4"), node("n2", cpu="4")], pods, groups).run()
    msg = "resource gap: map[cpu:{{1000 -3} {<nil>}  DecimalSI}]"
    assert [c.message_before_post_filter for c in trace.cycles] == [f"0/2 nodes are available: {msg}."] * 2
