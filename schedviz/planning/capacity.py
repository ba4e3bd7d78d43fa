"""Capacity: how many more copies of a pod the scheduler would place, where, and why not one more.

The copies are created as a Deployment's ReplicaSet creates them: named ``<generateName or name->``
plus five generated characters, created after every object of the snapshot (so they queue after the
snapshot's pending pods of their priority, in the order they were created), each scheduled seeing the
ones before. The answer is a replay: the snapshot plus N+1 copies as pending pods, replayed under the
configuration, stops at the first copy that is not placed; N copies were. Preemption is a dry run
(a copy that could only fit by evicting lower-priority pods does not fit: the message says what
preemption would have done).

Several pod specs (an application): ``round-robin`` creates one copy of each spec per round (a, b, a,
b, ...) and stops at the first copy that does not fit: the application grows as a unit. ``in-order``
fills the cluster with copies of the first spec, then of the second on top of them, and so on: each
spec stops at its own first failure.

The number of copies replayed at once starts from an upper bound (what NodeResourcesFit's arithmetic
allows on the schedulable nodes, plus one) and doubles while every copy fits (a configuration without
NodeResourcesFit, pods requesting nothing), up to ``max_replicas``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from schedviz.engine import InputError, ReplayOptions, SchedulerConfig, Snapshot
from schedviz.engine.budget import Budget
from schedviz.engine.objects import Pod
from schedviz.engine.quantity import PODS
from schedviz.engine.runtime.replay import DRY_RUN, Replay

from .base import (
    PLACED,
    derive,
    generated_name,
    load_one,
    new_pending_pod,
    plan_start,
    usage,
    verdicts,
    zone_of,
)

ROUND_ROBIN = "round-robin"
IN_ORDER = "in-order"
ORDERS = (ROUND_ROBIN, IN_ORDER)
DEFAULT_MAX = 100_000
# the largest first batch taken from the resource bound; beyond it the batch doubles from here
BOUND_BATCH = 100_000
FIRST_BATCH = 1024

STOP_UNSCHEDULABLE = "unschedulable"
STOP_MAX = "max"


@dataclass
class PodSpec:
    """A pod to copy: where it came from (``source``), its object, the prefix of its copies' names."""

    source: str
    raw: dict[str, Any]

    @property
    def namespace(self) -> str:
        return str((self.raw.get("metadata") or {}).get("namespace") or "default")

    @property
    def prefix(self) -> str:
        md = self.raw.get("metadata") or {}
        gen = md.get("generateName")
        return str(gen) if gen else f"{md.get('name')}-"

    @property
    def name(self) -> str:
        return f"{self.namespace}/{(self.raw.get('metadata') or {}).get('name')}"


def pod_spec(raw: dict[str, Any], source: str) -> PodSpec:
    """A pod object to copy (already validated): it must not be bound to a node."""
    if (raw.get("spec") or {}).get("nodeName"):
        md = raw.get("metadata") or {}
        raise InputError(
            "a pod to copy must not be bound to a node (remove spec.nodeName)",
            source=source,
            obj=f"Pod {md.get('name')}",
            field="spec.nodeName",
        )
    return PodSpec(source, raw)


def read_pod_spec(path: str) -> PodSpec:
    """The pod of a file that holds exactly one Pod (else InputError naming the file)."""
    return pod_spec(load_one(path, "Pod"), path)


@dataclass
class Stop:
    """Why the copies stopped: ``reason`` "unschedulable" (the copy ``pod`` was not placed: its
    ``result`` and kube-scheduler's ``message``, and per evaluated node its Filter verdict) or "max"
    (``max_replicas`` copies all fit)."""

    reason: str
    pod: str | None = None
    spec: str | None = None
    result: str | None = None
    message: str | None = None
    nodes: dict[str, str] = field(default_factory=dict)
    seq: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "pod": self.pod,
            "spec": self.spec,
            "result": self.result,
            "message": self.message,
            "nodes": self.nodes,
        }


@dataclass
class SpecCapacity:
    spec: PodSpec
    replicas: int = 0
    per_node: dict[str, int] = field(default_factory=dict)
    per_zone: dict[str, int] = field(default_factory=dict)
    pods: list[tuple[str, str]] = field(default_factory=list)  # (copy, node) in placement order
    stop: Stop | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.spec.name,
            "source": self.spec.source,
            "replicas": self.replicas,
            "perNode": self.per_node,
            "perZone": self.per_zone,
            "stop": self.stop.to_dict() if self.stop else None,
        }


