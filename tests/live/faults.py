"""Live mode under faults: a scripted scheduler decides in the stand-in API server while the script
breaks the watches (an event watch back before the pod watch and the reverse, a node added while
the nodes' watch is away, an API-server restart in the middle of a burst of decisions, 410 Gone
during a burst, dropped connections, a cluster clock three minutes off),
with random timing from a seeded RNG; a ``ClusterWatcher`` watches it. ``play`` returns the
decisions made and the outcomes stored; ``check`` says what differs (every binding and failure
once, in decision order, with the agreement the script meant).

``tests/live/test_faults.py`` plays a few seeds; ``python -m tests.live.faults --runs N`` plays many
and prints the figure the README quotes (decisions right of decisions made).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import random
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any

from schedviz.kube.kubeconfig import Source
from schedviz.kube.testing import TestApiServer
from schedviz.live import schedconfig
from schedviz.live.divergence import DIVERGED, MATCH, Outcome, replay_pod
from schedviz.live.runtime import ClusterWatcher, Options
from schedviz.live.triggers import BOUND, FAILED, Trigger
from tests.kubefixtures import FAST, namespace, poll, running

JSON = dict[str, Any]
FAULTS = ("events-first", "pods-first", "nodes-late", "restart", "expired", "dropped")
SKEWS = (0.0, -180.0, 180.0)  # the cluster's clock against this machine's, by run
# FAST's delays, but for pages of 50, slower backoffs and an API server down for a while (restart)
TIMING = replace(FAST, page_size=50, backoff_max=0.4, jitter=0.2, unavailable_retry=5.0)


@dataclass(frozen=True)
class Decision:
    kind: str  # bound, failed
    pod: str
    node: str | None
    message: str | None
    agreement: str  # what the replay must say: match, or diverged (a pod bound where the engine would not)

    def seen(self, out: Outcome) -> bool:
        t = out.trigger
        return (t.kind, t.pod, t.node, t.message) == (self.kind, self.pod, self.node, self.message)


@dataclass
class Run:
    seed: int
    skew: float
    faults: list[str] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    health: JSON = field(default_factory=dict)

    def right(self) -> int:
        """Decisions stored once, in their place in decision order, with the right agreement."""
        stored = [o for o in self.outcomes if any(d.seen(o) for d in self.decisions)]
        ok = 0
        for i, d in enumerate(self.decisions):
            mine = [o for o in self.outcomes if d.seen(o)]
            if (
                len(mine) == 1
                and i < len(stored)
                and stored[i] is mine[0]
                and mine[0].agreement == d.agreement
            ):
                ok += 1
        return ok


def check(run: Run) -> list[str]:
    """What is wrong with the run's outcomes ([] when every decision is right)."""
    problems = []
    for d in run.decisions:
        mine = [o for o in run.outcomes if d.seen(o)]
        if not mine:
            problems.append(f"lost: {d.kind} {d.pod}")
        elif len(mine) > 1:
            problems.append(f"stored {len(mine)} times: {d.kind} {d.pod}")
        elif mine[0].agreement != d.agreement:
            o = mine[0]
            problems.append(
                f"{d.kind} {d.pod}: {o.agreement} ({o.divergence}), not {d.agreement}: "
                f"{[e['message'] for e in o.explanations][:2]} {o.replayed.error}"
            )
    extra = [o for o in run.outcomes if not any(d.seen(o) for d in run.decisions)]
    problems += [f"not a decision: {o.trigger.kind} {o.trigger.pod} ({o.trigger.source})" for o in extra]
    order = [(o.trigger.kind, o.trigger.pod) for o in run.outcomes]
    want = [(d.kind, d.pod) for d in run.decisions]
    if not problems and order != want:
        first = next(i for i, (a, b) in enumerate(zip(order, want, strict=True)) if a != b)
        problems.append(
            f"out of decision order from #{first + 1}: {order[first : first + 3]} for {want[first : first + 3]}"
        )
    return problems


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


