"""The replay budget (engine/budget.py): a cycle past its limit ends as an Error with the reason and
the replay goes on, the engine's state as it was before the cycle; Budget.stop ends a replay
mid-cycle; building the scheduler is bounded too; the interrupt never lands outside a region.

Limits are tiny (tens of milliseconds) and the plugins loop on purpose; no test asserts that anything
was fast, only, generously, that a stopped replay did not wait for its plugin's safety time."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from schedviz.cli import main
from schedviz.engine import load_config
from schedviz.engine.budget import (
    Budget,
    Interrupted,
    ReplayStopped,
    WorkLimitExceeded,
    interruptible,
    uninterruptible,
)
from schedviz.engine.cluster import ClusterState
from schedviz.engine.loader import load_objects
from schedviz.engine.runtime import registry
from schedviz.engine.runtime.replay import Replay, ReplayOptions
from schedviz.engine.trace import CycleRecord

from . import spin_plugins
from .builders import node, pod

LIMIT = 0.25  # far above a normal cycle here, even on a busy machine


@pytest.fixture(autouse=True)
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(registry, "_extra", {})
    monkeypatch.setattr(registry, "_entry_points", None)
    monkeypatch.delenv(registry.ENV_VAR, raising=False)
    with spin_plugins.registered():
        yield


def replay(
    objects: list[dict[str, Any]], cfg: dict[str, Any] | None, budget: Budget | None
) -> tuple[Replay, list[CycleRecord]]:
    snap = load_objects(objects, None, "test")
    config = load_config(cfg) if cfg is not None else None
    rp = Replay(snap, config, ReplayOptions(budget=budget))
    return rp, list(rp.cycles())


def cluster_state(c: ClusterState) -> Any:
    """Everything placements change: where each pod is, each node's pods in order, the sums."""
    return (
        dict(c.pod_node),
        [[p.uid for p in on] for on in c.pods_on],
        {r: c.requested(r).tolist() for r in c.resource_names()},
        c.pod_count.tolist(),
        c.nonzero_cpu.tolist(),
        sorted((g.namespace, sorted(g.labels.items()), sorted(p.uid for p in g.pods)) for g in c.groups()),
    )


def three_nodes() -> list[dict[str, Any]]:
    return [node(f"n{i}", cpu="4", labels={"topology.kubernetes.io/zone": f"z{i}"}) for i in range(3)]


def test_a_cycle_past_the_limit_ends_as_an_error_and_the_next_pod_is_replayed_normally() -> None:
    pods = [
        pod("stuck", cpu="1", labels={"spin": "filter"}, created="2026-01-01T00:00:01Z"),
        pod("next", cpu="1", created="2026-01-01T00:00:02Z"),
    ]
    with Budget(LIMIT, setting="TEST_LIMIT", setup_seconds=None, setup_setting="") as budget:
        rp, recs = replay(three_nodes() + pods, spin_plugins.config(), budget)
    stuck, nxt = recs
    msg = "the cycle was stopped after 0.25 s (TEST_LIMIT)"
    assert (stuck.pod, stuck.result, stuck.message, stuck.error) == ("default/stuck", "Error", msg, msg)
    assert stuck.selected_node is None
    last = stuck.stages[-1]
    assert (last.point, last.plugin, last.code, last.reason) == ("Filter", spin_plugins.FILTER, "Error", msg)
    assert last.details == {"stopped": True, "limitSeconds": LIMIT}
    assert last.duration_micros >= LIMIT * 1e6 * 0.9
    assert spin_plugins.spins_done == []  # the loop itself was stopped
    # the next pod's cycle is the one it has when the stuck pod is not there at all
    _, alone = replay(three_nodes() + pods[1:], spin_plugins.config(), None)
    assert nxt.result == alone[0].result == "Scheduled"
    assert nxt.selected_node == alone[0].selected_node
    assert nxt.start_index == alone[0].start_index
    assert np.array_equal(nxt.evaluation_order, alone[0].evaluation_order)
    assert rp.cluster.node_of(rp.cluster.pods["uid-default-next"]) is not None
    assert "uid-default-stuck" not in rp.cluster.pod_node


