"""Preemption in the replay: victims evicted, the preemptor nominated and retried after its backoff,
nominated pods honoured by later cycles' filters.

Mirrors schedule_one.go (handleSchedulingFailure, findNodesThatFitPod's evaluateNominatedNode),
framework/runtime/framework.go (RunFilterPluginsWithNominatedPods, addGENominatedPods),
framework/preemption/preemption.go (prepareCandidate: deletions, waiting victims rejected, lower
priority nominations cleared) and backend/queue (nominator.go, backoff_queue.go: 1s initial backoff
doubling up to 10s, the one-second ordering window of SchedulerPopFromBackoffQ, popping the
backoffQ when the activeQ is empty). Expected outcomes are worked out from those rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from schedviz.engine import load_config
from schedviz.engine.framework import Clock, Code, CycleState, Handle, Status
from schedviz.engine.loader import Snapshot
from schedviz.engine.objects import KubeObject, Node, Pod
from schedviz.engine.runtime import registry
from schedviz.engine.runtime.queue import SchedulingQueue
from schedviz.engine.runtime.replay import Replay, ReplayOptions
from schedviz.engine.trace import CycleRecord, ReplayTrace
from tests.engine.builders import node, pod

T0 = 1767225600.0  # 2026-01-01T00:00:00Z: the builders' creationTimestamp, where the clock starts
NS = 1_000_000_000
HOSTNAME = "kubernetes.io/hostname"


def P(
    name: str,
    prio: int,
    cpu: str = "2",
    *,
    on: str | None = None,
    nominated: str | None = None,
    started: str | None = None,
    created: str = "2026-01-01T00:00:00Z",
    labels: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A pod of priority ``prio``: running ``on`` a node, or pending (``nominated`` to a node)."""
    p = pod(name, cpu=cpu, priority=prio, node_name=on, created=created, labels=labels, **spec)
    status: dict[str, Any] = {}
    if nominated:
        status["nominatedNodeName"] = nominated
    if started:
        status["startTime"] = started
    if status:
        p["status"] = status
    return p


def pdb(name: str, match: dict[str, str], allowed: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": match}},
        "status": {"disruptionsAllowed": allowed},
    }


def anti_affinity(**match: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": match}, "topologyKey": HOSTNAME}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def replay(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    objects: list[dict[str, Any]] = (),  # type: ignore[assignment]
    config: dict[str, Any] | None = None,
    **options: Any,
) -> Replay:
    snap = Snapshot(
        nodes=[Node(n) for n in nodes],
        pods=[Pod(p, i) for i, p in enumerate(pods)],
        objects=[KubeObject(o) for o in objects],
    )
    return Replay(snap, load_config(config), ReplayOptions(**options))


def records(trace: ReplayTrace, pod_name: str) -> list[CycleRecord]:
    return [c for c in trace.cycles if c.pod == f"default/{pod_name}"]


def verdict(trace: ReplayTrace, c: CycleRecord, node_name: str) -> tuple[str, str, tuple[str, ...]]:
    """(code, plugin, reasons) of ``node_name`` in cycle ``c``."""
    assert c.filter_codes is not None and c.filter_plugins is not None and c.filter_reasons is not None
    i = trace.node_names.index(node_name)
    code = int(c.filter_codes[i])
    pid, rid = int(c.filter_plugins[i]), int(c.filter_reasons[i])
    plugin = c.filter_plugin_names[pid] if pid >= 0 else ""
    return Code(code).name, plugin, trace.reasons[rid] if rid >= 0 else ()


def placed(rp: Replay) -> dict[str, str]:
    """Every pod the cluster holds now -> its node."""
    return {p.name: rp.cluster.names[rp.cluster.pod_node[p.uid]] for p in rp.cluster.assigned_pods()}


# ----- the preemptor evicts, is nominated and lands in a later cycle ---------------------------------