def _node(name: str, cpu: str, zone: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
        },
        "status": {
            "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(name: str, cpu: str, memory: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name.rsplit("-", 1)[0]}},
        "spec": {
            "schedulerName": "default-scheduler",
            "containers": [
                {"name": "c", "image": "app", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
            ],
        },
        "status": {"phase": "Pending"},
    }


class Scheduler:
    """Decides as SchedViz's engine would on the server's state (so the replay must match), except
    the pods it binds elsewhere on purpose (the replay must diverge)."""

    def __init__(self, srv: TestApiServer, rng: random.Random) -> None:
        self.srv = srv
        self.rng = rng
        self.config = schedconfig.build(None)
        self.decisions: list[Decision] = []
        self.made = 0
        self.nodes = 3  # node-0 .. node-3
        self.lock = threading.Lock()

    def objects(self) -> list[JSON]:
        kinds = {r.kind for r in self.srv.resources} - {"Event", "ConfigMap"}
        return [o for kind in sorted(kinds) for o in self.srv.objects(kind)]

    def new_pod(self, *, fits: bool = True) -> str:
        self.made += 1
        if fits:
            cpu = self.rng.choice(["100m", "200m", "300m", "500m"])
            memory = self.rng.choice(["128Mi", "256Mi", "512Mi"])
            name = f"{self.rng.choice(['web', 'api', 'job'])}-{self.made}"
        else:
            cpu, memory, name = "64", "1Gi", f"huge-{self.made}"
        self.srv.create(_pod(name, cpu, memory))
        return name

    def decide(self, name: str, *, elsewhere: bool = False) -> Decision:
        with self.lock:
            pod = self.srv.get("Pod", name, "default")
            assert pod is not None
            key = f"default/{name}"
            probe = Trigger(
                BOUND, "pod", key, "", None, None, "", 0, "", time.time(), None, False, key, pod_object=pod
            )
            rep = replay_pod(self.objects(), probe, self.config)
            rec = rep.record
            assert rec is not None, rep.error
            if rec.result == "Scheduled" and rec.selected_node:
                node, agreement = rec.selected_node, MATCH
                if elsewhere and rec.feasible is not None:
                    names = rep.node_names
                    tied = set(rec.tied_names(names))
                    others = [names[i] for i in rec.feasible.tolist() if names[i] not in tied]
                    if others:
                        node, agreement = self.rng.choice(others), DIVERGED
                self.srv.bind("default", name, node)
                d = Decision(BOUND, key, node, None, agreement)
            else:
                assert rec.message
                self.srv.fail_scheduling("default", name, rec.message)
                d = Decision(FAILED, key, None, rec.message, MATCH)
            self.decisions.append(d)
            return d


def build_cluster(srv: TestApiServer, rng: random.Random) -> Scheduler:
    """Four nodes and three pods running (bound by their creator): the scheduler that decides there."""
    srv.create(namespace("default"))
    for i, (cpu, zone) in enumerate([("4", "a"), ("4", "b"), ("8", "a"), ("8", "b")]):
        srv.create(_node(f"node-{i}", cpu, zone))
    sched = Scheduler(srv, rng)
    for _ in range(3):
        srv.bind("default", sched.new_pod(), f"node-{rng.randint(0, 3)}", event=False)
    return sched


def burst(sched: Scheduler, rng: random.Random, count: int, pause: float) -> None:
    """``count`` decisions, some about pods created just before (unknown to a lagging mirror)."""
    for _ in range(count):
        roll = rng.random()
        if roll < 0.2:
            name = sched.new_pod(fits=False)
        elif roll < 0.6:
            name = sched.new_pod()
        else:
            name = sched.new_pod()
            time.sleep(rng.uniform(0, pause))
        sched.decide(name, elsewhere=rng.random() < 0.15)
        time.sleep(rng.uniform(0, pause))


def break_watches(srv: TestApiServer, sched: Scheduler, rng: random.Random, fault: str, grace: float) -> None:
    """One fault, with its burst of decisions (``FAULTS``)."""
    n = rng.randint(2, 5)
    pause = rng.uniform(0.0, 0.05)
    if fault in ("events-first", "pods-first"):
        held = "pods" if fault == "events-first" else "events"
        srv.hold_watches(held)
        srv.drop_connections()
        burst(sched, rng, n, pause)
        time.sleep(rng.uniform(0.0, 3 * grace))  # past the event's grace, often
        srv.release_watches(held)
    elif fault == "nodes-late":
        srv.hold_watches("nodes")
        srv.drop_connections()
        sched.nodes += 1  # a node the pods' and events' watches speak of before the nodes' watch
        srv.create(_node(f"node-{sched.nodes}", "16", "c"))
        burst(sched, rng, n, pause)
        time.sleep(rng.uniform(0.0, 3 * grace))
        srv.release_watches("nodes")
    elif fault == "restart":
        burst(sched, rng, rng.randint(0, 2), pause)
        down = threading.Thread(target=srv.restart, kwargs={"down_for": rng.uniform(0.05, 0.6)})
        down.start()
        burst(sched, rng, n, pause)  # while it restarts, and after
        down.join()
    elif fault == "expired":
        hold = rng.random() < 0.5
        burst(sched, rng, rng.randint(0, 2), pause)
        if hold:
            srv.hold_lists()  # the relists wait: the burst is found by them, not by the watches
        srv.expire_watches()
        burst(sched, rng, n, pause)
        if hold:
            time.sleep(rng.uniform(0.0, 2 * grace))
            srv.release_lists()
    elif fault == "dropped":
        burst(sched, rng, rng.randint(0, 2), pause)
        srv.drop_connections()
        burst(sched, rng, n, pause)
    time.sleep(rng.uniform(0.0, 0.3))


def play(
    seed: int,
    *,
    faults: int = 4,
    plan: list[str] | None = None,
    skew: float | None = None,
    catch_up: float = 20.0,
) -> Run:
    """One run: a small cluster, then ``faults`` faults (``plan``, or chosen by ``seed``) each with its
    burst of decisions; the timing is drawn from ``seed``."""
    rng = random.Random(seed)
    run = Run(seed, SKEWS[seed % len(SKEWS)] if skew is None else skew)
    watcher: ClusterWatcher | None = None
    with running(TestApiServer(token=f"fault-{seed}", clock_skew=run.skew)) as srv:
        try:
            sched = build_cluster(srv, rng)
            sink = MemorySink()
            grace = 0.3
            options = Options(
                timing=TIMING, settle=0.02, event_grace=grace, catch_up=catch_up, explain_checks=None, seed=seed
            )
            watcher = ClusterWatcher(
                f"faults-{seed}",
                Source("kubeconfig", srv.kubeconfig()).client(),
                lambda _: schedconfig.build(None),
                sink,
                options=options,
            )
            watcher.start()
            if not poll(lambda: watcher is not None and watcher.health()["status"] == "watching", 20, 0.02):
                raise AssertionError(f"seed {seed}: the watcher never synced: {watcher.health()}")
            burst(sched, rng, 2, 0.02)
            for fault in plan or [rng.choice(FAULTS) for _ in range(faults)]:
                run.faults.append(fault)
                break_watches(srv, sched, rng, fault, grace)
            burst(sched, rng, 2, 0.02)
            run.decisions = list(sched.decisions)
            w = watcher
            poll(lambda: len(sink.outcomes) >= len(run.decisions) and w.idle(), catch_up + 15, 0.02)
            time.sleep(grace + 0.1)  # anything still to come (a second copy) comes now
            poll(w.idle, 5, 0.02)
            with sink.lock:
                run.outcomes = list(sink.outcomes)
            run.health = w.health()
        finally:
            if watcher is not None:
                watcher.stop()
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1, help="the first run's seed (the others follow)")
    parser.add_argument("--faults", type=int, default=4, help="faults per run")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # the reconnections' warnings are the point, not news
    os.environ.setdefault("SCHEDVIZ_CLUSTER_HOSTS", "127.0.0.1,localhost,::1")
    right = made = clean = 0
    started = time.monotonic()
    for seed in range(args.seed, args.seed + args.runs):
        run = play(seed, faults=args.faults)
        problems = check(run)
        right += run.right()
        made += len(run.decisions)
        clean += not problems
        print(
            f"seed {seed}: skew {run.skew:+.0f}s, {', '.join(run.faults)}: "
            f"{run.right()}/{len(run.decisions)} right"
            + (f"; {'; '.join(problems[:3])}" if problems else ""),
            flush=True,
        )
    print(
        f"{right} of {made} decisions right in {args.runs} runs ({clean} runs entirely right), "
        f"{time.monotonic() - started:.0f}s"
    )
    return 0 if right == made else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
