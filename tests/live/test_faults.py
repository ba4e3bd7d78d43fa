"""Live mode loses no decision across restarts, relists and slow watches: each interleaving of the
pods', nodes' and events' watches played against the stand-in API server (schedviz/kube/testing.py),
then many of them at random (tests/live/faults.py)."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from schedviz.kube.kinds import EVENTS_SCHEDULED
from schedviz.kube.testing import TestApiServer
from tests.engine.builders import pod
from tests.kubefixtures import FAST, small_cluster, wait_until

from .faults import FAULTS, SKEWS, Scheduler, check, play
from .test_replays import Live

GRACE = 0.3  # Live's event_grace


@pytest.fixture
def lives() -> Iterator[list[Live]]:
    made: list[Live] = []
    yield made
    for live in made:
        live.watcher.stop()


def events_about(live: Live, name: str) -> bool:
    return any(
        (ev.get("involvedObject") or {}).get("name") == name
        for stream in (EVENTS_SCHEDULED, "Event/FailedScheduling")
        for ev in live.watcher.mirror.values(stream)
    )


def seen(live: Live) -> list[tuple[str, str, str]]:
    return [(o.trigger.kind, o.trigger.pod, o.agreement) for o in live.sink.outcomes]


def test_decisions_whose_events_come_back_before_the_pods_watch_wait_for_it(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    small_cluster(apiserver)
    live = Live(apiserver)
    lives.append(live)
    sched = Scheduler(apiserver, random.Random(1))
    apiserver.hold_watches("pods")
    apiserver.drop_connections()
    apiserver.create(pod("late", cpu="100m"))  # created and bound while the pods' watch is away
    bound = sched.decide("late")
    failed = sched.decide("huge")
    assert (bound.kind, failed.kind) == ("bound", "failed")
    wait_until(lambda: events_about(live, "late") and events_about(live, "huge"), what="the events")
    wait_until(lambda: apiserver.waiting_watches() > 0, what="the pods' watch asking again")
    # past the Scheduled event's grace and the failure's settle time: both wait for the pods' watch
    wait_until(lambda: "Pod (" in (live.watcher.health()["waitingFor"] or ""), what="the wait")
    live.watcher.stop_event.wait(3 * GRACE)
    assert live.sink.outcomes == []
    apiserver.release_watches()
    live.next(2)
    live.quiet()
    assert seen(live) == [("bound", "default/late", "match"), ("failed", "default/huge", "match")]
    late = live.sink.outcomes[0]
    assert late.trigger.source == "pod" and late.exact and late.replayed.error == ""


def test_a_binding_back_before_the_events_watch_waits_for_an_earlier_failure(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    small_cluster(apiserver)
    live = Live(apiserver)
    lives.append(live)
    sched = Scheduler(apiserver, random.Random(2))
    apiserver.hold_watches("events")
    apiserver.drop_connections()
    sched.decide("huge")  # first: its event held
    sched.decide("web")  # then a binding, which the pods' watch delivers at once
    wait_until(
        lambda: ((live.watcher.mirror.get("Pod", ("default", "web")) or {}).get("spec") or {}).get(
            "nodeName"
        ),
        what="the binding in the mirror",
    )
    live.watcher.stop_event.wait(3 * GRACE)
    assert live.sink.outcomes == []  # an earlier decision may still come on the events' watch
    apiserver.release_watches()
    live.next(2)
    live.quiet()
    assert seen(live) == [("failed", "default/huge", "match"), ("bound", "default/web", "match")]


def test_the_wait_for_the_mirror_is_bounded_and_says_what_lagged(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    small_cluster(apiserver)
    live = Live(apiserver, catch_up=1.0)
    lives.append(live)
    apiserver.hold_watches("pods")
    apiserver.drop_connections()
    apiserver.create(pod("late", cpu="100m"))
    Scheduler(apiserver, random.Random(3)).decide("late")
    out = live.next(1)  # the pods' watch never came back
    assert out.agreement == "skipped" and not out.exact and out.trigger.source == "event"
    assert "pod default/late is not in the mirrored state" in out.replayed.error
    assert "had not caught up with the decision" in out.replayed.error and "Pod (" in out.replayed.error
    apiserver.release_watches()
    wait_until(lambda: live.watcher.mirror.get("Pod", ("default", "late")) is not None, what="the pod")
    live.quiet()
    assert len(live.sink.outcomes) == 1  # the pod's own update does not store the decision again


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_relist_found_failures_are_judged_old_by_the_clusters_clock(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    apiserver.clock_skew = -180.0  # the cluster's clock is three minutes behind this machine's
    small_cluster(apiserver)
    live = Live(apiserver)
    lives.append(live)
    web = apiserver.get("Pod", "web", "default")
    assert web is not None
    apiserver.hold_lists()
    apiserver.expire_watches()  # every watch: 410, then a relist (held)
    fresh = Scheduler(apiserver, random.Random(4)).decide("huge")
    apiserver.create(  # a failure ten minutes old by the cluster's clock
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "web.old", "namespace": "default"},
            "involvedObject": {
                "kind": "Pod",
                "namespace": "default",
                "name": "web",
                "uid": web["metadata"]["uid"],
            },
            "reason": "FailedScheduling",
            "message": "0/3 nodes are available: 3 Insufficient cpu.",
            "type": "Warning",
            "reportingComponent": "default-scheduler",
            "eventTime": _iso(time.time() - 180 - 600),
        }
    )
    apiserver.release_lists()
    out = live.next(1)
    assert (out.trigger.kind, out.trigger.pod, out.trigger.message, out.agreement) == (
        "failed",
        "default/huge",
        fresh.message,
        "match",
    )
    assert out.trigger.gap and out.trigger.source == "event"
    health = wait_until(lambda: (h := live.watcher.health())["droppedEvents"] == 1 and h, what="the count")
    found = re.fullmatch(
        r"FailedScheduling default/web: (\d+)s old by the cluster's clock when a relist found it "
        r"\(limit 120s\)",
        health["lastDropped"],
    )
    # ten minutes, plus the time from its creation to the relist, less the Date header's fraction
    assert found is not None and 599 <= int(found.group(1)) <= 660, health["lastDropped"]
    live.quiet()
    assert len(live.sink.outcomes) == 1


def test_the_reconnect_backoff_starts_afresh_once_a_watch_delivers_again(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    small_cluster(apiserver)
    live = Live(apiserver)
    lives.append(live)
    pods = next(r for r in live.watcher.reflectors if r.stream.name == "Pod")
    for i in range(4):
        apiserver.wait_for_watches(1, "pods")
        before = pods.health.reconnects
        apiserver.drop_connections()
        wait_until(
            lambda before=before: pods.health.reconnects > before and pods.health.state == "watching",
            what="the watch back",
        )
        # the delay waited was the first step of the backoff, every time
        assert pods.backoff.delay == FAST.backoff_initial
        apiserver.create(pod(f"p{i}", cpu="100m"))
        wait_until(
            lambda i=i: live.watcher.mirror.get("Pod", ("default", f"p{i}")) is not None, what="the pod"
        )


def test_a_stopped_watchers_health_says_every_stream_stopped(
    apiserver: TestApiServer, lives: list[Live]
) -> None:
    small_cluster(apiserver)
    live = Live(apiserver)
    live.watcher.stop()
    health = live.watcher.health()
    assert health["status"] == "stopped"
    assert {s["state"] for s in health["streams"]} == {"stopped"}
    assert all(s["retryAt"] is None for s in health["streams"])


# every fault in at least two runs, each skew in one; then faults drawn from the seed; the timing
# always drawn from the seed
PLANS: dict[int, list[str]] = {
    1: ["events-first", "expired", "restart", "pods-first"],
    2: ["pods-first", "nodes-late", "restart", "dropped", "expired"],
    3: ["restart", "events-first", "nodes-late", "expired", "dropped"],
}


def test_the_plans_cover_every_fault_and_skew() -> None:
    assert {f for plan in PLANS.values() for f in plan} == set(FAULTS)
    assert {SKEWS[seed % len(SKEWS)] for seed in PLANS} == set(SKEWS)


@pytest.mark.parametrize("seed", range(1, 7))
def test_faulty_histories_store_every_decision_once_in_order_with_the_right_agreement(seed: int) -> None:
    run = play(seed, plan=PLANS.get(seed))
    assert len(run.decisions) >= 10
    assert {d.agreement for d in run.decisions} >= {"match"}
    assert check(run) == [], (run.faults, run.skew)
    assert run.right() == len(run.decisions)
    health: Any = run.health
    assert health["failures"] == 0 and health["droppedEvents"] == 0