def test_preemptor_evicts_and_lands_on_the_nominated_node_in_a_later_cycle() -> None:
    # n1's victim has the lower priority (0 < 10): n1 is the candidate picked.
    rp = replay(
        [node("n1", cpu="2"), node("n2", cpu="2")],
        [P("low", 0, on="n1"), P("mid", 10, on="n2"), P("pre", 100)],
    )
    trace = rp.run()
    first, second = records(trace, "pre")
    assert [c.pod for c in trace.cycles] == ["default/pre", "default/pre"]

    assert (first.attempt, first.result, first.nominated_node) == (1, "Unschedulable", "n1")
    assert first.message == "0/2 nodes are available: 2 Insufficient cpu."  # PostFilter succeeded: no suffix
    assert first.post_filter["victims"] == ["default/low"]
    assert [(e.time, e.pod, e.node, e.preemptor) for e in first.evictions] == [
        (T0, "default/low", "n1", "default/pre")
    ]

    # The activeQ is empty: the backoffQ's head is popped at once (SchedulerPopFromBackoffQ).
    assert second.time == pytest.approx(T0 + 0.01)
    assert (second.attempt, second.result, second.selected_node) == (2, "Scheduled", "n1")
    # evaluateNominatedNode: the nominated node alone, feasible, selected without scoring
    assert second.tried_nominated_node == "n1"
    assert second.evaluation_order is not None and second.evaluation_order.tolist() == [0]
    assert not second.scored

    assert placed(rp) == {"mid": "n2", "pre": "n1"}
    assert [p.name for p in rp.handle.pods] == ["mid", "pre"]  # the informer no longer lists the victim
    assert not rp.nominator  # assumed: no longer nominated
    assert {k: f.result for k, (_, f) in trace.pod_records().items()} == {"default/pre": "Scheduled"}


def test_the_trace_json_shows_the_nomination_evictions_and_the_later_attempt() -> None:
    rp = replay([node("n1", cpu="2")], [P("low", 0, on="n1"), P("pre", 100)])
    d = rp.run().to_dict(nodes=False)
    assert d["formatVersion"] == 3
    first, second = d["cycles"]
    assert (first["attempt"], first["nominatedNode"], first["postFilter"]["victims"]) == (
        1,
        "n1",
        ["default/low"],
    )
    assert first["evictions"] == [
        {"time": T0, "pod": "default/low", "node": "n1", "preemptor": "default/pre"}
    ]
    assert "triedNominatedNode" not in first and "clearedNominations" not in first
    assert (second["attempt"], second["triedNominatedNode"], second["selectedNode"]) == (2, "n1", "n1")
    assert second["evaluatedNodes"] == 1 and "evictions" not in second


@pytest.mark.parametrize(
    ("objects", "victim", "node_name"),
    [
        # Tied on priorities and counts: the candidate whose victim started last wins (a, on n1).
        ([], "a", "n1"),
        # a's PodDisruptionBudget allows no disruption: n1 violates it, n2 does not.
        ([pdb("pdb-a", {"app": "a"}, 0)], "b", "n2"),
        # a budget with room left is no violation
        ([pdb("pdb-a", {"app": "a"}, 1)], "a", "n1"),
    ],
)
def test_a_pdb_makes_the_preemptor_choose_another_node(
    objects: list[dict[str, Any]], victim: str, node_name: str
) -> None:
    rp = replay(
        [node("n1", cpu="2"), node("n2", cpu="2")],
        [
            P("a", 0, on="n1", labels={"app": "a"}, started="2026-01-01T00:10:00Z"),
            P("b", 0, on="n2", labels={"app": "b"}, started="2026-01-01T00:00:00Z"),
            P("pre", 100),
        ],
        objects,
    )
    trace = rp.run()
    first, second = records(trace, "pre")
    assert first.nominated_node == node_name
    assert [e.pod for e in first.evictions] == [f"default/{victim}"]
    assert (second.result, second.selected_node) == ("Scheduled", node_name)
    survivor = "b" if victim == "a" else "a"
    assert placed(rp) == {survivor: "n2" if survivor == "b" else "n1", "pre": node_name}


