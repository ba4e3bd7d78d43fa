"""The mirrored state: idempotent events, relist diffs, the state before a change, checkpoints."""

from __future__ import annotations

from typing import Any

from schedviz.kube.kinds import stream
from schedviz.kube.mirror import Mirror
from tests.engine.builders import node, pod


def rv(obj: dict[str, Any], version: int) -> dict[str, Any]:
    out = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    out["metadata"] = {**obj["metadata"], "resourceVersion": str(version)}
    return out


def bound(p: dict[str, Any], node_name: str) -> dict[str, Any]:
    return {**p, "spec": {**p["spec"], "nodeName": node_name}}


def mirror() -> Mirror:
    return Mirror([stream("Node"), stream("Pod"), stream("Event/Scheduled")])


def names(objs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def test_events_apply_once_and_lists_become_exactly_their_differences() -> None:
    m = mirror()
    seen: list[tuple[str, str, bool]] = []
    m.listeners.append(lambda c: seen.append((c.type, c.key[1], c.initial)))
    m.replace("Pod", [rv(pod("a"), 2), rv(pod("b"), 3)], "3")
    assert seen == [("ADDED", "a", True), ("ADDED", "b", True)]
    assert m.objects()[0]["apiVersion"] == "v1" and m.objects()[0]["kind"] == "Pod"
    assert m.apply("Pod", "MODIFIED", rv(bound(pod("a"), "n"), 4)) is not None
    assert m.apply("Pod", "MODIFIED", rv(bound(pod("a"), "n"), 4)) is None  # the same revision again
    assert m.apply("Pod", "ADDED", rv(pod("b"), 3)) is None
    assert m.apply("Pod", "DELETED", rv(pod("zz"), 5)) is None  # already gone
    assert m.resource_version("Pod") == "5"
    # a relist: b modified, a unchanged, c new, and a deleted object... none here
    changes = m.replace("Pod", [rv(bound(pod("a"), "n"), 4), rv(pod("b"), 7), rv(pod("c"), 8)], "9")
    assert [(c.type, c.key[1], c.relist, c.initial) for c in changes] == [
        ("MODIFIED", "b", True, False),
        ("ADDED", "c", True, False),
    ]
    changes = m.replace("Pod", [rv(pod("c"), 8)], "10")
    assert sorted((c.type, c.key[1]) for c in changes) == [("DELETED", "a"), ("DELETED", "b")]
    assert m.resource_version("Pod") == "10"


def test_the_state_before_a_change_undoes_newer_revisions_whatever_their_arrival() -> None:
    m = mirror()
    m.replace("Node", [rv(node("n1"), 2), rv(node("n2"), 3)], "3")
    m.replace("Pod", [rv(pod("p"), 4), rv(pod("q", node_name="n1"), 5)], "5")
    # the node stream delivers a change at revision 9 before the pod stream delivers the bind at 8
    early = m.apply("Node", "MODIFIED", rv(node("n2", labels={"late": "yes"}), 9))
    bind = m.apply("Pod", "MODIFIED", rv(bound(pod("p"), "n2"), 8))
    # and a change at revision 7 arrives after the bind (its stream lagged)
    lagging = m.apply("Pod", "DELETED", rv(pod("q", node_name="n1"), 7))
    assert early and bind and lagging and early.seq < bind.seq < lagging.seq
    objs, exact = m.objects_before(bind.seq, bind.rv)
    assert exact
    pods, nodes = names(objs, "Pod"), names(objs, "Node")
    assert "nodeName" not in pods["p"]["spec"]  # the bind itself undone
    assert "late" not in nodes["n2"]["metadata"]["labels"]  # newer, although it came first
    assert "q" not in pods  # older, although it came after
    # without revisions to go by (opaque strings), arrival order decides
    objs, _ = m.objects_before(bind.seq, None)
    assert names(objs, "Node")["n2"]["metadata"]["labels"]["late"] == "yes" and "q" in names(objs, "Pod")
    # events are not part of the mirrored state
    m.replace(
        "Event/Scheduled",
        [{"metadata": {"name": "e", "namespace": "default", "resourceVersion": "11"}, "reason": "Scheduled"}],
        "11",
    )
    assert all(o["kind"] != "Event" for o in m.objects())


def test_a_trimmed_changelog_says_the_state_is_no_longer_exact() -> None:
    m = Mirror([stream("Pod")], changelog_limit=2)
    m.replace("Pod", [], "1")
    changes = [m.apply("Pod", "ADDED", rv(pod(f"p{i}"), 2 + i)) for i in range(6)]
    m.release(changes[-1].seq)  # type: ignore[union-attr]
    assert len(m.changes()) <= 2
    _, exact = m.objects_before(changes[0].seq)  # type: ignore[union-attr]
    assert not exact
    objs, exact = m.objects_before(changes[-1].seq)  # type: ignore[union-attr]
    assert exact and len(objs) == 5


def test_a_checkpoint_restores_the_state_and_resource_versions() -> None:
    m = mirror()
    m.replace("Node", [rv(node("n1"), 2)], "2")
    m.replace("Pod", [rv(pod("p"), 3)], "3")
    m.bookmark("Pod", "12")
    data = m.checkpoint()
    other = mirror()
    other.restore(data)
    assert other.objects() == m.objects() and other.resource_version("Pod") == "12"
    assert other.has_state("Pod") and not other.has_state("Event/Scheduled")
    seen: list[Any] = []
    other.listeners.append(seen.append)
    # a relist after a restore finds real changes (not the starting state)
    changes = other.replace("Pod", [rv(bound(pod("p"), "n1"), 13)], "13")
    assert [(c.type, c.initial, c.relist) for c in changes] == [("MODIFIED", False, True)]
    assert other.seq > data["seq"]
