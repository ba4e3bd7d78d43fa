"""Permit in the replay: Allow, Deny, Wait and its timeouts, waiting pods, Binding records, replay time.

Mirrors framework/runtime/framework.go (RunPermitPlugins, WaitOnPermit), waiting_pods_map.go and
schedule_one.go (schedulingCycle, bindingCycle, handleBindingCycleError).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from schedviz.engine import load_config
from schedviz.engine.framework import Clock, Code, CycleState, Handle, Status, WaitingPods
from schedviz.engine.loader import Snapshot
from schedviz.engine.objects import KubeObject, Node, Pod
from schedviz.engine.runtime import registry
from schedviz.engine.runtime.replay import Replay, ReplayOptions, start_time
from schedviz.engine.trace import CycleRecord
from tests.engine.builders import node, pod

T0 = 1767225600.0  # 2026-01-01T00:00:00Z, the builders' creationTimestamp
LOG: list[str] = []


class _Permit:
    """A Permit plugin driven by the pod's label ``permit.test/<name>``:
    allow (default), deny, unresolvable, error, skip, wait=<seconds>, release (allow every waiting
    pod, then Success), reject (reject every waiting pod, then Success), remove (reject every
    waiting pod through the handle, then Success)."""

    name = "PermitA"

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle

    def permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, float]:
        action = pod.labels.get(f"permit.test/{self.name}", "allow")
        LOG.append(f"permit {self.name} {pod.name}")
        if action.startswith("wait="):
            return Status(Code.Wait), float(action[5:])
        if action == "deny":
            return Status(Code.Unschedulable, f"denied by {self.name}"), 0.0
        if action == "unresolvable":
            return Status(Code.UnschedulableAndUnresolvable, f"never on {node}"), 0.0
        if action == "error":
            return Status(Code.Error, "boom"), 0.0
        if action == "skip":
            return Status(Code.Skip), 0.0
        for wp in self.handle.iterate_over_waiting_pods():
            if action == "release":
                wp.allow(self.name)
            elif action == "reject":
                wp.reject(self.name, f"rejected by {self.name}")
            elif action == "remove":
                assert self.handle.reject_waiting_pod(wp.get_pod().uid)
        return Status.success(), 0.0


class _PermitB(_Permit):
    name = "PermitB"


class _Recorder:
    """Reserve, PreBindPreFlight, PreBind and PostBind that log their calls; ``preflight.test`` makes
    PreBindPreFlight fail."""

    name = "R1"

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        pass

    def reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        LOG.append(f"reserve {self.name} {pod.name}")
        return Status.success()

    def unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        LOG.append(f"unreserve {self.name} {pod.name}")

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node: str) -> Status:
        if pod.labels.get("preflight.test") == "error":
            return Status(Code.Error, "no flight")
        return Status.success()

    def pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        LOG.append(f"prebind {self.name} {pod.name}")
        return Status.success()

    def post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        LOG.append(f"postbind {self.name} {pod.name}")


class _Recorder2(_Recorder):
    name = "R2"


@pytest.fixture(autouse=True)
def _plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for cls in (_Permit, _PermitB, _Recorder, _Recorder2):
        monkeypatch.setitem(registry._extra, cls.name, cls)
    LOG.clear()
    yield
    LOG.clear()


def _config(permit: tuple[str, ...] = ("PermitA",)) -> Any:
    def only(*names: str) -> dict[str, Any]:
        return {"enabled": [{"name": n} for n in names], "disabled": [{"name": "*"}]}

    raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "reserve": only("R1", "R2"),
                    "permit": only(*permit),
                    "preBind": only("R1"),
                    "postBind": only("R1"),
                },
            }
        ],
    }
    return load_config(raw)


def _pod(
    name: str, *, cpu: str = "1", created: str = "2026-01-01T00:00:00Z", **labels: str
) -> dict[str, Any]:
    return pod(name, cpu=cpu, created=created, labels=labels)


def _replay(
    pods: list[dict[str, Any]],
    *,
    nodes: list[dict[str, Any]] | None = None,
    permit: tuple[str, ...] = ("PermitA",),
    options: ReplayOptions | None = None,
    objects: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> Replay:
    snap = Snapshot(
        nodes=[Node(n) for n in (nodes or [node("n1", cpu="4")])],
        pods=[Pod(p, i) for i, p in enumerate(pods)],
        objects=[KubeObject(o) for o in objects],
    )
    return Replay(snap, _config(permit), options)


def P(name: str, cpu: str = "1", **actions: str) -> dict[str, Any]:
    """A pod whose Permit plugins act as ``actions`` says (PermitA="wait=10", ...)."""
    labels = {f"permit.test/{k}": v for k, v in actions.items()}
    return pod(name, cpu=cpu, labels=labels)


def _stages(rec: CycleRecord, *points: str) -> list[tuple[str, str, str]]:
    return [(s.point, s.plugin, s.code) for s in rec.stages if not points or s.point in points]


def _events(rec: CycleRecord) -> list[tuple[str, str, str, str]]:
    return [(e.action, e.pod, e.plugin, e.message) for e in rec.permit_events]


# ----- Allow and Deny ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actions", "permit", "result", "message", "permit_stages", "log"),
    [
        (
            {},
            ("PermitA",),
            "Scheduled",
            None,
            [("Permit", "PermitA", "Success")],
            ["reserve R1 p", "reserve R2 p", "permit PermitA p", "prebind R1 p", "postbind R1 p"],
        ),
        (
            {"PermitA": "deny"},
            ("PermitA",),
            "Unschedulable",
            "0/1 nodes are available: 1 denied by PermitA.",
            [("Permit", "PermitA", "Unschedulable")],
            # Unreserve runs in the reverse order of Reserve
            ["reserve R1 p", "reserve R2 p", "permit PermitA p", "unreserve R2 p", "unreserve R1 p"],
        ),
        (
            {"PermitA": "unresolvable"},
            ("PermitA",),
            "Unschedulable",
            "0/1 nodes are available: 1 never on n1.",
            [("Permit", "PermitA", "UnschedulableAndUnresolvable")],
            ["reserve R1 p", "reserve R2 p", "permit PermitA p", "unreserve R2 p", "unreserve R1 p"],
        ),
        (
            # the first rejection ends the loop: PermitB is not called
            {"PermitA": "deny"},
            ("PermitA", "PermitB"),
            "Unschedulable",
            "0/1 nodes are available: 1 denied by PermitA.",
            [("Permit", "PermitA", "Unschedulable")],
            ["reserve R1 p", "reserve R2 p", "permit PermitA p", "unreserve R2 p", "unreserve R1 p"],
        ),
        (
            # a rejection after a Wait: the pod does not wait
            {"PermitA": "wait=10", "PermitB": "deny"},
            ("PermitA", "PermitB"),
            "Unschedulable",
            "0/1 nodes are available: 1 denied by PermitB.",
            [("Permit", "PermitA", "Wait"), ("Permit", "PermitB", "Unschedulable")],
            [
                "reserve R1 p",
                "reserve R2 p",
                "permit PermitA p",
                "permit PermitB p",
                "unreserve R2 p",
                "unreserve R1 p",
            ],
        ),
        (
            {"PermitA": "error"},
            ("PermitA",),
            "Error",
            'running Permit plugin "PermitA": boom',
            [("Permit", "PermitA", "Error")],
            ["reserve R1 p", "reserve R2 p", "permit PermitA p", "unreserve R2 p", "unreserve R1 p"],
        ),
        (
            # Skip is neither success nor wait: an error whose wrapped error is nil
            {"PermitA": "skip"},
            ("PermitA",),
            "Error",
            'running Permit plugin "PermitA": %!w(<nil>)',
            [("Permit", "PermitA", "Skip")],
            ["reserve R1 p", "reserve R2 p", "permit PermitA p", "unreserve R2 p", "unreserve R1 p"],
        ),
    ],
)
def test_permit_outcomes(
    actions: dict[str, str],
    permit: tuple[str, ...],
    result: str,
    message: str | None,
    permit_stages: list[tuple[str, str, str]],
    log: list[str],
) -> None:
    rp = _replay([P("p", **actions)], permit=permit)
    trace = rp.run()
    assert len(trace.cycles) == 1
    rec = trace.cycles[0]
    assert rec.result == result
    assert rec.message == message
    assert _stages(rec, "Permit") == permit_stages
    assert log == LOG
    assert len(rp.waiting) == 0
    placed = rp.cluster.node_of(rp.snapshot.pods[0])
    assert (placed is not None) == (result == "Scheduled")
    assert rec.selected_node == ("n1" if result == "Scheduled" else None)


# ----- Wait ----------------------------------------------------------------------------------------


def test_a_waiting_pod_holds_its_reservation_until_it_times_out() -> None:
    # one node with 2 CPUs: w (waiting) holds 2, so q does not fit while w waits
    rp = _replay(
        [P("w", cpu="2", PermitA="wait=10"), P("q", cpu="2")],
        nodes=[node("n1", cpu="2")],
    )
    it = rp.cycles()
    first = next(it)
    assert (first.result, first.selected_node, first.kind) == ("Waiting", "n1", "Scheduling")
    w = rp.snapshot.pods[0]
    assert rp.cluster.node_of(w) == 0  # still assumed
    assert rp.handle.get_waiting_pod(w.uid) is not None
    assert [wp.get_pod().name for wp in rp.handle.iterate_over_waiting_pods()] == ["w"]
    assert _stages(first, "Permit") == [("Permit", "PermitA", "Wait")]
    assert _events(first) == [("Wait", "default/w", "PermitA", "")]
    assert first.permit_events[0].timeout == 10.0
    second = next(it)
    assert second.pod == "default/q"
    assert second.result == "Unschedulable"
    assert second.message_before_post_filter == "0/1 nodes are available: 1 Insufficient cpu."
    # the queue is empty: the clock jumps to w's deadline
    third = next(it)
    assert (third.kind, third.pod, third.result, third.follows) == (
        "Binding",
        "default/w",
        "Unschedulable",
        1,
    )
    assert third.time == pytest.approx(T0 + 10)
    assert (
        third.message
        == "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin PermitA."
    )
    assert third.selected_node is None
    assert _stages(third) == [("Unreserve", "R2", "Success"), ("Unreserve", "R1", "Success")]
    assert _events(third) == [
        ("Reject", "default/w", "PermitA", "rejected due to timeout after waiting 10s at plugin PermitA")
    ]
    assert list(it) == []
    assert rp.cluster.node_of(w) is None  # the reservation is released
    assert int(rp.cluster.pod_count[0]) == 0
    assert len(rp.waiting) == 0
    assert LOG[-2:] == ["unreserve R2 w", "unreserve R1 w"]


def test_an_allowed_pod_finishes_its_binding_cycle_after_the_record_that_allowed_it() -> None:
    rp = _replay([P("w", PermitA="wait=30"), P("x"), P("r", PermitA="release"), P("z")])
    trace = rp.run()
    got = [(c.seq, c.kind, c.pod, c.result, c.follows) for c in trace.cycles]
    assert got == [
        (1, "Scheduling", "default/w", "Waiting", None),
        (2, "Scheduling", "default/x", "Scheduled", None),
        (3, "Scheduling", "default/r", "Scheduled", None),
        (4, "Binding", "default/w", "Scheduled", 1),
        (5, "Scheduling", "default/z", "Scheduled", None),
    ]
    w_bind = trace.cycles[3]
    assert w_bind.time == pytest.approx(trace.cycles[2].time)
    assert w_bind.time == pytest.approx(T0 + 0.02)
    assert w_bind.selected_node == "n1"
    assert _stages(w_bind) == [
        ("PreBind", "R1", "Success"),
        ("Bind", "DefaultBinder", "Success"),
        ("PostBind", "R1", "Success"),
    ]
    assert _events(trace.cycles[2]) == [("Allow", "default/w", "PermitA", "")]
    assert w_bind.permit_events == []
    # PreBindPreFlight ran when w started waiting, PreBind only once it was allowed
    assert _stages(trace.cycles[0], "Permit", "PreBindPreFlight") == [
        ("Permit", "PermitA", "Wait"),
        ("PreBindPreFlight", "R1", "Success"),
    ]
    assert LOG.index("prebind R1 w") > LOG.index("postbind R1 r")
    assert rp.cluster.node_of(rp.snapshot.pods[0]) == 0


def test_every_plugin_that_asked_to_wait_must_allow() -> None:
    # PermitA allows w (through r); PermitB never does: w times out at PermitB's deadline
    rp = _replay(
        [P("w", PermitA="wait=30", PermitB="wait=60"), P("r", PermitA="release")],
        permit=("PermitA", "PermitB"),
    )
    trace = rp.run()
    assert [(c.kind, c.pod, c.result) for c in trace.cycles] == [
        ("Scheduling", "default/w", "Waiting"),
        ("Scheduling", "default/r", "Scheduled"),
        ("Binding", "default/w", "Unschedulable"),
    ]
    assert _events(trace.cycles[0]) == [
        ("Wait", "default/w", "PermitA", ""),
        ("Wait", "default/w", "PermitB", ""),
    ]
    assert _events(trace.cycles[1]) == [("Allow", "default/w", "PermitA", "")]
    last = trace.cycles[2]
    assert last.time == pytest.approx(T0 + 60)
    assert (
        last.message
        == "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin PermitB."
    )


@pytest.mark.parametrize(
    ("a", "b", "after", "plugin", "shown"),
    [
        ("wait=30", "wait=60", 30, "PermitA", "30s"),  # the first timer to fire rejects
        ("wait=90", "wait=45", 45, "PermitB", "45s"),
        ("wait=20", "wait=20", 20, "PermitA", "20s"),  # same deadline: profile order
        ("wait=3600", "wait=1200", 900, "PermitA", "15m0s"),  # both capped at maxTimeout
        ("wait=1.5", "wait=100", 1.5, "PermitA", "1.5s"),
        ("wait=0", "wait=100", 0, "PermitA", "0s"),  # expires before the next cycle
    ],
)
def test_timeouts(a: str, b: str, after: float, plugin: str, shown: str) -> None:
    rp = _replay([P("w", PermitA=a, PermitB=b)], permit=("PermitA", "PermitB"))
    trace = rp.run()
    assert [(c.kind, c.result) for c in trace.cycles] == [
        ("Scheduling", "Waiting"),
        ("Binding", "Unschedulable"),
    ]
    last = trace.cycles[1]
    assert last.time == pytest.approx(T0 + after)
    assert last.message == (
        f"0/1 nodes are available: 1 rejected due to timeout after waiting {shown} at plugin {plugin}."
    )
    assert _events(last) == [
        ("Reject", "default/w", plugin, f"rejected due to timeout after waiting {shown} at plugin {plugin}")
    ]


@pytest.mark.parametrize(
    ("action", "plugin", "message"),
    [
        ("reject", "PermitA", "rejected by PermitA"),
        ("remove", "", "removed"),  # Handle.reject_waiting_pod
    ],
)
def test_a_rejected_waiting_pod_is_unreserved_and_forgotten(action: str, plugin: str, message: str) -> None:
    rp = _replay([P("w1", PermitA="wait=30"), P("w2", PermitA="wait=30"), P("r", PermitA=action)])
    trace = rp.run()
    assert [(c.seq, c.kind, c.pod, c.result, c.follows) for c in trace.cycles] == [
        (1, "Scheduling", "default/w1", "Waiting", None),
        (2, "Scheduling", "default/w2", "Waiting", None),
        (3, "Scheduling", "default/r", "Scheduled", None),
        # in the order they were rejected (the order they started waiting)
        (4, "Binding", "default/w1", "Unschedulable", 1),
        (5, "Binding", "default/w2", "Unschedulable", 2),
    ]
    assert _events(trace.cycles[2]) == [
        ("Reject", "default/w1", plugin, message),
        ("Reject", "default/w2", plugin, message),
    ]
    for rec in trace.cycles[3:]:
        assert rec.message == f"0/1 nodes are available: 1 {message}."
        assert rec.time == pytest.approx(T0 + 0.02)
        assert _stages(rec) == [("Unreserve", "R2", "Success"), ("Unreserve", "R1", "Success")]
    assert [rp.cluster.node_of(p) for p in rp.snapshot.pods] == [None, None, 0]
    assert LOG[-4:] == ["unreserve R2 w1", "unreserve R1 w1", "unreserve R2 w2", "unreserve R1 w2"]


def test_a_prebind_preflight_error_ends_the_wait_at_once() -> None:
    pods = [pod("w", cpu="1", labels={"permit.test/PermitA": "wait=30", "preflight.test": "error"})]
    rp = _replay(pods)
    trace = rp.run()
    assert len(trace.cycles) == 1
    rec = trace.cycles[0]
    assert rec.result == "Error"
    assert rec.message == 'running PreBindPreFlight "R1": no flight'
    assert _stages(rec, "Permit", "PreBindPreFlight", "Unreserve") == [
        ("Permit", "PermitA", "Wait"),
        ("PreBindPreFlight", "R1", "Error"),
        ("Unreserve", "R2", "Success"),
        ("Unreserve", "R1", "Success"),
    ]
    assert len(rp.waiting) == 0
    assert rp.cluster.node_of(rp.snapshot.pods[0]) is None


# ----- the replay clock ---------------------------------------------------------------------------


def test_the_clock_starts_at_the_latest_creation_timestamp() -> None:
    objects = [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "late", "creationTimestamp": "2026-01-02T00:00:00Z"},
        }
    ]
    pods = [_pod("a", created="2025-12-31T00:00:00Z"), _pod("b", created="2026-01-01T12:00:00Z")]
    rp = _replay(pods, objects=objects, options=ReplayOptions(cycle_seconds=0.5))
    assert start_time(rp.snapshot) == T0 + 86400
    trace = rp.run()
    assert [c.time for c in trace.cycles] == [T0 + 86400, T0 + 86400.5]


def test_the_clock_starts_at_zero_without_timestamps() -> None:
    raw = pod("a", cpu="1")
    del raw["metadata"]["creationTimestamp"]
    rp = _replay([raw, pod("b", cpu="1", created="")], options=ReplayOptions(cycle_seconds=2))
    trace = rp.run()
    assert [c.time for c in trace.cycles] == [0.0, 2.0]


def test_timers_fire_between_cycles_and_a_deadline_on_a_cycle_fires_first() -> None:
    # cycles every 4 s: w1 (at 0) times out at 10, before the cycle at 12; w2 (at 4, 4 s) at 8, before
    # the cycle at 8
    pods = [P("w1", PermitA="wait=10"), P("w2", PermitA="wait=4"), P("c"), P("d"), P("e")]
    rp = _replay(pods, options=ReplayOptions(cycle_seconds=4))
    trace = rp.run()
    got = [(c.kind, c.pod, c.time - T0) for c in trace.cycles]
    assert got == [
        ("Scheduling", "default/w1", 0),
        ("Scheduling", "default/w2", 4),
        ("Binding", "default/w2", 8),
        ("Scheduling", "default/c", 8),
        ("Binding", "default/w1", 10),
        ("Scheduling", "default/d", 12),
        ("Scheduling", "default/e", 16),
    ]
    assert [c.seq for c in trace.cycles] == list(range(1, 8))


def test_once_the_queue_is_empty_the_clock_jumps_from_deadline_to_deadline() -> None:
    rp = _replay([P("w1", PermitA="wait=20"), P("w2", PermitA="wait=10")])
    trace = rp.run()
    got = [(c.kind, c.pod, c.time) for c in trace.cycles]
    assert got == [
        ("Scheduling", "default/w1", T0),
        ("Scheduling", "default/w2", pytest.approx(T0 + 0.01)),
        ("Binding", "default/w2", pytest.approx(T0 + 10.01)),
        ("Binding", "default/w1", pytest.approx(T0 + 20)),
    ]
    assert rp.clock.now() == pytest.approx(T0 + 20)


def test_the_trace_json_carries_time_kind_follows_and_events() -> None:
    trace = _replay([P("w", PermitA="wait=5")]).run()
    d = trace.to_dict(nodes=False)
    assert d["formatVersion"] == 3
    first, second = d["cycles"]
    assert (first["kind"], first["time"], first["result"]) == ("Scheduling", T0, "Waiting")
    assert "follows" not in first
    assert first["permitEvents"] == [
        {
            "time": T0,
            "pod": "default/w",
            "action": "Wait",
            "plugin": "PermitA",
            "node": "n1",
            "message": "",
            "timeoutSeconds": 5.0,
        }
    ]
    assert (second["kind"], second["time"], second["follows"], second["result"]) == (
        "Binding",
        T0 + 5,
        1,
        "Unschedulable",
    )
    assert second["permitEvents"][0]["action"] == "Reject"


def test_run_until_stops_at_the_pods_time_after_earlier_timeouts() -> None:
    rp = _replay([P("w", PermitA="wait=0.005"), P("a"), P("b")])
    target = rp.run_until("default/b")
    assert target.name == "b"
    assert [(c.kind, c.pod) for c in rp.trace.cycles] == [
        ("Scheduling", "default/w"),
        ("Binding", "default/w"),
        ("Scheduling", "default/a"),
    ]
    assert rp.clock.now() == pytest.approx(T0 + 0.02)
    assert rp.schedule_one(target).time == pytest.approx(T0 + 0.02)


# ----- WaitingPods ---------------------------------------------------------------------------------


def _waiting(timeouts: dict[str, int]) -> tuple[WaitingPods, Any]:
    wps = WaitingPods(Clock(100.0))
    wp = wps.add(Pod(pod("p"), 0), "n1", timeouts)
    return wps, wp


def test_only_the_first_signal_counts() -> None:
    wps, wp = _waiting({"A": 10, "B": 20})
    assert wp.get_pending_plugins() == ["A", "B"]
    wp.allow("A")
    assert wp.status is None and wp.get_pending_plugins() == ["B"]
    wp.allow("C")  # a plugin that did not ask to wait: nothing to remove, B still pending
    assert wp.status is None
    wp.allow("B")
    assert wp.status is not None and wp.status.is_success()
    wp.reject("A", "too late")  # ignored: the pod was already allowed
    assert wp.status.is_success()
    assert wps.signalled == [wp]
    assert [(e.action, e.plugin) for e in wps.events] == [
        ("Wait", "A"),
        ("Wait", "B"),
        ("Allow", "A"),
        ("Allow", "B"),
    ]


def test_a_rejection_stops_the_timers_and_a_later_allow_is_ignored() -> None:
    wps, wp = _waiting({"A": 10})
    wp.reject("X", "no")
    assert wp.status == Status(Code.Unschedulable, "no") and wp.status.plugin == "X"
    assert wp.deadline() is None and wps.next_deadline() is None
    wp.allow("A")
    assert not wp.status.is_success()


def test_dry_run_ignores_allow_and_reject() -> None:
    wps, wp = _waiting({"A": 10})
    wps.dry_run = True
    wp.allow("A")
    wp.reject("A", "no")
    assert wp.status is None and wps.signalled == []
    assert wps.next_deadline() == (10, wp)
    wps.dry_run = False
    wp.expire()
    assert wp.status == Status(Code.Unschedulable, "rejected due to timeout after waiting 10ns at plugin A")


def test_preview_leaves_waiting_pods_alone() -> None:
    rp = _replay([P("w", PermitA="wait=30"), P("r", PermitA="reject")])
    target = rp.run_until("default/r")
    rec = rp.preview(target)
    assert rec.result == "Scheduled" and rec.permit_events == []
    assert len(rp.waiting) == 1 and rp.waiting.signalled == []
    assert not rp.waiting.dry_run