def test_preemption_policy_never_evicts_nothing_and_is_not_retried() -> None:
    rp = replay([node("n1", cpu="2")], [P("low", 0, on="n1"), P("pre", 100, preemptionPolicy="Never")])
    trace = rp.run()
    (only,) = trace.cycles
    assert only.result == "Unschedulable"
    assert only.message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."
    )
    assert only.nominated_node is None and not only.evictions
    assert placed(rp) == {"low": "n1"}
    assert not rp.nominator


def test_dry_run_records_the_preemption_and_changes_nothing() -> None:
    def run(mode: str) -> tuple[Replay, ReplayTrace]:
        rp = replay(
            [node("n1", cpu="2")],
            [P("low", 0, on="n1"), P("pre", 100), P("small", 0, cpu="1")],
            preemption=mode,
        )
        return rp, rp.run()

    dry, dry_trace = run("dry-run")
    assert [c.pod for c in dry_trace.cycles] == ["default/pre", "default/small"]  # no retry
    pre = dry_trace.cycles[0]
    assert (pre.result, pre.nominated_node, pre.post_filter["victims"]) == (
        "Unschedulable",
        "n1",
        ["default/low"],
    )
    assert not pre.evictions
    assert placed(dry) == {"low": "n1"}
    assert not dry.nominator  # PostFilter's nomination is not applied
    assert all(c.attempt == 1 for c in dry_trace.cycles)

    # The first cycle is the same in both modes; only what follows differs.
    _, evict_trace = run("evict")
    first = evict_trace.cycles[0]
    assert (first.result, first.message, first.nominated_node, first.post_filter) == (
        pre.result,
        pre.message,
        pre.nominated_node,
        pre.post_filter,
    )
    assert [c.pod for c in evict_trace.cycles] == ["default/pre", "default/small", "default/pre"]


def test_unknown_preemption_mode_is_an_input_error() -> None:
    from schedviz.engine.errors import InputError

    with pytest.raises(InputError, match="unsupported preemption mode 'always'"):
        replay([node("n1")], [], preemption="always")


# ----- nominated pods in later cycles ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("prio", "mode", "result", "n1_verdict"),
    [
        # A higher-priority pod ignores a lower-priority nomination.
        (100, "evict", "Scheduled", ("Success", "", ())),
        # Priority >= the pod's: the nominated pod counts as running on n1 (first pass), so n1 is full.
        (10, "evict", "Unschedulable", ("Unschedulable", "NodeResourcesFit", ("Insufficient cpu",))),
        # Queued after the nominee, whose own failed cycle cleared its nomination (its PostFilter
        # found nothing to preempt for it): nothing is reserved any more.
        (5, "evict", "Scheduled", ("Success", "", ())),
        # As a dry run, PostFilter clears no nomination: the snapshot's still holds n1.
        (5, "dry-run", "Unschedulable", ("Unschedulable", "NodeResourcesFit", ("Insufficient cpu",))),
    ],
)
def test_nominated_pods_hold_their_node_against_pods_of_lower_or_equal_priority(
    prio: int, mode: str, result: str, n1_verdict: tuple[str, str, tuple[str, ...]]
) -> None:
    # "nominee" (priority 10) was nominated to n1 by an earlier preemption; it now needs an SSD node,
    # which n1 is not, so it never runs there itself. "x" is queued before it at priority 10 (created
    # earlier), after it at priority 5.
    rp = replay(
        [node("n1", cpu="2")],
        [
            P("nominee", 10, nominated="n1", created="2026-01-01T00:00:05Z", nodeSelector={"disk": "ssd"}),
            P("x", prio, created="2026-01-01T00:00:01Z"),
        ],
        preemption=mode,
    )
    trace = rp.run()
    (x,) = records(trace, "x")
    assert x.result == result
    assert verdict(trace, x, "n1") == n1_verdict
    if result == "Unschedulable":
        assert x.message == (
            "0/1 nodes are available: 1 Insufficient cpu. "
            "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
        )
    (nominee,) = records(trace, "nominee")
    assert (nominee.tried_nominated_node, nominee.result) == ("n1", "Unschedulable")