def test_a_cycle_stopped_in_score_puts_the_start_index_back() -> None:
    nodes = [node(f"n{i}", cpu="4") for i in range(120)]  # over 100: the search stops early
    pods = [
        pod("stuck", cpu="1", labels={"spin": "score"}, created="2026-01-01T00:00:01Z"),
        pod("next", cpu="1", created="2026-01-01T00:00:02Z"),
    ]
    cfg = spin_plugins.config(filter=False, score=True)
    with Budget(LIMIT, setting="TEST_LIMIT", setup_seconds=None, setup_setting="") as budget:
        _, (stuck, nxt) = replay(nodes + pods, cfg, budget)
    assert stuck.result == "Error"
    assert (stuck.stages[-1].point, stuck.stages[-1].plugin) == ("Score", spin_plugins.SCORE)
    assert stuck.feasible is not None and len(stuck.feasible) == 100  # Filter ran, Score did not end
    _, alone = replay(nodes + pods[1:], cfg, None)
    assert nxt.start_index == alone[0].start_index == 0
    assert nxt.selected_node == alone[0].selected_node


@pytest.mark.parametrize("limit", [0.01, 0.03, 0.1, 0.3])
def test_a_preemption_stopped_mid_dry_run_leaves_the_cluster_as_it_was(limit: float) -> None:
    """A node full of low-priority pods: DefaultPreemption's search takes every one off and puts
    them back one by one. Stopped anywhere in there, the cluster is as before the cycle (each node's
    pods in the same order), nobody is evicted or nominated, and the next pod goes on normally."""
    objects: list[dict[str, Any]] = [node("full", cpu="100", pods="100000"), node("small", cpu="1")]
    objects += [
        pod(f"low-{i}", node_name="full", cpu="20m", priority=0, labels={"app": f"a{i % 3}"})
        for i in range(3000)
    ]
    objects += [
        pod("preemptor", cpu="100", priority=1000, created="2026-01-01T00:00:01Z"),
        pod("next", cpu="100m", created="2026-01-01T00:00:02Z"),
    ]
    snap = load_objects(objects, None, "test")
    with Budget(limit, setting="TEST_LIMIT", setup_seconds=None, setup_setting="") as budget:
        rp = Replay(snap, None, ReplayOptions(budget=budget))
        before = cluster_state(rp.cluster)
        states = []
        recs = []
        for rec in rp.cycles():
            recs.append(rec)
            states.append(cluster_state(rp.cluster))
    preemptor, nxt = recs
    assert preemptor.result == "Error", preemptor.message
    assert preemptor.message == f"the cycle was stopped after {limit:g} s (TEST_LIMIT)"
    # stopped in the search (with the shortest limits, maybe before: the first cycle builds caches)
    assert preemptor.stages[-1].code == "Error"
    if limit >= 0.1:
        assert (preemptor.stages[-1].point, preemptor.stages[-1].plugin) == ("PostFilter", "DefaultPreemption")
    assert preemptor.evictions == [] and preemptor.nominated_node is None
    assert states[0] == before
    assert rp.nominator.status_of(rp.cluster.pods.get("uid-default-preemptor") or snap.pending[0]) in (None, "")
    if limit >= 0.1:
        assert nxt.result == "Scheduled" and nxt.selected_node in ("full", "small")
    else:  # so short a limit may stop the next cycle too, on a busy machine
        assert nxt.result in ("Scheduled", "Error")


def test_stop_ends_the_replay_mid_cycle() -> None:
    pods = [
        pod("stuck", labels={"spin": "filter"}, created="2026-01-01T00:00:01Z"),
        pod("never", created="2026-01-01T00:00:02Z"),
    ]
    snap = load_objects(three_nodes() + pods, None, "test")
    cfg = load_config(spin_plugins.config())
    with Budget(None) as budget:  # no time limit: only the stop ends the cycle
        rp = Replay(snap, cfg, ReplayOptions(budget=budget))
        timer = threading.Thread(
            target=lambda: spin_plugins.entered.wait(10) and budget.stop("cancelled by the test")
        )
        timer.start()
        t0 = time.monotonic()
        seen: list[CycleRecord] = []
        with pytest.raises(ReplayStopped) as info:
            for rec in rp.cycles():
                seen.append(rec)
        timer.join()
    assert info.value.reason == "cancelled by the test"
    assert seen == []
    assert time.monotonic() - t0 < spin_plugins.SAFETY_SECONDS / 2
    assert spin_plugins.spins_done == []


def test_a_poll_stops_the_replay() -> None:
    asked = threading.Event()

    def poll() -> str | None:
        if spin_plugins.entered.is_set():
            asked.set()
            return "cancelled by request"
        return None

    pods = [pod("stuck", labels={"spin": "filter"})]
    with Budget(None, poll=poll, poll_seconds=0.02) as budget, pytest.raises(ReplayStopped):
        replay(three_nodes() + pods, spin_plugins.config(), budget)
    assert asked.is_set() and spin_plugins.spins_done == []


