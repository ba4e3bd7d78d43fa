"""Decisions found in the mirrored state's changes (schedviz/live/triggers.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from schedviz.kube.kinds import stream
from schedviz.kube.mirror import Mirror
from schedviz.live.triggers import Trigger, TriggerDetector
from tests.engine.builders import pod
from tests.kube.test_mirror import bound, mirror, rv


def test_a_pod_seen_bound_only_after_a_gap_is_a_decision_flagged_as_such() -> None:
    m = mirror()
    triggers: list[Trigger] = []
    m.listeners.append(TriggerDetector(triggers.append, settle=0))
    m.replace("Pod", [rv(pod("old", node_name="n1"), 2)], "2")  # the starting state: nothing
    m.apply("Pod", "ADDED", rv(pod("created-bound", node_name="n1"), 3))  # bound by its creator: nothing
    m.replace(
        "Pod",
        [
            rv(pod("old", node_name="n1"), 2),
            rv(pod("created-bound", node_name="n1"), 3),
            rv(pod("gap", node_name="n1"), 5),
        ],
        "5",
    )
    m.apply("Pod", "ADDED", rv(pod("w"), 6))
    m.apply("Pod", "MODIFIED", rv(bound(pod("w"), "n1"), 7))
    m.apply(
        "Pod", "MODIFIED", rv(bound(pod("w"), "n1") | {"status": {"phase": "Running"}}, 8)
    )  # bound already: nothing
    assert [(t.pod, t.source, t.gap, t.node, t.rv) for t in triggers] == [
        ("default/gap", "relist", True, "n1", "5"),
        ("default/w", "pod", False, "n1", "7"),
    ]


def _failed_event(name: str, when: float, version: int) -> dict[str, Any]:
    stamp = datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {
        "metadata": {"name": f"{name}.ev", "namespace": "default", "resourceVersion": str(version)},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": name, "uid": f"uid-{name}"},
        "reason": "FailedScheduling",
        "message": "0/1 nodes are available: 1 Insufficient cpu.",
        "eventTime": stamp,
    }


def test_relisted_events_are_aged_by_the_clusters_clock_and_counted_when_dropped() -> None:
    now = 1_800_000_000.0
    skew = -180.0  # the cluster's clock is three minutes behind
    m = Mirror([stream("Pod"), stream("Event/FailedScheduling")], clock=lambda: now)
    triggers: list[Trigger] = []
    detector = TriggerDetector(triggers.append, settle=0, max_event_age=120, clock=lambda: now)
    m.listeners.append(detector)
    m.replace("Event/FailedScheduling", [], "1")
    # a list without a Date header: the clock is learnt from the events watched
    m.apply("Event/FailedScheduling", "ADDED", _failed_event("a", now + skew, 2))
    assert detector.cluster_now() == now + skew
    m.replace(
        "Event/FailedScheduling",
        [
            _failed_event("a", now + skew, 2),
            _failed_event("b", now + skew - 60, 3),  # a minute old by the cluster's clock: replayed
            _failed_event("c", now + skew - 300, 4),  # five minutes old: left out, counted
        ],
        "4",
    )
    # a list with the API server's Date: that is the cluster's clock
    m.replace(
        "Event/FailedScheduling",
        [_failed_event("d", now + skew - 100, 5)],
        "5",
        server_time=now + skew,
    )
    assert [(t.pod, t.gap) for t in triggers] == [
        ("default/a", False),
        ("default/b", True),
        ("default/d", True),
    ]
    assert detector.dropped == 1 and detector.last_dropped.startswith("FailedScheduling default/c: 300s old")
    assert detector.offset == skew