def test_the_preemptors_nomination_holds_the_freed_room_until_its_retry() -> None:
    # pre evicts low from n1; "later" (priority 50, 1 CPU) would fit in the freed room but pre's
    # nomination (priority 100 >= 50) keeps it; pre then lands there.
    rp = replay([node("n1", cpu="2")], [P("low", 0, on="n1"), P("pre", 100), P("later", 50, cpu="1")])
    trace = rp.run()
    assert [(c.pod, c.attempt, c.result) for c in trace.cycles] == [
        ("default/pre", 1, "Unschedulable"),
        ("default/later", 1, "Unschedulable"),
        ("default/pre", 2, "Scheduled"),
    ]
    later = trace.cycles[1]
    assert verdict(trace, later, "n1") == ("Unschedulable", "NodeResourcesFit", ("Insufficient cpu",))
    assert later.message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    assert trace.cycles[2].time == pytest.approx(T0 + 0.02)
    assert placed(rp) == {"pre": "n1"}


def test_preemption_clears_lower_priority_nominations_on_its_node() -> None:
    # "nominee" (priority 50) is nominated to n1 in the snapshot; pre (100) preempts on n1, which
    # clears that nomination (getLowerPriorityNominatedPods); nominee's cycle then has no nominated
    # node to try and finds n1 held for pre.
    rp = replay(
        [node("n1", cpu="2")],
        [P("low", 0, on="n1"), P("pre", 100), P("nominee", 50, cpu="1", nominated="n1")],
    )
    trace = rp.run()
    pre, nominee, retry = trace.cycles
    assert [(e.time, e.pod, e.node) for e in pre.cleared_nominations] == [(T0, "default/nominee", "n1")]
    assert [e.pod for e in pre.evictions] == ["default/low"]
    d = trace.to_dict(nodes=False)["cycles"][0]
    assert d["clearedNominations"] == [{"time": T0, "pod": "default/nominee", "node": "n1"}]
    assert nominee.pod == "default/nominee" and nominee.tried_nominated_node is None
    assert verdict(trace, nominee, "n1") == ("Unschedulable", "NodeResourcesFit", ("Insufficient cpu",))
    assert (retry.pod, retry.result, retry.selected_node) == ("default/pre", "Scheduled", "n1")
    assert rp.nominator.status_of(rp.snapshot.pods[2]) == ""


@pytest.mark.parametrize(
    ("x_spec", "nominee_spec", "running", "n1_verdict"),
    [
        # x's anti-affinity sees the nominee on n1 (InterPodAffinity's AddPod on a cloned state).
        (
            {"affinity": anti_affinity(app="nominee")},
            {},
            [],
            ("Unschedulable", "InterPodAffinity", ("node(s) didn't match pod anti-affinity rules",)),
        ),
        # The nominee's anti-affinity against x: InterPodAffinity skipped its PreFilter for x (no
        # term of x, no running pod's term against x), so no AddPod runs and its Filter is skipped.
        ({}, {"affinity": anti_affinity(app="x")}, [], ("Success", "", ())),
        # With a running pod's term against x, InterPodAffinity runs: AddPod counts the nominee's.
        (
            {},
            {"affinity": anti_affinity(app="x")},
            [P("guard", 1000, cpu="1", on="n2", labels={"app": "guard"}, affinity=anti_affinity(app="x"))],
            (
                "Unschedulable",
                "InterPodAffinity",
                ("node(s) didn't satisfy existing pods anti-affinity rules",),
            ),
        ),
    ],
)
def test_nominated_pods_reach_pre_filter_state_through_add_pod(
    x_spec: dict[str, Any],
    nominee_spec: dict[str, Any],
    running: list[dict[str, Any]],
    n1_verdict: tuple[str, str, tuple[str, ...]],
) -> None:
    rp = replay(
        [node("n1", cpu="4"), node("n2", cpu="4")],
        [
            *running,
            P("x", 50, cpu="1", labels={"app": "x"}, created="2026-01-01T00:00:01Z", **x_spec),
            P(
                "nominee",
                50,
                cpu="1",
                labels={"app": "nominee"},
                nominated="n1",
                created="2026-01-01T00:00:05Z",
                **nominee_spec,
            ),
        ],
    )
    trace = rp.run()
    x = records(trace, "x")[0]
    assert verdict(trace, x, "n1") == n1_verdict
    nominee = records(trace, "nominee")[0]
    assert nominee.tried_nominated_node == "n1"


