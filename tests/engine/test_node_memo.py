"""ClusterState.memo_per_node against computing afresh, and the plugins that answer through it.

The memo keeps a function's value on every node and, when asked again, computes it only on the
nodes whose pods changed since (``cluster.changes``). These tests move pods on and off nodes in a
seeded random order, as cycles, preemptions and nominated pods do, and compare every answer with
the function computed from scratch.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from schedviz.engine import cluster as cluster_module
from schedviz.engine.cluster import ClusterState
from schedviz.engine.framework import CycleState
from schedviz.engine.framework.cycle_state import BARE_NODE_INFOS
from schedviz.engine.objects import Node, Pod
from schedviz.engine.plugins import imagelocality
from schedviz.engine.plugins.noderesources import balanced_allocation, fit

from .builders import container, node, pod, state_for


def _cluster(n: int = 12) -> ClusterState:
    nodes = [
        Node(
            node(
                f"n{i}",
                cpu=str(2 + i % 5),
                memory=f"{4 + i % 3}Gi",
                pods=str(3 + i % 4),
                images=[([f"registry.example/app:{i % 3}"], 300 * 1024 * 1024)] if i % 2 else None,
            )
        )
        for i in range(n)
    ]
    return ClusterState(nodes)


def _pods(count: int) -> list[Pod]:
    return [
        Pod(pod(f"p{i}", cpu=f"{100 + 150 * (i % 7)}m", memory=f"{256 * (1 + i % 5)}Mi"), i)
        for i in range(count)
    ]


def _moves(c: ClusterState, pods: list[Pod], rng: random.Random, steps: int) -> None:
    """``steps`` random placements and removals."""
    for _ in range(steps):
        placed = [p for p in pods if c.node_of(p) is not None]
        if placed and rng.random() < 0.35:
            c.remove_pod(rng.choice(placed))
        else:
            free = [p for p in pods if c.node_of(p) is None]
            if free:
                c.add_pod(rng.choice(free), rng.randrange(c.n))


def test_the_memo_answers_what_computing_afresh_answers() -> None:
    rng = random.Random(7)
    c = _cluster()
    pods = _pods(40)
    computed: list[int] = []  # how many nodes each of the memo's computations covered

    def free_cpu(at: np.ndarray) -> np.ndarray:
        return c.alloc("cpu")[at] - c.requested("cpu")[at] - 10 * c.pod_count[at]

    def counted(at: np.ndarray) -> np.ndarray:
        computed.append(len(at))
        return free_cpu(at)

    everything = np.arange(c.n, dtype=np.int64)
    for step in range(60):
        moves = rng.randrange(0, 4)
        _moves(c, pods, rng, moves)
        nodes = np.sort(rng.sample(range(c.n), rng.randrange(1, c.n + 1))).astype(np.int64)
        done = len(computed)
        got = c.memo_per_node(("free", 1), nodes, counted)
        assert got.tolist() == free_cpu(nodes).tolist(), step
        # after the first answer, only the nodes whose pods changed are computed again
        assert step == 0 or sum(computed[done:]) <= moves
        assert c.memo_per_node(("free", 1), everything, counted).tolist() == free_cpu(everything).tolist()
    assert computed[0] == c.n and sum(computed[1:]) < 60 * 3


def test_the_memo_starts_afresh_past_its_bound_and_after_a_release(monkeypatch: pytest.MonkeyPatch) -> None:
    c = _cluster(4)
    monkeypatch.setattr(cluster_module, "NODE_MEMO_LIMIT", 3)
    nodes = np.arange(4, dtype=np.int64)
    for k in range(7):
        assert c.memo_per_node(("k", k), nodes, lambda at, k=k: at * k).tolist() == [0, k, 2 * k, 3 * k]
    assert 0 < len(c.caches["cluster/per-node memo"]) <= 3
    p = _pods(1)[0]
    c.add_pod(p, 2)
    count = c.memo_per_node("pods", nodes, lambda at: c.pod_count[at].copy())
    assert count.tolist() == [0, 0, 1, 0]
    c.release()  # the changes are forgotten with the caches
    assert c.memo_per_node("pods", nodes, lambda at: c.pod_count[at].copy()).tolist() == [0, 0, 1, 0]


def test_a_what_if_that_writes_allocatable_is_not_answered_from_before_it() -> None:
    c = _cluster(3)
    nodes = np.arange(3, dtype=np.int64)

    def alloc(at: np.ndarray) -> np.ndarray:
        return c.alloc("cpu")[at].copy()

    before = c.memo_per_node("alloc", nodes, alloc).tolist()
    with c.node_memo_suspended():
        c.alloc("cpu")[1] += 5000
        assert c.memo_per_node("alloc", nodes, alloc).tolist() == [before[0], before[1] + 5000, before[2]]
        c.alloc("cpu")[1] -= 5000
    assert c.memo_per_node("alloc", nodes, alloc).tolist() == before


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
def test_resource_scores_and_fit_through_the_memo_are_the_plain_ones(
    strategy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NodeResourcesFit (Filter and Score), NodeResourcesBalancedAllocation and ImageLocality,
    asked cycle after cycle while pods move, against the same plugins with the memo bypassed."""
    args: dict[str, object] = {"scoringStrategy": {"type": strategy}}
    if strategy == "RequestedToCapacityRatio":
        args["scoringStrategy"] = {
            "type": strategy,
            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]},
        }
    rng = random.Random(11)
    c = _cluster(10)
    _, handle = state_for(c)
    plugins = (
        fit.Fit(args, handle),
        balanced_allocation.BalancedAllocation({}, handle),
        imagelocality.ImageLocality({}, handle),
    )
    incoming = [
        Pod(
            pod(
                f"in{i}",
                containers=[container(cpu=f"{300 * (1 + i % 4)}m", memory="1Gi", image=f"registry.example/app:{i % 3}")],
            ),
            100 + i,
        )
        for i in range(4)
    ]
    pods = _pods(30)

    def answers(plain: bool, nodes: np.ndarray, p: Pod, bare: np.ndarray | None) -> list[object]:
        with monkeypatch.context() as m:
            if plain:
                m.setattr(ClusterState, "memo_per_node", lambda self, key, at, compute: compute(at))
            state = CycleState(c)
            if bare is not None:
                state.write(BARE_NODE_INFOS, bare)
            f, b, img = plugins
            _, status = f.pre_filter(state, p)
            assert status.is_success()
            v = f.filter(state, p, nodes)
            f.pre_score(state, p, nodes)
            b.pre_score(state, p, nodes)
            return [
                v.codes.tolist(),
                [v.reasons[r] if r >= 0 else () for r in v.reason_ids.tolist()],
                f.score(state, p, nodes).tolist(),
                b.score(state, p, nodes).tolist(),
                img.score(state, p, nodes).tolist(),
            ]

    rejected = 0
    for step in range(40):
        _moves(c, pods, rng, rng.randrange(1, 4))
        nodes = np.sort(rng.sample(range(c.n), rng.randrange(1, c.n + 1))).astype(np.int64)
        p = rng.choice(incoming)
        bare = None
        if step % 9 == 8:  # NodeInfos a filter extender rebuilt: the plain path, not the memo
            bare = np.zeros(c.n, dtype=bool)
            bare[nodes[:1]] = True
        fast = answers(False, nodes, p, bare)
        assert fast == answers(True, nodes, p, bare), step
        rejected += sum(1 for code in fast[0] if code)  # type: ignore[union-attr]
    assert rejected  # full nodes were met, with their reasons
