"""Live replays compared with reality: the test API server plays back what the real kube-scheduler
v1.35.4 decided (the conformance fixtures: its bindings and its FailedScheduling messages), and
SchedViz replays each decision against its mirror of the cluster just before it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from schedviz.kube.kubeconfig import Source
from schedviz.kube.testing import TestApiServer
from schedviz.live import schedconfig
from schedviz.live.divergence import Outcome
from schedviz.live.runtime import ClusterWatcher, Options
from tests.engine.builders import node, pod
from tests.kubefixtures import FAST, namespace, small_cluster, wait_until

FIXTURES = Path(__file__).resolve().parents[1] / "conformance" / "fixtures"


class MemorySink:
    def __init__(self) -> None:
        self.outcomes: list[Outcome] = []
        self.lock = threading.Lock()

    def seen(self, dedup: str) -> bool:
        with self.lock:
            return any(o.trigger.dedup == dedup for o in self.outcomes)

    def store(self, outcome: Outcome) -> None:
        with self.lock:
            self.outcomes.append(outcome)

    def close(self) -> None:
        pass


class Live:
    def __init__(self, srv: TestApiServer, config: dict[str, Any] | None = None, **opts: Any) -> None:
        self.sink = MemorySink()
        options = Options(timing=FAST, settle=0.02, event_grace=0.3, **opts)
        self.watcher = ClusterWatcher(
            "test",
            Source("kubeconfig", srv.kubeconfig()).client(),
            lambda _: schedconfig.build(config),
            self.sink,
            options=options,
        )
        self.watcher.start()
        wait_until(lambda: self.watcher.health()["status"] == "watching", what="the first sync")

    def next(self, count: int) -> Outcome:
        wait_until(lambda: len(self.sink.outcomes) >= count, what=f"outcome {count}")
        return self.sink.outcomes[count - 1]

    def quiet(self) -> None:
        """Everything queued has been replayed."""
        wait_until(lambda: self.watcher.idle(), what="the queue to drain")


@pytest.fixture
def lives() -> Iterator[list[Live]]:
    made: list[Live] = []
    yield made
    for live in made:
        live.watcher.stop()


def scenario(name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    sc = json.loads((FIXTURES / f"{name}.json").read_text())
    expected = json.loads((FIXTURES / f"{name}.expected.json").read_text())["results"]
    return sc, expected


def serve(srv: TestApiServer, sc: dict[str, Any]) -> None:
    srv.create(namespace("default"))
    for obj in sc.get("items") or [*sc.get("nodes", []), *sc.get("pods", [])]:
        obj = {"apiVersion": "v1", **obj}
        try:
            srv.resource_for(obj)
        except KeyError:
            continue  # a kind the scheduler does not read (a Deployment)
        srv.create(obj)


def split(key: str) -> tuple[str, str]:
    ns, _, name = key.partition("/")
    return ns, name


def test_a_real_schedulers_history_replays_as_it_happened(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    """Every binding and every FailedScheduling message of the real kube-scheduler: all match."""
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    live = Live(apiserver, sc["config"])
    lives.append(live)
    for count, r in enumerate(expected, 1):
        ns, name = split(r["pod"])
        if r["selected"]:
            apiserver.bind(ns, name, r["selected"])
        else:
            apiserver.fail_scheduling(ns, name, r["unschedulableMessage"])
        out = live.next(count)
        assert out.trigger.pod == r["pod"]
        assert out.agreement == "match", (r["pod"], out.explanations)
        rec = out.replayed.record
        assert rec is not None
        if r["selected"]:
            assert (
                out.trigger.kind == "bound"
                and out.trigger.source == "pod"
                and rec.selected_node == r["selected"]
            )
        else:
            assert out.trigger.kind == "failed" and rec.message == r["unschedulableMessage"]
    live.quiet()
    assert len(live.sink.outcomes) == len(expected)  # one per decision: the Scheduled events added none
    assert sum(1 for r in expected if not r["selected"]) == 5


def test_the_cluster_picking_another_tied_node_is_a_tie(apiserver: TestApiServer, lives: list[Live]) -> None:
    sc, expected = scenario("workloads/wl-21000")
    serve(apiserver, sc)
    live = Live(apiserver, sc["config"])
    lives.append(live)
    first_tie = next(i for i, r in enumerate(expected) if len(r.get("tiedTop") or []) > 1)
    for i, r in enumerate(expected[: first_tie + 1]):
        ns, name = split(r["pod"])
        chosen = r["tiedTop"][-1] if i == first_tie else r["selected"]
        apiserver.bind(ns, name, chosen)
        out = live.next(i + 1)
        if i < first_tie:
            assert out.agreement == "match", out.explanations
    assert out.agreement == "tie" and out.divergence == "tie"
    assert (
        out.replayed.record is not None
        and out.replayed.record.selected_node == expected[first_tie]["selected"]
    )
    assert set(out.explanations[0]["details"]["tied"]) == set(expected[first_tie]["tiedTop"])


def test_a_binding_the_replay_would_not_make_is_a_divergence_with_the_facts(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    live = Live(apiserver, sc["config"])
    lives.append(live)
    # the first pod the real scheduler placed: the cluster puts it where the real filters reject it
    r = next(r for r in expected if r["selected"])
    rejected = next(n for n, v in r["filter"].items() if v["code"] != "Success")
    ns, name = split(r["pod"])
    apiserver.bind(ns, name, rejected)
    out = live.next(1)
    assert out.agreement == "diverged" and out.divergence == "filter"
    fact = out.explanations[-1]
    assert fact["details"]["plugin"] == r["filter"][rejected]["plugin"]
    assert fact["details"]["reasons"] == r["filter"][rejected]["reasons"]
    assert f"rejects {rejected}" in fact["message"] and f"selects {r['selected']}" in fact["message"]


def test_a_feasible_but_lower_scored_binding_shows_the_score_gap(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    sc, expected = scenario("basic/scn-20001")
    serve(apiserver, sc)
    live = Live(apiserver, sc["config"])
    lives.append(live)
    i, r = next((i, r) for i, r in enumerate(expected) if r["selected"] and len(r["total"]) > 1)
    for k, before in enumerate(expected[:i]):  # the history up to it, as it happened
        ns, name = split(before["pod"])
        if before["selected"]:
            apiserver.bind(ns, name, before["selected"])
        else:
            apiserver.fail_scheduling(ns, name, before["unschedulableMessage"])
        live.next(k + 1)
    other = min((n for n in r["total"] if n not in r["tiedTop"]), key=lambda n: r["total"][n])
    ns, name = split(r["pod"])
    apiserver.bind(ns, name, other)
    out = live.next(i + 1)
    assert out.agreement == "diverged" and out.divergence == "score"
    gap = out.explanations[-1]["details"]
    assert gap["node"] == other and gap["winner"] == r["selected"]
    assert gap["nodeTotal"] == r["total"][other] and gap["winnerTotal"] == r["total"][r["selected"]]
    weighted = {p: s[r["selected"]]["weighted"] - s[other]["weighted"] for p, s in r["scores"].items()}
    assert gap["byPlugin"] == {p: d for p, d in weighted.items() if d}


def test_failed_scheduling_messages_are_compared(apiserver: TestApiServer, lives: list[Live]) -> None:
    small_cluster(apiserver)
    live = Live(apiserver)
    lives.append(live)
    # the cluster's message says 2 nodes lacked memory where the replay finds cpu lacking on all three
    other = (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient memory. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    apiserver.fail_scheduling("default", "huge", other)
    out = live.next(1)
    assert out.agreement == "diverged" and out.divergence == "message"
    assert out.replayed.record is not None and out.replayed.record.result == "Unschedulable"
    diff = out.explanations[-1]["message"]
    assert "'Insufficient memory': 0 in the replay, 2 in the cluster" in diff
    # the replay's own message, reported back by the cluster, is a match (the series repeats it)
    assert out.replayed.record.message is not None
    apiserver.fail_scheduling("default", "huge", out.replayed.record.message)
    again = live.next(2)
    assert again.agreement == "match" and again.trigger.dedup != out.trigger.dedup


def test_another_scheduler_and_a_profile_the_configuration_lacks(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    small_cluster(apiserver)
    apiserver.create(pod("custom", cpu="100m", schedulerName="gpu-scheduler"))
    live = Live(apiserver)
    lives.append(live)
    apiserver.bind("default", "custom", "large", scheduler="gpu-scheduler")
    out = live.next(1)
    assert out.agreement == "diverged" and out.divergence == "different-scheduler"
    assert out.replayed.record is not None and out.replayed.record.result == "NotHandled"
    assert 'schedulerName "gpu-scheduler"' in out.explanations[0]["message"]
    apiserver.bind("default", "web", "small", scheduler="second-scheduler")  # the reporter is not a profile
    out = live.next(2)
    assert out.trigger.scheduler == "second-scheduler"
    assert (
        out.divergence == "different-scheduler"
        and '"second-scheduler" reported the decision' in out.explanations[0]["message"]
    )


def test_a_decision_on_an_older_state_is_explained_as_stale_state(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    small_cluster(apiserver)
    live = Live(apiserver)
    lives.append(live)
    apiserver.create(pod("filler", cpu="7", node_name="large"))  # large is nearly full now
    apiserver.bind("default", "web", "large")  # as the scheduler would have, had it not seen the filler yet
    out = live.next(1)
    assert out.agreement == "diverged" and out.divergence == "stale-state"
    assert out.explanations[0]["details"]["changes"] == ["Pod default/filler added on large"]
    assert "the replay agrees with the cluster" in out.explanations[0]["message"]
    assert (
        out.explanations[-1]["code"] == "score"
    )  # and the facts: against the state replayed, small scores higher
    assert out.replayed.record is not None and out.replayed.record.selected_node == "small"


def test_recent_changes_that_do_not_explain_a_divergence_are_only_noted(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    small_cluster(apiserver)
    live = Live(apiserver)
    lives.append(live)
    apiserver.create(pod("filler", cpu="100m", node_name="small"))
    apiserver.bind("default", "web", "small")  # the replay picks large, with or without the filler
    out = live.next(1)
    assert out.agreement == "diverged" and out.divergence == "score"
    assert [e["code"] for e in out.explanations] == ["score"]
    assert any("Pod default/filler added on small" in n and "still differs" in n for n in out.notes)


def test_a_scheduled_event_alone_is_replayed_once_and_with_the_pods_update_not_twice(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    small_cluster(apiserver)
    apiserver.create(pod("late", cpu="100m"))
    live = Live(apiserver)
    lives.append(live)
    web = apiserver.get("Pod", "web", "default")
    assert web is not None
    apiserver.record_event(
        web, "Scheduled", "Successfully assigned default/web to large"
    )  # the pod's update lost
    out = live.next(1)
    assert out.trigger.source == "event" and out.trigger.node == "large" and out.agreement == "match"
    apiserver.bind("default", "late", "large")  # the update and the event both come: one cycle
    out = live.next(2)
    assert out.trigger.source == "pod" and out.trigger.scheduler == "default-scheduler"
    live.quiet()
    assert len(live.sink.outcomes) == 2


def test_pods_created_bound_and_the_starting_state_are_not_decisions(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    small_cluster(apiserver)
    p = apiserver.get("Pod", "huge", "default")
    assert p is not None
    apiserver.record_event(p, "FailedScheduling", "old news")  # before SchedViz started: the starting state
    live = Live(apiserver)
    lives.append(live)
    apiserver.create(pod("static", cpu="100m", node_name="small"))  # bound by its creator
    mirror_pod = pod("kube-proxy-small", cpu="100m")
    mirror_pod["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    apiserver.create(mirror_pod)
    apiserver.bind("default", "kube-proxy-small", "small", event=False)
    apiserver.create(node("new-node"))
    apiserver.bind("default", "web", "large")
    out = live.next(1)
    live.quiet()
    assert [o.trigger.pod for o in live.sink.outcomes] == ["default/web"]
    assert out.agreement == "match"