def test_a_nominated_node_that_no_longer_fits_falls_back_to_the_full_search() -> None:
    # The snapshot nominates "nominee" to n1, which a more important pod now fills: the cycle tries
    # n1 alone, then searches every node and lands on n2.
    rp = replay(
        [node("n1", cpu="2"), node("n2", cpu="2")],
        [P("vip", 1000, on="n1"), P("nominee", 10, nominated="n1")],
    )
    trace = rp.run()
    (c,) = trace.cycles
    assert (c.tried_nominated_node, c.result, c.selected_node) == ("n1", "Scheduled", "n2")
    assert c.evaluation_order is not None and sorted(c.evaluation_order.tolist()) == [0, 1]
    assert verdict(trace, c, "n1") == ("Unschedulable", "NodeResourcesFit", ("Insufficient cpu",))


def test_a_failed_nominated_node_the_search_does_not_reach_still_counts() -> None:
    # 120 nodes: the search wants 100 feasible nodes and stops after n000..n099. The nominated node
    # n119 (full) failed first: its status stays in the diagnosis, so it is reported as evaluated
    # and the next search starts one node further (processedNodes counts it).
    nodes = [node(f"n{i:03d}", cpu="2") for i in range(120)]
    rp = replay(
        nodes,
        [
            P("vip", 1000, on="n119"),
            P("nominee", 10, cpu="1", nominated="n119"),
            P("next", 0, cpu="1", created="2026-01-01T00:00:01Z"),
        ],
    )
    trace = rp.run()
    nominee, nxt = trace.cycles
    assert nominee.nodes_to_find == 100 and nominee.selected_node is not None
    assert nominee.evaluation_order is not None and len(nominee.evaluation_order) == 101
    assert verdict(trace, nominee, "n119") == ("Unschedulable", "NodeResourcesFit", ("Insufficient cpu",))
    assert nxt.start_index == 101


def test_two_preemptors_come_back_in_backoff_then_priority_order() -> None:
    # hi (200) preempts low on n1; pre (100) finds n1 held for hi and preempts mid on n2. Both back
    # off until the same second; the backoffQ gives hi first, then pre.
    rp = replay(
        [node("n1", cpu="2"), node("n2", cpu="2")],
        [P("low", 0, on="n1"), P("mid", 50, on="n2"), P("hi", 200), P("pre", 100)],
    )
    trace = rp.run()
    assert [(c.pod, c.attempt, c.result, c.selected_node or c.nominated_node) for c in trace.cycles] == [
        ("default/hi", 1, "Unschedulable", "n1"),
        ("default/pre", 1, "Unschedulable", "n2"),
        ("default/hi", 2, "Scheduled", "n1"),
        ("default/pre", 2, "Scheduled", "n2"),
    ]
    pre = trace.cycles[1]
    assert verdict(trace, pre, "n1") == ("Unschedulable", "NodeResourcesFit", ("Insufficient cpu",))
    assert [e.pod for e in pre.evictions] == ["default/mid"]
    assert placed(rp) == {"hi": "n1", "pre": "n2"}