@dataclass
class CapacityPlan:
    """The answer. ``snapshot``: the snapshot with every copy the answer replayed (the N placed and
    the one that was not) as pending pods, in creation order; replaying it under the same
    configuration with preemption as a dry run gives the same placements."""

    order: str
    max_replicas: int
    specs: list[SpecCapacity]
    snapshot: Snapshot
    before: dict[str, Any]
    after: dict[str, Any]
    batches: list[int] = field(default_factory=list)

    @property
    def replicas(self) -> int:
        return sum(s.replicas for s in self.specs)

    @property
    def stop(self) -> Stop | None:
        """The first spec's stop that is not "max" (round-robin has one), else the first's."""
        stops = [s.stop for s in self.specs if s.stop is not None]
        return next((s for s in stops if s.reason == STOP_UNSCHEDULABLE), stops[0] if stops else None)

    def per_node(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.specs:
            for node, n in s.per_node.items():
                out[node] = out.get(node, 0) + n
        return dict(sorted(out.items()))

    def per_zone(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.specs:
            for zone, n in s.per_zone.items():
                out[zone] = out.get(zone, 0) + n
        return dict(sorted(out.items()))

    def to_dict(self, *, utilization: bool = False) -> dict[str, Any]:
        stop = self.stop
        out: dict[str, Any] = {
            "kind": "CapacityPlan",
            "replicas": self.replicas,
            "perNode": self.per_node(),
            "perZone": self.per_zone(),
            "stop": stop.to_dict() if stop else None,
            "order": self.order,
            "max": self.max_replicas,
            "pods": [s.to_dict() for s in self.specs],
        }
        if utilization:
            out["utilization"] = {"before": self.before, "after": self.after}
        return out


def resource_bound(snapshot: Snapshot, pod: Pod) -> int:
    """How many copies of ``pod`` NodeResourcesFit's arithmetic lets the schedulable nodes take at
    most (free pod slots and every requested resource), ignoring every other rule."""
    cluster = snapshot.cluster()
    total = 0
    requests = {r: v for r, v in pod.requests.items() if v > 0 and r != PODS}
    slots = cluster.alloc(PODS) - cluster.requested(PODS)
    for i in range(cluster.n):
        if cluster.unschedulable[i]:
            continue
        fit = int(slots[i])
        for r, v in requests.items():
            fit = min(fit, int(cluster.alloc(r)[i] - cluster.requested(r)[i]) // v)
        total += max(fit, 0)
    return total


class _Copies:
    """The copies of the specs in creation order, named once and for all."""

    def __init__(self, snapshot: Snapshot, specs: Sequence[PodSpec]) -> None:
        self.specs = specs
        self.created = plan_start(snapshot)
        self.taken = {p.key for p in snapshot.pods}
        self._made: list[list[dict[str, Any]]] = [[] for _ in specs]

    def copy(self, s: int, k: int) -> dict[str, Any]:
        made = self._made[s]
        while len(made) <= k:
            spec = self.specs[s]
            n = len(made)
            name = generated_name(spec.prefix, f"{spec.name}#{s}#{n}")
            attempt = 0
            while f"{spec.namespace}/{name}" in self.taken:
                attempt += 1
                name = generated_name(spec.prefix, f"{spec.name}#{s}#{n}#{attempt}")
            self.taken.add(f"{spec.namespace}/{name}")
            made.append(new_pending_pod(spec.raw, name, f"plan-{spec.namespace}-{name}", self.created))
        return made[k]


def capacity(
    snapshot: Snapshot,
    specs: Sequence[PodSpec],
    config: SchedulerConfig | None = None,
    *,
    max_replicas: int | None = None,
    order: str = ROUND_ROBIN,
    all_nodes: bool = False,
    budget: Budget | None = None,
) -> CapacityPlan:
    """How many copies of ``specs`` fit (see the module's docstring). ``budget`` bounds each cycle as
    a replay's (a copy whose cycle is stopped is an Error: the copies stop there)."""
    if not specs:
        raise InputError("at least one pod to copy is needed", field="--pod")
    if order not in ORDERS:
        raise InputError(f"unknown order {order!r}: round-robin or in-order", field="--order")
    limit = DEFAULT_MAX if max_replicas is None else max_replicas
    if limit < 0:
        raise InputError("must be 0 or more", field="--max")
    copies = _Copies(snapshot, specs)
    options = ReplayOptions(all_nodes=all_nodes, preemption=DRY_RUN, budget=budget)
    results = [SpecCapacity(s) for s in specs]
    batches: list[int] = []
    groups = [list(range(len(specs)))] if order == ROUND_ROBIN else [[s] for s in range(len(specs))]
    base = snapshot
    final_rp: Replay | None = None
    plan_pods: list[dict[str, Any]] = []
    for group in groups:
        rounds = _first_batch(base, [copies.copy(s, 0) for s in group], limit)
        while True:
            batches.append(rounds)
            order_of = [(s, k) for k in range(rounds) for s in group]
            raws = [copies.copy(s, k) for s, k in order_of]
            trial = derive(base, add_pods=raws)
            rp = Replay(trial, config, options)
            placed, stop, replayed = _fill(rp, raws, order_of, specs)
            if stop is not None or rounds >= limit:
                break
            rounds = min(limit, max(rounds * 2, rounds + 1))
        final_rp = rp
        where: dict[str, str] = {}
        for (s, _k), (key, node) in placed:
            where[key] = node
            r = results[s]
            r.replicas += 1
            r.pods.append((key, node))
            r.per_node[node] = r.per_node.get(node, 0) + 1
            zone = zone_of(trial.nodes[rp.cluster.index[node]])
            r.per_zone[zone] = r.per_zone.get(zone, 0) + 1
        for s in group:
            results[s].per_node = dict(sorted(results[s].per_node.items()))
            results[s].per_zone = dict(sorted(results[s].per_zone.items()))
            if stop is None:
                results[s].stop = Stop(STOP_MAX)
        if stop is not None:
            results[stop[0]].stop = stop[1]
        plan_pods.extend(raws[i] for i in sorted(replayed))
        if order == IN_ORDER:
            # the next spec fills the cluster on top of this one's copies, bound where they went
            bound = []
            for raw in raws:
                went = where.get(_key(raw))
                if went is not None:
                    bound.append({**raw, "spec": {**raw["spec"], "nodeName": went}})
            base = derive(base, add_pods=bound)
    assert final_rp is not None
    plan_snapshot = derive(snapshot, add_pods=plan_pods)
    return CapacityPlan(
        order=order,
        max_replicas=limit,
        specs=results,
        snapshot=plan_snapshot,
        before=usage(snapshot.cluster()),
        after=usage(final_rp.cluster),
        batches=batches,
    )


def _first_batch(snapshot: Snapshot, first: list[dict[str, Any]], limit: int) -> int:
    if limit == 0:
        return 0
    probe = derive(snapshot, add_pods=first)
    n = len(snapshot.pods)
    bound = min(resource_bound(snapshot, p) for p in probe.pods[n:])
    rounds = bound + 1 if bound < BOUND_BATCH else FIRST_BATCH
    return max(1, min(limit, rounds))


def _key(raw: dict[str, Any]) -> str:
    md = raw["metadata"]
    return f"{md.get('namespace') or 'default'}/{md['name']}"


def _fill(
    rp: Replay,
    raws: list[dict[str, Any]],
    order_of: list[tuple[int, int]],
    specs: Sequence[PodSpec],
) -> tuple[list[tuple[tuple[int, int], tuple[str, str]]], tuple[int, Stop] | None, set[int]]:
    """Replay until the first copy that is not placed. Returns the placed copies ((spec, k), (pod,
    node)) in the order they were placed, the stop (spec index, Stop) or None, and the indices of
    the copies replayed."""
    keys = {_key(raw): i for i, raw in enumerate(raws)}
    placed: list[tuple[tuple[int, int], tuple[str, str]]] = []
    replayed: set[int] = set()
    for rec in rp.cycles():
        rp.trace.cycles.clear()  # the answer needs no record but the stop's: memory stays flat
        if rec.kind != "Scheduling":
            continue
        i = keys.get(rec.pod)
        if i is None:
            continue
        replayed.add(i)
        s, _k = order_of[i]
        if rec.result in PLACED and rec.selected_node:
            placed.append((order_of[i], (rec.pod, rec.selected_node)))
        else:
            stop = Stop(
                STOP_UNSCHEDULABLE,
                pod=rec.pod,
                spec=specs[s].name,
                result=rec.result,
                message=rec.message or rec.error,
                nodes=verdicts(rec, rp.trace.node_names, rp.trace.reasons),
                seq=rec.seq,
            )
            return placed, (s, stop), replayed
        if len(replayed) == len(raws):
            break
    return placed, None, replayed