def test_building_the_scheduler_is_bounded() -> None:
    budget = Budget(60, setting="TEST_LIMIT", setup_seconds=LIMIT, setup_setting="TEST_SETUP")
    with budget, pytest.raises(WorkLimitExceeded) as info:
        replay([*three_nodes(), pod("p")], spin_plugins.config(slow_start=True), budget)
    assert str(info.value) == "building the scheduler was stopped after 0.25 s (TEST_SETUP)"


def test_hundreds_of_profiles_are_bounded_by_the_setup_limit() -> None:
    cfg = spin_plugins.config(filter=False, profiles=400)
    budget = Budget(60, setting="TEST_LIMIT", setup_seconds=0.02, setup_setting="TEST_SETUP")
    with budget, pytest.raises(WorkLimitExceeded) as info:
        replay([*three_nodes(), pod("p")], cfg, budget)
    assert str(info.value) == "building the scheduler was stopped after 0.02 s (TEST_SETUP)"


@pytest.mark.parametrize(
    "spec",
    [
        {"tolerations": [{"key": f"k{i}", "operator": "Exists", "effect": "NoSchedule"} for i in range(10_000)]},
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": [f"v{i}"]}]}
                            for i in range(10_000)
                        ]
                    }
                }
            }
        },
    ],
    ids=["10000-tolerations", "10000-node-affinity-terms"],
)
def test_big_pods_end_within_the_cycle_limit(spec: dict[str, Any]) -> None:
    """However long a pod's cycle would take, it ends: normally, or stopped with the reason."""
    nodes = [node(f"n{i}", labels={"zone": f"v{i}"}, taints=[{"key": "t", "effect": "NoSchedule"}]) for i in range(300)]
    pods = [pod("big", created="2026-01-01T00:00:01Z", **spec), pod("next", created="2026-01-01T00:00:02Z")]
    with Budget(0.001, setting="TEST_LIMIT", setup_seconds=None, setup_setting="") as budget:
        _, recs = replay(nodes + pods, None, budget)
    big = recs[0]
    assert big.result in ("Scheduled", "Unschedulable", "Error")
    if big.result == "Error":
        assert big.message == "the cycle was stopped after 0.001 s (TEST_LIMIT)"
    assert [r.pod for r in recs] == ["default/big", "default/next"]


def test_the_interrupt_never_lands_inside_a_step() -> None:
    budget = Budget(LIMIT)
    done = []
    try:
        budget.begin()
        with pytest.raises(Interrupted):  # noqa: SIM117 - the order of the blocks is the point
            with interruptible("Filter", "test"):
                with uninterruptible():
                    end = time.monotonic() + 4 * LIMIT  # past the deadline inside the step
                    while time.monotonic() < end:
                        pass
                    done.append("step")
                end = time.monotonic() + spin_plugins.SAFETY_SECONDS  # the region goes on: stopped
                while time.monotonic() < end:
                    pass
                done.append("region")
        assert done == ["step"]
    finally:
        budget.end()
        budget.close()


def test_nothing_is_interrupted_outside_a_region() -> None:
    budget = Budget(LIMIT)
    try:
        budget.begin()
        with interruptible("Filter", "test"):
            pass
        end = time.monotonic() + 4 * LIMIT  # past the deadline, outside any region: no interrupt
        while time.monotonic() < end:
            pass
        with pytest.raises(Interrupted), interruptible("Score", "test"):  # entering one raises at once
            pytest.fail("the region ran")
    finally:
        budget.end()
        budget.close()
    end = time.monotonic() + 2 * LIMIT  # and nothing comes once the unit ended
    while time.monotonic() < end:
        pass


def test_without_a_budget_nothing_is_bounded() -> None:
    assert Budget(0).cycle_seconds is None
    with interruptible("Filter", "test"), uninterruptible():  # no unit under way: both do nothing
        pass


def test_the_command_line_bounds_cycles_when_asked(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    snap = tmp_path / "cluster.yaml"
    items = [
        *three_nodes(),
        pod("stuck", labels={"spin": "filter"}, created="2026-01-01T00:00:01Z"),
        pod("next", created="2026-01-01T00:00:02Z"),
    ]
    snap.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump(spin_plugins.config()))
    assert main(["replay", str(snap), "--config", str(cfg), "--cycle-timeout", "0.25", "--format", "json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    results = {c["pod"]: (c["result"], c.get("message")) for c in out["cycles"]}
    assert results["default/stuck"] == ("Error", "the cycle was stopped after 0.25 s (--cycle-timeout)")
    assert results["default/next"][0] == "Scheduled"