# ----- backoff on the replay clock -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "initial", "maximum", "want_seconds"),
    [(1, 1, 10, 1), (2, 1, 10, 2), (3, 1, 10, 4), (4, 1, 10, 8), (5, 1, 10, 10), (9, 1, 10, 10), (70, 1, 10, 10),
     (1, 3, 10, 3), (2, 3, 10, 6), (3, 3, 10, 10), (1, 5, 5, 5)],
)  # fmt: skip
def test_backoff_doubles_per_attempt_up_to_the_maximum(
    count: int, initial: int, maximum: int, want_seconds: int
) -> None:
    q = SchedulingQueue([], None, Clock(T0), initial, maximum)
    assert q.backoff_duration_ns(count) == want_seconds * NS


@pytest.mark.parametrize(
    ("start", "window", "fail_ns", "failures", "want_release_ns"),
    [
        # ordering window on: the expiry is rounded down to the whole second, the flush at that
        # second still sees the pod backing off, the next one releases it
        (T0, True, 0, 1, 2 * NS),
        (T0, True, 250_000_000, 1, 2 * NS),
        (T0, True, 0, 2, 3 * NS),  # second failure at 0: 2s
        (T0 + 0.5, True, 0, 1, 1_500_000_000),  # expiry T0+1.5 -> window T0+1 -> flush T0+2
        # window off: exact expiry; the flush runs every second from the replay's start
        (T0, False, 0, 1, 2 * NS),
        (T0 + 0.5, False, 0, 1, 2 * NS),
        (T0, False, 250_000_000, 1, 2 * NS),
    ],
)
def test_backoff_release_time(
    start: float, window: bool, fail_ns: int, failures: int, want_release_ns: int
) -> None:
    p = Pod(P("pre", 100))
    q = SchedulingQueue([], None, Clock(start), 1, 10, pop_from_backoff_q=window)
    qp = q.requeue(p, True, fail_ns)
    for _ in range(failures - 1):
        qp = q.requeue(p, True, fail_ns)
    assert qp.release_ns == want_release_ns
    assert q.next_pop_time(fail_ns + 1) == (fail_ns + 1 if window else want_release_ns)


@pytest.mark.parametrize(
    ("created", "features", "config", "fillers", "want_retry"),
    [
        # Other pods still queued: the preemptor waits out its backoff. It failed at T0: expiry
        # T0+1 (1s), released by the flush at T0+2, then first in line (priority 100).
        ("2026-01-01T00:00:00Z", {}, None, 10, T0 + 2.0),
        # podInitialBackoffSeconds 3: expiry T0+3, released at T0+4
        ("2026-01-01T00:00:00Z", {}, {"podInitialBackoffSeconds": 3}, 10, T0 + 4.0),
        # The clock starts at T0+0.5: expiry T0+1.5, rounded down to T0+1, released at T0+2 ...
        ("2026-01-01T00:00:00.5Z", {}, None, 10, T0 + 2.0),
        # ... without the ordering window: exact expiry T0+1.5, flushes at T0+1.5 (still backing
        # off) and T0+2.5
        ("2026-01-01T00:00:00.5Z", {"SchedulerPopFromBackoffQ": False}, None, 10, T0 + 2.5),
        # Nothing else queued: the backoffQ is popped at once, one cycle later ...
        ("2026-01-01T00:00:00Z", {}, None, 0, T0 + 0.5),
        # ... unless the feature is off: the replay clock jumps to the flush that releases it.
        ("2026-01-01T00:00:00Z", {"SchedulerPopFromBackoffQ": False}, None, 0, T0 + 2.0),
    ],
)
def test_the_preemptor_comes_back_after_its_backoff_on_the_replay_clock(
    created: str, features: dict[str, bool], config: dict[str, Any] | None, fillers: int, want_retry: float
) -> None:
    # Fillers (priority 0, too big for any node) keep the activeQ busy, one every 0.5s.
    pods = [P("low", 0, on="n1", created=created), P("pre", 100, created=created)]
    pods += [P(f"filler-{k:02d}", 0, cpu="100", created=created) for k in range(fillers)]
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        **(config or {}),
    }
    rp = replay([node("n1", cpu="2")], pods, config=cfg, cycle_seconds=0.5, features=features)
    trace = rp.run()
    first, second = records(trace, "pre")
    start = rp.clock.start
    assert first.time == pytest.approx(start)
    assert second.time == pytest.approx(want_retry)
    assert (second.attempt, second.result) == (2, "Scheduled")
    if fillers:  # the fillers kept their 0.5s pace around it
        times = [c.time - start for c in trace.cycles]
        assert times == pytest.approx([0.5 * k for k in range(len(times))])


