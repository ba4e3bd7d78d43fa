"""Decisions found in the mirrored state's changes (schedviz/live/triggers.py)."""

from __future__ import annotations

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