# ----- a victim waiting at Permit is rejected, not deleted -------------------------------------------


class _ByName:
    """QueueSort by pod name, so that a low-priority pod can be scheduled before a preemptor."""

    name = "ByName"

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        pass

    def less(self, a: Pod, b: Pod) -> bool:
        return a.name < b.name


class _HoldAtPermit:
    """Holds pods labelled hold=yes at Permit for a minute."""

    name = "HoldAtPermit"

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        pass

    def permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, float]:
        if pod.labels.get("hold") == "yes":
            return Status(Code.Wait), 60.0
        return Status.success(), 0.0


@pytest.fixture
def _custom(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for cls in (_ByName, _HoldAtPermit):
        monkeypatch.setitem(registry._extra, cls.name, cls)
    yield


@pytest.mark.usefixtures("_custom")
def test_a_victim_waiting_at_permit_is_rejected_instead_of_deleted() -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "queueSort": {"enabled": [{"name": "ByName"}], "disabled": [{"name": "*"}]},
                    "permit": {"enabled": [{"name": "HoldAtPermit"}]},
                },
            }
        ],
    }
    rp = replay(
        [node("n1", cpu="2")], [P("b-pre", 100), P("a-held", 0, labels={"hold": "yes"})], config=config
    )
    trace = rp.run()
    assert [(c.pod, c.kind, c.result) for c in trace.cycles] == [
        ("default/a-held", "Scheduling", "Waiting"),
        ("default/b-pre", "Scheduling", "Unschedulable"),
        ("default/a-held", "Binding", "Unschedulable"),
        ("default/b-pre", "Scheduling", "Scheduled"),
    ]
    _, pre, released, retry = trace.cycles
    assert pre.post_filter["victims"] == ["default/a-held"] and not pre.evictions
    assert [(e.pod, e.action, e.plugin, e.message) for e in pre.permit_events] == [
        ("default/a-held", "Reject", "DefaultPreemption", "preempted")
    ]
    assert released.message == "0/1 nodes are available: 1 preempted."
    assert (retry.attempt, retry.selected_node, retry.tried_nominated_node) == (2, "n1", "n1")
    assert placed(rp) == {"b-pre": "n1"}
    assert [p.name for p in rp.handle.pods] == ["b-pre", "a-held"]  # rejected, not deleted


# ----- the command line ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "records"), [([], 2), (["--preemption", "evict"], 2), (["--preemption", "dry-run"], 1)]
)
def test_cli_replay_preemption_option(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], flag: list[str], records: int
) -> None:
    import json

    import yaml

    from schedviz.cli import main

    f = tmp_path / "c.yaml"
    items = [node("n1", cpu="2"), P("low", 0, on="n1"), P("pre", 100)]
    f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    assert main(["replay", str(f), "--format", "json", *flag]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["cycles"]) == records
    assert out["options"]["preemption"] == (flag[1] if flag else "evict")
    assert main(["replay", str(f), *flag]) == 0
    table = capsys.readouterr().out
    assert "nominated to n1" in table
    assert ("evicted default/low from n1" in table) == (records == 2)
    assert ("(attempt 2)" in table) == (records == 2)
